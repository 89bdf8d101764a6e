#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# TIME_WAIT the kernel never made: in a network namespace of the test's
# own with net.ipv4.tcp_max_tw_buckets=50, a client closes 500 connections
# first. The kernel makes TIME_WAIT until its table is full and closes the
# rest straight away (TcpExtTCPTimeWaitOverflow, "TCP: time wait bucket
# table overflow"). connscope must count those apart, per process, in
# JSON, text, HTML and Prometheus, keep them out of entered (which before
# said 500, and 450 "end unseen"), and the doctor must name the sysctl.
# Both kernel-side modes. No TIME_WAIT expires in the run (60 s).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=500 MAX=50

overflow_case() {
	local m=$1 J C made over kernel_tw
	shift
	fx_netns "twovf$m"
	inns sysctl -qw net.ipv4.tcp_max_tw_buckets=$MAX
	# No connect() takes over a TIME_WAIT meanwhile: every one made stays.
	inns sysctl -qw net.ipv4.tcp_tw_reuse=0
	FX_WRAP=(ip netns exec "$NS")
	CS_WRAP=(ip netns exec "$NS")
	fx_start "s$m" server -p 8080 && fx_start "c$m" client -p 8080 ||
		{ fail "$m/start" fixtures; return; }
	local s=FX_PID_s$m c=FX_PID_c$m
	J=$TMP/ovf_$m.json
	cs_attach "$J" "$TMP/ovf_$m.err" -p "${!s},${!c}" -j -i 0.2 --prom "$TMP/ovf_$m.prom" \
		--report "$TMP/ovf_$m.html" "$@" || { fail "$m/attach" "$(cat "$TMP/ovf_$m.err")"; return; }
	assert_eq "$(fx_cmd "c$m" "churn $N")" "churned $N" "$m/churned"
	closing() { inns ss -Htan state fin-wait-1 state fin-wait-2 state closing state last-ack state close-wait | wc -l; }
	wait_for '[ "$(closing)" -eq 0 ]' 30 || fail "$m/quiet" "$(closing) sockets still closing"
	cs_stop
	assert_eq "$?" 0 "$m/exit_status"
	made=$(netstat_field TW) over=$(netstat_field TCPTimeWaitOverflow)
	kernel_tw=$(inns ss -Htan state time-wait | wc -l)
	# The kernel's own account: the table filled, the rest overflowed.
	assert_eq "$((made + over)):$((over > 0)):$kernel_tw" "$N:1:$made" "$m/kernel_overflowed"
	C=".processes[] | select(.pid == ${!c})"
	assert_eq "$(jqn "$C | [.totals.time_wait_entered, .totals.time_wait_not_made_table_full, .totals.time_wait_end_unseen, .time_wait_in_books] | @tsv" "$J")" \
		"$(printf '%s\t%s\t0\t%s' "$made" "$over" "$kernel_tw")" "$m/client_not_made_apart"
	assert_eq "$(tw_unbalanced "$J")" "" "$m/tw_books_balance"
	assert_eq "$(jqn '.agent.time_wait_end_unseen' "$J")" 0 "$m/no_end_unseen"
	assert_eq "$(jqn '.agent.time_wait_timer_unmatched' "$J")" 0 "$m/none_unmatched"
	# The doctor's finding names the sysctl, with the count as evidence.
	assert_eq "$(jqn "[.findings[] | select(.rule == \"time_wait\" and .pid == ${!c} and (.fix | contains(\"net.ipv4.tcp_max_tw_buckets\"))) | .evidence[] | select(.name == \"time_wait_not_made\") | .value] | @tsv" "$J")" \
		"$over" "$m/doctor_names_sysctl"
	assert_eq "$(awk -v p="pid=\"${!c}\"" '$1 ~ /^connscope_process_time_wait_not_made_total/ && index($1, p) {print $2}' "$TMP/ovf_$m.prom")" \
		"$over" "$m/prom_counter"
	assert_eq "$(grep -c "<dt>TIME_WAIT not made</dt><dd>$over clean closes (bucket table full: net.ipv4.tcp_max_tw_buckets)" "$TMP/ovf_$m.html")" \
		1 "$m/html_line"
	fx_stop "c$m"; fx_stop "s$m"
	FX_WRAP=() CS_WRAP=()
}

overflow_case sk
overflow_case pt --per-transition
