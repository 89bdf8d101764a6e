#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# TIME_WAIT ends told apart and charged to the process that held it:
# natural expiry after 60 s, and early ends (ss -K). Three agents watch
# the same clients at once, so the 60 s are waited once: the default
# (socket storage) and --per-transition, which see a TIME_WAIT's end in
# the census each interval (gone before its 60 s: ended early; at or
# after: expired), and --tw-timers, which follows its timer as it runs.
# Bounded by the kernel's fixed 60 s TIME_WAIT (TCP_TIMEWAIT_LEN), which
# is why it is all in a network namespace of its own (servers, clients,
# agents' census): tests/run.sh runs it in the background, beside the rest.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
# tcp_rfc1337=1 in the namespace (fx_twns says why; its FX_WRAP for
# tw_on_port and closes_done): a_expired wants all 5 of a's TIME_WAIT to
# live their 60 s, and beside the whole suite a reset answering a late FIN
# resend could end one early. b's early ends are ss -K's, which rfc1337
# does not touch.
fx_twns tw
CS_WRAP=(ip netns exec "$NS")
pa=8080
fx_start srva server -p "$pa" || fail start server_a
pb=8081
fx_start srvb server -p "$pb" || fail start server_b
fx_start cli client -p "$pa" || fail start client
fx_start clib client -p "$pb" || fail start client_b

modes=(sk pt timers)
declare -A args=([sk]="" [pt]=--per-transition [timers]=--tw-timers) agent
for m in "${modes[@]}"; do
	# shellcheck disable=SC2086 # one flag or none
	cs_attach "$TMP/tw_$m.json" "$TMP/tw_$m.err" -p "$FX_PID_cli,$FX_PID_clib" -j -i 1 \
		${args[$m]} || fail "$m/attach" "$(cat "$TMP/tw_$m.err")"
	agent[$m]=$CS_PID
done
assert_eq "$(fx_cmd cli "churn 5")" "churned 5" churn_a
assert_eq "$(fx_cmd clib "churn 10")" "churned 10" churn_b
wait_for "[ \$(tw_on_port $pa) -eq 5 ] && [ \$(tw_on_port $pb) -eq 10 ] && closes_done $pa && closes_done $pb" 20 ||
	fail kernel_closed "kernel: $(tw_on_port "$pa") and $(tw_on_port "$pb") TIME_WAIT"
# Early end: the kernel kills the tw sockets on request.
inns ss -K -tan state time-wait "( dport = :$pb )" >/dev/null
wait_for "[ \$(tw_on_port $pb) -eq 0 ]" 10 || fail killed "kernel: $(tw_on_port "$pb") TIME_WAIT left after ss -K"
# Natural end: the 60 s timer (a FIN resend met re-arms it).
wait_for "[ \$(tw_on_port $pa) -eq 0 ] && closes_done $pa && closes_done $pb" 80 ||
	fail expired "kernel: $(tw_on_port "$pa") TIME_WAIT left after 80 s"
a=".processes[] | select(.pid == $FX_PID_cli)" b=".processes[] | select(.pid == $FX_PID_clib)"
for m in "${modes[@]}"; do
	CS_PID=${agent[$m]}
	cs_stop
	J=$TMP/tw_$m.json
	if [ "$m" = timers ]; then
		assert_eq "$(jq -r '.run.time_wait_method | startswith("tw timer")' "$J")" true "$m/method_is_timer"
	else
		assert_eq "$(jq -r '.run.time_wait_method' "$J")" "state transitions + sock_diag census" \
			"$m/method_is_census"
	fi
	assert_eq "$(jq -r "$a | .totals.time_wait_entered" "$J")" 5 "$m/a_entered"
	assert_eq "$(jq -r "$a | .totals.time_wait_expired" "$J")" 5 "$m/a_expired"
	assert_eq "$(jq -r "$a | .totals.time_wait_ended_early" "$J")" 0 "$m/a_not_early"
	assert_eq "$(jq -r "$b | .totals.time_wait_entered" "$J")" 10 "$m/b_entered"
	assert_eq "$(jq -r "$b | .totals.time_wait_ended_early" "$J")" 10 "$m/b_killed_early"
	assert_eq "$(jq -r "$b | .totals.time_wait_expired" "$J")" 0 "$m/b_not_expired"
	assert_eq "$(jq -r "[($a), ($b) | .time_wait] | add" "$J")" 0 "$m/none_left"
	assert_eq "$(jq -r '.agent.time_wait_end_unseen' "$J")" 0 "$m/every_end_seen"
	# entered = expired + ended early + end unseen + live, for every process.
	assert_eq "$(tw_unbalanced "$J")" "" "$m/tw_books_balance"
	assert_eq "$(jq -r '.agent.time_wait_timer_unmatched' "$J")" 0 "$m/every_entry_matched"
done
fx_stop cli; fx_stop clib; fx_stop srva; fx_stop srvb
