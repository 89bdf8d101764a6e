#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# On a terminal attach redraws a live view with colour heatmaps; every line
# fits the terminal. Run under a pty made by script(1).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"
spawn_bg script -qfec "stty cols 80 rows 50; TERM=xterm-256color $CONNSCOPE attach -p $FX_PID_cli -i 0.3 -d 4" "$TMP/tty.out" >/dev/null
SCRIPT_PID=$BG_PID
wait_for "grep -q 'connscope: tracing' '$TMP/tty.out'" 20 || fail attached "$(cat "$TMP/tty.out")"
assert_eq "$(fx_cmd cli "churn 20")" "churned 20" churned
wait_for "grep -q 'TIME_WAIT sockets by endpoint' '$TMP/tty.out'" 10 || fail live_heatmap "no heatmap drawn live"
wait "$SCRIPT_PID"
assert_eq "$?" 0 exit_status
assert_eq "$(grep -c $'\033\[H\033\[2J' "$TMP/tty.out" | awk '$1 >= 1 {print "yes"}')" yes redrawn_in_place
assert_eq "$(grep -c $'\033\[38;5;' "$TMP/tty.out" | awk '$1 >= 1 {print "yes"}')" yes colour_ramp
assert_eq "$(grep -c '█' "$TMP/tty.out" | awk '$1 >= 1 {print "yes"}')" yes unicode_blocks
assert_eq "$(grep -c "^PID $FX_PID_cli (tcpfix)" "$TMP/tty.out")" 1 final_report
# Display width: drop escapes and CRs; wc -L counts UTF-8 display columns.
widest=$(grep -av '^Script ' "$TMP/tty.out" | sed -e $'s/\033\\[[0-9;]*[A-Za-z]//g' -e 's/\r//g' | LC_ALL=C.UTF-8 wc -L)
assert_eq "$((widest <= 80))" 1 "fits_80_columns (widest $widest)"
fx_stop cli; fx_stop srv
