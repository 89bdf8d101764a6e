#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# pid reuse: in a pid namespace the test makes, a followed child exits and
# a second child is made under the very same pid (clone3 set_tid, in every
# namespace). Books are per process (pid, start time): two rows, each with
# its own connections, neither merged into the other.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
port=$(free_port)
N1=3 N2=5
fx_start srv server -p "$port" || fail start server
fix_start pr unshare --pid --fork "$FIXTURES/pidreuse" -p "$port" -n $N1 -m $N2
fix_expect pr "ready *" 10 || { fail start "pidreuse did not start"; exit 0; }
parent=${FIX_LINE#ready }
J=$TMP/reuse.json
cs_attach "$J" "$TMP/reuse.err" -p "$parent" --children -i 0.2 -j ||
	{ fail attach "$(cat "$TMP/reuse.err")"; exit 0; }
fix_send pr go
fix_expect pr "@(reused|error)*" 20 || { fail reused "no reply from pidreuse"; exit 0; }
read -r word kid start1 start2 <<<"$FIX_LINE"
assert_eq "$word" reused pid_reused
wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $((N1 + N2)) closed $((N1 + N2)) open 0' ]" 20
# pidreuse returns after its report, and unshare with it.
wait_for "! _lib_pstate $pr_PID >/dev/null || [ \"\$(_lib_pstate $pr_PID)\" = Z ]" 10
cs_stop
rows=".processes[] | select(.pid == $kid)"
assert_eq "$(jqn "[$rows] | length" "$J")" 2 two_rows_one_pid
assert_eq "$(jqn "[$rows | .start_time_ticks] | sort | join(\" \")" "$J")" "$start1 $start2" \
	start_times_from_proc
assert_eq "$(jqn "$rows | select(.start_time_ticks == $start1) | .totals.connections_opened" "$J")" \
	$N1 first_process_own_connections
assert_eq "$(jqn "$rows | select(.start_time_ticks == $start2) | .totals.connections_opened" "$J")" \
	$N2 second_process_own_connections
assert_eq "$(jqn "[$rows | .exited] | all" "$J")" true both_exited
# The two children and the parent left the kernel's target map at exit.
assert_eq "$(jqn '.agent.targets_left_at_exit' "$J")" 3 targets_left_the_filter
fx_stop srv
