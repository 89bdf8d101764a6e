#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Connections made by threads are charged to their process (tgid).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
# The fixtures in a namespace of the test's own (fx_twns): the wait below
# is for their 40 TIME_WAIT, which resets could end early in ours.
fx_twns threads
port=$(fx_port)
fx_start srv server -p "$port" || fail start server
fix_start thr "${FX_WRAP[@]}" "$FIXTURES/threadfix" -p "$port" -t 4 -n 10
fix_expect thr "ready *" 10 || fail thr_start "no ready line"
cs_attach "$TMP/t.json" "$TMP/t.err" -p "$thr_PID" -j -i 0.5 || fail attach "$(cat "$TMP/t.err")"
fix_send thr go
fix_expect thr "done *" 30; assert_eq "$FIX_LINE" "done 40" threads_done
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted 40 closed 40 open 0' ]" 20
wait_for "[ \$(tw_on_port $port) -ge 40 ] && closes_done $port" 20 ||
	fail kernel_closed "kernel: $(tw_on_port "$port") TIME_WAIT"
cs_stop
p=".processes[] | select(.pid == $thr_PID)"
assert_eq "$(jq -r "$p | .totals.connections_opened" "$TMP/t.json")" 40 opened_by_threads
assert_eq "$(jq -r "$p | .totals.time_wait_entered" "$TMP/t.json")" 40 tw_by_threads
assert_eq "$(jq -r '.processes | length' "$TMP/t.json")" 1 one_process_not_per_thread
fx_stop srv
