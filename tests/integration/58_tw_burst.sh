#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A burst of TIME_WAIT while reconciles run (every 0.1 s): a reconcile must
# not forget the TIME_WAIT sockets entered while its own dump ran (the dump
# may walk past a socket before it turns TIME_WAIT, and the event arrives
# after), and the rings are drained while it dumps. Live TIME_WAIT charged
# to the client equals the namespace's own sock_diag count taken right
# after. In a network namespace of the test's own, with tcp_tw_reuse=0 so
# that no TIME_WAIT is taken over by a new connection meanwhile; the run
# stays well inside the 60 s a TIME_WAIT lives.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
fx_netns twburst
inns sysctl -qw net.ipv4.tcp_tw_reuse=0
FX_WRAP=(ip netns exec "$NS")
CS_WRAP=(ip netns exec "$NS")
ROUNDS=6 N=1000

fx_start srv server -p 8080 || { fail start/server "tcpfix server"; exit 1; }
fx_start cli client -p 8080 || { fail start/client "tcpfix client"; exit 1; }
# `run` for its interval lines (one a reconcile): each round of the burst
# is followed by a reconcile, however fast this machine churns (a fast one
# made all 6,000 between two 0.1 s intervals). Its command is a waiter
# that ends when the test says, and the run with it.
S=$TMP/b.ndjson
intervals() { [ -e "$S" ] && wc -l <"$S" || echo 0; }
run_until_told "$TMP/b.json" "$TMP/b.err" "${CS_WRAP[@]}" "$CONNSCOPE" run -p "$FX_PID_cli,$FX_PID_srv" \
	--no-trace-command -j -i 0.1 --json-stream "$S" ||
	{ fail attach "$(cat "$TMP/b.err")"; exit 1; }
for ((r = 1; r <= ROUNDS; r++)); do
	seen=$(intervals)
	assert_eq "$(fx_cmd cli "churn $N")" "churned $N" "burst/round_$r"
	wait_for "[ \$(intervals) -gt $seen ]" 20 || fail "burst/reconciled_$r" "no interval line"
done
# Quiet before the last reconcile: every close of the burst finished
# (no FIN_WAIT, CLOSING, LAST_ACK left), so the client's books are whole.
closing() {
	ip netns exec "$NS" ss -Htan state fin-wait-1 state fin-wait-2 state closing \
		state last-ack state close-wait | wc -l
}
wait_for '[ "$(closing)" -eq 0 ]' 30 || fail quiet "$(closing) sockets still closing"
run_tell
assert_eq "$?" 0 exit_status
kernel_tw=$(ip netns exec "$NS" ss -Htan state time-wait | wc -l)
C=".processes[] | select(.pid == $FX_PID_cli)"
# Every TIME_WAIT of the burst entered the client's books exactly once,
# is still charged to it, equal to the namespace's own count, and none is
# charged to nobody. These failed before the state-change programs were
# paired (5,548-5,963 of 6,000 in 3 of 14 runs: a softirq's FIN_WAIT2->CLOSE
# interrupting the program in a task was skipped by the kernel).
assert_eq "$(jqn "$C | .totals.time_wait_entered" "$TMP/b.json")" "$((ROUNDS * N))" entered
assert_eq "$(jqn "$C | .time_wait" "$TMP/b.json")" "$kernel_tw" live_eq_sock_diag
# The kernel may end a few early (a late segment to a TIME_WAIT): each
# one the books no longer hold is counted as ended.
assert_eq "$(jqn "$C | .totals.time_wait_entered - .totals.time_wait_ended_early - .totals.time_wait_expired" "$TMP/b.json")" "$kernel_tw" ended_counted
assert_eq "$(jqn '.unattributed.tcp.time_wait' "$TMP/b.json")" 0 none_unattributed
assert_eq "$(jqn '.agent.stale_owners_dropped' "$TMP/b.json")" 0 no_stale_owner
assert_eq "$(jqn '.agent.time_wait_end_unseen' "$TMP/b.json")" 0 none_forgotten
assert_eq "$(tw_unbalanced "$TMP/b.json")" "" tw_books_balance
assert_eq "$(jqn '.agent.events_lost' "$TMP/b.json")" 0 nothing_lost
assert_eq "$(jqn '.agent.reconciles > 3' "$TMP/b.json")" true reconciles_ran
# Not asserted (it depends on timing), but said: how often a reconcile
# kept a TIME_WAIT its dump could not have seen.
echo "# reconciles $(jqn '.agent.reconciles' "$TMP/b.json") in $(jqn '.run.elapsed_s' "$TMP/b.json") s; kept during dumps: $(jqn '.agent.time_wait_entered_during_dump' "$TMP/b.json"); ended early $(jqn "$C | .totals.time_wait_ended_early" "$TMP/b.json"); nested $(jqn '.agent.state_changes_nested' "$TMP/b.json")" >&2
fx_stop cli; fx_stop srv
