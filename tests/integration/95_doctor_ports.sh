#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Ports that really run out (#26): in a network namespace of the test's own
# with 100 ephemeral ports (ip_local_port_range 40000 40099) and
# tcp_tw_reuse 0, a client that closes first churns until connect() fails
# with EADDRNOTAVAIL: every port is held by a TIME_WAIT. The doctor's
# first finding is a critical port_exhaustion on that client and
# destination, its evidence the kernel's (100 ports, 100 TIME_WAIT, the
# failed connect counted); the kernel's own truth is the fixture's error
# and ss. (The loopback-reuse case, where the kernel reuses TIME_WAIT and
# no connect fails, is 97_vocabulary's reuse: never critical.) Both record
# modes. The server listens on 50000, outside the range.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
EV() { echo "(.evidence[] | select(.name == \"$1\") | .value)"; }

ports_case() {
	local name=$1 J=$TMP/$1.json out live
	shift
	# A namespace a case: every port free at its start; tcp_rfc1337=1 in
	# it (fx_twns says why): kernel_time_wait_holds_every_port wants 100 live.
	fx_twns "ports$name"
	inns sysctl -qw net.ipv4.tcp_tw_reuse=0
	inns sysctl -qw net.ipv4.ip_local_port_range="40000 40099"
	FX_WRAP=(ip netns exec "$NS")
	fx_start "${name}s" server -p 50000 || { fail "$name/start" server; return; }
	read -r _ PORT _ <<<"$FIX_LINE"
	SPID=$(eval echo "\$FX_PID_${name}s")
	fx_start "${name}c" client -p "$PORT" || { fail "$name/start" client; return; }
	CPID=$(eval echo "\$FX_PID_${name}c")
	spawn_bg ip netns exec "$NS" "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$CPID,$SPID" "$@" \
		>"$J" 2>"$TMP/$name.err"
	DR_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$TMP/$name.err' || ! kill -0 $DR_PID 2>/dev/null" 30
	if ! grep -q '^connscope: tracing' "$TMP/$name.err"; then
		fail "$name/attach" "$(cat "$TMP/$name.err")"
		return
	fi
	# The kernel says it: the 101st connect finds no port.
	out=$(fx_cmd "${name}c" "churn 150" 60)
	assert_eq "$out" "error Cannot assign requested address (churned 100 of 150)" "$name/connect_failed_eaddrnotavail"
	live=$(inns ss -Htan state time-wait "( dport = :$PORT )" | wc -l)
	assert_eq "$live" 100 "$name/kernel_time_wait_holds_every_port"
	kill -INT "$DR_PID"
	wait "$DR_PID"
	assert_eq "$?" 0 "$name/exit_status"
	echo "# $name: $(jqn -c '[.findings[] | [.rule, .severity, .endpoint]]' "$J")"
	echo "# $name verdict: $(jqn '.findings[0].verdict' "$J")"
	echo "# $name evidence: $(jqn -c '[.findings[0].evidence[] | [.name, .value]]' "$J")"
	assert_eq "$(jqn '.findings[0] | [.rule, .severity, .pid, .endpoint] | @tsv' "$J")" \
		"$(printf 'port_exhaustion\tcritical\t%s\t127.0.0.1:%s' "$CPID" "$PORT")" "$name/first_finding"
	assert_eq "$(jqn ".findings[0] | [$(EV ephemeral_ports), $(EV time_wait_entered), $(EV ports_in_use_peak)] | @tsv" "$J")" \
		"$(printf '100\t100\t100')" "$name/evidence_exact"
	assert_eq "$(jqn ".findings[0] | $(EV time_wait_reused) // 0" "$J")" 0 "$name/nothing_reused"
	assert_eq "$(jqn ".findings[0].verdict | test(\"reused\")" "$J")" false "$name/verdict_not_reuse"
	# The failed connect is in the client's row to the server.
	assert_eq "$(jqn "[.processes[] | select(.pid == $CPID) | .reuse.endpoints[] |
		select(.endpoint == \"127.0.0.1:$PORT\")][0] | .opened" "$J")" 101 "$name/opened_with_the_failed_one"
	fx_stop "${name}c"
	fx_stop "${name}s"
}

ports_case default
ports_case pt --per-transition
