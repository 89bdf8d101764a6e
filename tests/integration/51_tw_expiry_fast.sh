#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A tw socket's timer running out, in seconds rather than TIME_WAIT's 60:
# an orphaned FIN_WAIT2 whose peer never closes is parked by the kernel as
# a tw socket (substate FIN_WAIT2) for net.ipv4.tcp_fin_timeout, 1 s in a
# network namespace of the test's own, and then expires
# (tw_timer_handler). The census (default and --per-transition) must read
# its deadline from the dumps (idiag_expires) and count it expired, not
# ended early; --tw-timers from its timer. Three agents at once.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
K=6
fx_netns twexp
inns sysctl -qw net.ipv4.tcp_fin_timeout=1
fix_start srv ip netns exec "$NS" "$FIXTURES/orphanfix" server -p 8080
fix_expect srv "listening *" 10 || { fail server_start "no listening line"; exit 1; }
fix_start cli ip netns exec "$NS" "$FIXTURES/orphanfix" client -p 8080 -n "$K"
fix_expect cli "ready *" 10 || { fail client_start "no ready line"; exit 1; }

CS_WRAP=(ip netns exec "$NS")
modes=(sk pt timers)
declare -A args=([sk]="" [pt]=--per-transition [timers]=--tw-timers) agent
for m in "${modes[@]}"; do
	# shellcheck disable=SC2086 # one flag or none
	cs_attach "$TMP/$m.json" "$TMP/$m.err" -p "$cli_PID" -j -i 0.2 ${args[$m]} ||
		fail "$m/attach" "$(cat "$TMP/$m.err")"
	agent[$m]=$CS_PID
done
parked() { inns ss -Htan state fin-wait-2 | wc -l; }
fix_send cli go
fix_expect cli "closed *" 30
assert_eq "$FIX_LINE" "closed $K" closed
# Parked, then run out (the kernel's TcpExtTW counts each expiry).
wait_for '[ "$(parked)" -eq 0 ]' 20 || fail ran_out "$(parked) still parked"
assert_eq "$(inns ss -Htan state time-wait | wc -l)" 0 none_left_in_kernel
C=".processes[] | select(.pid == $cli_PID)"
for m in "${modes[@]}"; do
	CS_PID=${agent[$m]}
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	J=$TMP/$m.json
	assert_eq "$(jqn "$C | [.totals.time_wait_entered, .totals.time_wait_expired, .totals.time_wait_ended_early, .totals.time_wait_end_unseen, .time_wait_in_books] | @tsv" "$J")" \
		"$(printf '%s\t%s\t0\t0\t0' "$K" "$K")" "$m/expired_not_early" ||
		echo "# $m: $(jq -c '.agent | {events, time_wait_timer_unmatched, time_wait_timer_strays, time_wait_end_unseen, time_wait_map_full, state_changes_nested, reconciles, books_mismatch_max}' "$J")"
	assert_eq "$(tw_unbalanced "$J")" "" "$m/tw_books_balance"
	assert_eq "$(jqn '.agent.events_lost' "$J")" 0 "$m/nothing_lost"
done
fix_eof cli; fix_eof srv
