#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# summary: the ss -s block equals ss -s and /proc/net/sockstat at a quiet
# moment; the per-process table charges sockets to their holders and
# counts TIME_WAIT as unattributed. In a network namespace of our own.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
# tcp_rfc1337=1 in it (fx_twns says why): tw_unattributed wants all 15
# TIME_WAIT live, which a reset answering a late FIN resend ends early
# under Linux's default.
fx_twns sum

fx_start srv server -p 8080 || fail start server
fx_start cli client -p 8080 || fail start client
assert_eq "$(fx_cmd cli "open 5")" "opened 5" open5
v6port=8081
fx_start srv6 server -6 -p $v6port && fx_start cli6 client -6 -p $v6port
assert_eq "$(fx_cmd cli6 "open 2")" "opened 2" open2_v6

# A quiet moment: ss -s the same before and after ours. A closed netlink
# socket stays in "sockets: used" until an RCU grace period ends, so after
# ours wait for the count to settle back; global counters (alloc, orphan)
# can also move under other work on the machine: bounded retries.
same=no
for _ in $(seq 1 30); do
	a=$(inns ss -s)
	ours=$(inns "$CONNSCOPE" summary | head -n 9)
	wait_for "[ \"\$(inns ss -s)\" = \"\$a\" ]" 1
	b=$(inns ss -s)
	if [ "$a" = "$b" ]; then
		same=yes
		break
	fi
done
if [ $same = yes ]; then
	assert_eq "$ours" "$(printf '%s\n' "$a" | head -n 9)" ss_s_block_identical
else
	fail ss_s_block_identical "no quiet moment in 30 tries"
fi
inns "$CONNSCOPE" summary -j >"$TMP/s.json"
assert_eq "$(jq -r .summary.tcp.timewait "$TMP/s.json")" \
	"$(inns awk '/^TCP:/ {for (i = 2; i < NF; i++) if ($i == "tw") print $(i + 1)}' /proc/net/sockstat)" json_timewait_eq_sockstat
assert_eq "$(jq -r '.summary.transport[] | select(.name == "TCP") | .ipv6' "$TMP/s.json")" \
	"$(inns awk '/^TCP6:/ {print $3}' /proc/net/sockstat6)" json_tcp6_eq_sockstat6

c=".processes[] | select(.pid == $FX_PID_cli)"
s=".processes[] | select(.pid == $FX_PID_srv)"
assert_eq "$(jq -r "$c | .tcp.established" "$TMP/s.json")" 5 client_established
assert_eq "$(jq -r "$c | .comm" "$TMP/s.json")" tcpfix client_comm
assert_eq "$(jq -r "$s | .tcp.established" "$TMP/s.json")" 5 server_established
assert_eq "$(jq -r "$s | .tcp.listen" "$TMP/s.json")" 1 server_listen
assert_eq "$(jq -r ".processes[] | select(.pid == $FX_PID_cli6) | .tcp.established" "$TMP/s.json")" 2 client6_established
assert_eq "$(jq -r "$c | .tcp | keys | join(\",\")" "$TMP/s.json")" \
	"close,close_wait,closing,established,fin_wait1,fin_wait2,last_ack,listen,orphan,syn_recv,syn_sent,time_wait" tcp_keys
assert_eq "$(jq -r '.unattributed.tcp.time_wait' "$TMP/s.json")" 0 no_unattributed_yet

# -p: only that process.
inns "$CONNSCOPE" summary -j -p "$FX_PID_cli" >"$TMP/p.json"
assert_eq "$(jq -r '[.processes[].pid] | join(",")' "$TMP/p.json")" "$FX_PID_cli" pid_filter
assert_eq "$(jq -r "$c | .tcp.established" "$TMP/p.json")" 5 pid_filter_counts

# TIME_WAIT made without an agent watching: unattributed, never dropped.
assert_eq "$(fx_cmd cli close)" "closed 5" close5
assert_eq "$(fx_cmd cli "churn 10")" "churned 10" churn10
# And every close over (no LAST_ACK left): those would be unattributed too.
wait_for "[ \$(tw_on_port 8080) -eq 15 ] && closes_done 8080" 20 ||
	fail tw_kernel_closed "kernel: $(tw_on_port 8080) TIME_WAIT"
inns "$CONNSCOPE" summary -j >"$TMP/tw.json"
assert_eq "$(jq -r '.unattributed.tcp.time_wait' "$TMP/tw.json")" 15 tw_unattributed
assert_eq "$(jq -r "[$c | .tcp.time_wait] | add // 0" "$TMP/tw.json")" 0 tw_not_charged_without_agent
inns "$CONNSCOPE" summary >"$TMP/tw.txt"
assert_eq "$(grep -c '^unattributed: 15 sockets have no owning file' "$TMP/tw.txt")" 1 text_says_unattributed
assert_eq "$(grep -E "^$FX_PID_srv +tcpfix" "$TMP/tw.txt" | awk '{print $3, $12}')" "0 1" text_server_row
# A terminal's 80 columns: the table (12 counts), the namespace note, the
# UDP part; the whole output and the -p one (it was 92 wide).
assert_eq "$(awk 'length > 80' "$TMP/tw.txt" | head -3)" "" text_fits_80_columns
inns "$CONNSCOPE" summary -p "$FX_PID_cli,$FX_PID_srv" >"$TMP/p.txt"
assert_eq "$(grep -cE "^$FX_PID_cli +tcpfix" "$TMP/p.txt") $(awk 'length > 80' "$TMP/p.txt" | head -3)" \
	"1 " text_p_fits_80_columns
inns "$CONNSCOPE" summary -H >"$TMP/nohdr.txt"
assert_eq "$(grep -c '^PID ' "$TMP/nohdr.txt")" 0 no_header

fx_stop cli6; fx_stop srv6; fx_stop cli; fx_stop srv
