#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# TIME_WAIT taken over by a new SYN (tcp_timewait_state_process ->
# TCP_TW_SYN -> inet_twsk_deschedule_put), in both kernel-side modes: a
# server that closes first, a client that reconnects from the same local
# port each time (a proxy reusing its ephemeral ports does this). The
# kernel ends every TIME_WAIT but the last early; the server's books must
# say so: entered = expired + ended early + end unseen + live, and each
# figure equal to the kernel's (/proc/net/netstat TcpExtTW counts the
# TIME_WAIT sockets made; sock_diag the live ones). Failed before: 19 of
# 20 ended early counted nowhere. Each mode in a network namespace of its
# own; bounded well inside the 60 s a TIME_WAIT lives.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=20

takeover_case() {
	local m=$1 J S C kernel_tw made
	shift
	fx_netns "tko$m"
	FX_WRAP=(ip netns exec "$NS")
	CS_WRAP=(ip netns exec "$NS")
	fx_start "s$m" server -p 8080 --close-first && fx_start "c$m" client -p 8080 ||
		{ fail "$m/start" fixtures; return; }
	local s=FX_PID_s$m c=FX_PID_c$m
	J=$TMP/tko_$m.json
	cs_attach "$J" "$TMP/tko_$m.err" -p "${!s},${!c}" -j -i 0.2 "$@" ||
		{ fail "$m/attach" "$(cat "$TMP/tko_$m.err")"; return; }
	assert_eq "$(fx_cmd "c$m" "churn-passive-port $N")" "churned $N" "$m/churned"
	closing() { inns ss -Htan state fin-wait-1 state fin-wait-2 state closing state last-ack state close-wait | wc -l; }
	wait_for '[ "$(closing)" -eq 0 ]' 30 || fail "$m/quiet" "$(closing) sockets still closing"
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	kernel_tw=$(inns ss -Htan state time-wait | wc -l)
	made=$(netstat_field TW)
	# The kernel's own account: N made, one live (one 4-tuple), the
	# others taken over.
	assert_eq "$made:$kernel_tw" "$N:1" "$m/kernel_made_n_kept_one"
	S=".processes[] | select(.pid == ${!s})"
	C=".processes[] | select(.pid == ${!c})"
	assert_eq "$(jqn "$S | [.totals.time_wait_entered, .totals.time_wait_ended_early, .totals.time_wait_expired, .totals.time_wait_end_unseen] | @tsv" "$J")" \
		"$(printf '%s\t%s\t0\t0' "$made" $((made - kernel_tw)))" "$m/server_entered_ended_early"
	assert_eq "$(jqn "$S | [.time_wait, .time_wait_in_books] | @tsv" "$J")" \
		"$(printf '%s\t%s' "$kernel_tw" "$kernel_tw")" "$m/server_live_eq_sock_diag"
	# The invariant, for every process of the run.
	assert_eq "$(tw_unbalanced "$J")" "" "$m/tw_books_balance"
	assert_eq "$(jqn "$C | [.totals.connections_opened, .totals.time_wait_entered] | @tsv" "$J")" \
		"$(printf '%s\t0' $N)" "$m/client_opened"
	assert_eq "$(jqn "$S | .totals.connections_accepted" "$J")" $N "$m/server_accepted"
	assert_eq "$(jqn '.agent.time_wait_end_unseen' "$J")" 0 "$m/no_end_unseen"
	assert_eq "$(jqn '.agent.events_lost' "$J")" 0 "$m/nothing_lost"
	fx_stop "c$m"; fx_stop "s$m"
	FX_WRAP=() CS_WRAP=()
}

takeover_case sk
takeover_case pt --per-transition
