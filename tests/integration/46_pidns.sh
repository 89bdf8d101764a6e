#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The agent in a child pid namespace (a container without hostPID), made
# as `unshare --pid --fork --mount-proc` does: its /proc shows the pids of
# that namespace, the kernel's tracepoints the host's. A churn in that
# namespace traced by -p, by --comm and with fdleak: exact counts, pids as
# the agent's /proc shows them, and what it cannot see said. The same churn
# with the agent in the host's pid namespace: unchanged.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

N=2000 M=200
TMP=$(lib_tmpdir)

# ---- inside the namespace (this script again, as its pid 1's child) ----
# Results go to files the outer run reads: the pids as this namespace
# numbers them, the fixtures' own counts, the agent's JSON and stderr.
# The tcpfix churns run in the outer run's network namespace (fx_twns,
# PIDNS_NETNS): client_time_wait_live_eq_kernel wants the kernel's
# TIME_WAIT alive from its count to the agent's last dump, and resets can
# end them early in ours. Only the network namespace is the test's: the
# pid namespaces are what it is about (the agent's, in each run).
inner() {
	local out=$1 port cpid spid
	FX_WRAP=(ip netns exec "$PIDNS_NETNS")
	port=$(fx_port)
	fx_start srv server -p "$port" || { echo "server did not start" >"$out/error"; return; }
	fx_start cli client -p "$port" || { echo "client did not start" >"$out/error"; return; }
	spid=$FX_PID_srv cpid=$FX_PID_cli
	echo "$cpid $spid" >"$out/pids"
	cs_attach "$out/p.json" "$out/p.err" -p "$cpid,$spid" -i 0.5 -j ||
		{ echo "attach failed" >"$out/error"; return; }
	fx_cmd cli "churn $N" >"$out/churned"
	wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $N closed $N open 0' ]" 30
	fx_cmd srv stats >"$out/srv_stats"
	wait_for "[ \$(tw_on_port $port) -ge $N ] && closes_done $port" 20 ||
		echo "kernel: $(tw_on_port "$port") TIME_WAIT, want $N" >"$out/kernel_closed"
	tw_on_port "$port" >"$out/tw"
	cs_stop
	echo $? >"$out/rc"
	fx_stop cli; fx_stop srv

	# --comm: processes that start after the agent join it (exec), a
	# server that forks workers (fork), each one's pid as seen here.
	port=$(fx_port)
	cs_attach "$out/comm.json" "$out/comm.err" --comm tcpfix -i 0.5 -j ||
		{ echo "attach --comm failed" >"$out/error"; return; }
	fx_start wsrv server -p "$port" --workers 2 || { echo "workers did not start" >"$out/error"; return; }
	fx_start wcli client -p "$port" || { echo "client did not start" >"$out/error"; return; }
	echo "$FX_PID_wcli $FIX_LINE" >/dev/null
	fx_cmd wcli "churn $M" >"$out/comm_churned"
	wait_for "[ \"\$(fx_cmd wsrv stats | cut -d' ' -f1-7)\" = 'stats accepted $M closed $M open 0' ]" 30
	fx_cmd wsrv stats >"$out/comm_stats"
	echo "$FX_PID_wcli $FX_PID_wsrv" >"$out/comm_pids"
	cs_stop
	fx_stop wcli; fx_stop wsrv
	FX_WRAP=()

	# fdleak: fd events carry the namespace's pid and thread id.
	fix_start leak "$FIXTURES/leakfix_fp"
	fix_expect leak "ready *" 10 || { echo "leakfix did not start" >"$out/error"; return; }
	read -r _ lpid line <<<"$FIX_LINE"
	echo "$lpid $line" >"$out/leak_pid"
	spawn_bg "$CONNSCOPE" fdleak -p "$lpid" -j -i 0.3 --leak-age 0 >"$out/leak.json" 2>"$out/leak.err"
	wait_for "grep -q '^connscope: tracing' '$out/leak.err' || ! kill -0 $BG_PID 2>/dev/null" 30
	fx_cmd leak "churn 50" >/dev/null
	fx_cmd leak "leak 7" >"$out/leaked"
	kill -INT "$BG_PID"; wait "$BG_PID"
	echo $? >"$out/leak_rc"
	fix_send leak exit
}

if [[ ${PIDNS_INNER:-} ]]; then
	inner "$PIDNS_INNER"
	exit 0
fi

# check NAME DIR: the counts of a run (inner's files) against the fixtures'.
check() {
	local name=$1 d=$2 cpid spid J=$2/p.json
	[[ -s $d/error ]] && fail "$name/ran" "$(cat "$d/error") $(cat "$d/p.err" 2>/dev/null)"
	[[ -s $d/kernel_closed ]] && fail "$name/kernel_closed" "$(cat "$d/kernel_closed")"
	read -r cpid spid <"$d/pids"
	local c=".processes[] | select(.pid == $cpid)" s=".processes[] | select(.pid == $spid)"
	assert_eq "$(cat "$d/churned")" "churned $N" "$name/client_churned"
	assert_eq "$(cat "$d/srv_stats")" "stats accepted $N closed $N open 0" "$name/server_counted"
	assert_eq "$(cat "$d/rc")" 0 "$name/exit_status"
	assert_eq "$(jqn "$c | .totals.connections_opened" "$J")" "$N" "$name/client_opened"
	assert_eq "$(jqn "$c | .totals.connections_closed" "$J")" "$N" "$name/client_closed"
	assert_eq "$(jqn "$c | .totals.time_wait_entered" "$J")" "$N" "$name/client_time_wait_entered"
	assert_eq "$(jqn "$c | .time_wait" "$J")" "$(cat "$d/tw")" "$name/client_time_wait_live_eq_kernel"
	assert_eq "$(jqn "$s | .totals.connections_accepted" "$J")" "$N" "$name/server_accepted"
	assert_eq "$(jqn "$s | .totals.connections_closed" "$J")" "$N" "$name/server_closed"
	assert_eq "$(jqn "$s | .tcp.listen" "$J")" 1 "$name/server_listen"
	assert_eq "$(jqn ".agent.events_lost" "$J")" 0 "$name/no_events_lost"
	assert_eq "$(jqn '[.processes[].pid] | sort | join(" ")' "$J")" \
		"$(printf '%s\n' "$cpid" "$spid" | sort -n | paste -sd' ' | sed 's/\t/ /g')" "$name/pids_as_seen"
}

fx_twns pidns
export PIDNS_NETNS=$NS

# ---- the host's pid namespace: as before ----
mkdir -p "$TMP/host"
PIDNS_INNER= inner "$TMP/host"
check host "$TMP/host"

# ---- a child pid namespace ----
mkdir -p "$TMP/child"
timeout 120 unshare --pid --fork --mount-proc env PIDNS_INNER="$TMP/child" bash "$0" >&2
check child "$TMP/child"
# Its pids are the namespace's own: small, and not the host's.
read -r cpid spid <"$TMP/child/pids"
assert_eq "$([ "$cpid" -lt 100 ] && [ "$spid" -lt 100 ] && echo small)" small child/pids_are_the_namespaces
grep -q 'child pid namespace' "$TMP/child/p.err" ||
	fail child/said "no word of the pid namespace on stderr: $(head -c 400 "$TMP/child/p.err")"
grep -q 'child pid namespace' "$TMP/child/p.err" && ok child/said
# Wrapped at 80 columns (was one line of ~170 with pid:[4026532xxx]).
fits80 child/stderr "$TMP/child/p.err"
assert_eq "$(jqn '.run.pid_namespace.child' "$TMP/child/p.json")" true child/json_says_namespace
assert_eq "$(jqn '.run.pid_namespace.child' "$TMP/host/p.json")" false host/json_says_namespace

# check_more NAME DIR: the --comm and fdleak runs.
check_more() {
	local name=$1 d=$2 wcli wsrv lpid line J=$2/comm.json
	read -r wcli wsrv <"$d/comm_pids"
	# "stats accepted A closed C open O worker W1 A1 C1 W2 A2 C2"
	read -r -a st <"$d/comm_stats"
	assert_eq "$(cat "$d/comm_churned")" "churned $M" "$name/comm/churned"
	assert_eq "$(jqn ".processes[] | select(.pid == $wcli) | .totals.connections_opened" "$J")" "$M" \
		"$name/comm/client_opened"
	assert_eq "$(jqn ".processes[] | select(.pid == ${st[8]}) | .totals.connections_accepted" "$J")" "${st[9]}" \
		"$name/comm/worker1_accepted"
	assert_eq "$(jqn ".processes[] | select(.pid == ${st[12]}) | .totals.connections_accepted" "$J")" "${st[13]}" \
		"$name/comm/worker2_accepted"
	assert_eq "$(jqn "[.processes[] | select(.pid == ${st[8]} or .pid == ${st[12]}) | .totals.connections_accepted] | add" "$J")" \
		"$M" "$name/comm/workers_accepted_sum"
	# From the child namespace a tcpfix outside it (another test's, on
	# the host) is out of sight: every accept in the books is ours.
	[[ $name == child ]] &&
		assert_eq "$(jqn "[.processes[].totals.connections_accepted] | add" "$J")" "$M" \
			"$name/comm/nothing_from_outside"
	read -r lpid line <"$d/leak_pid"
	J=$d/leak.json
	assert_eq "$(cat "$d/leaked")" "leaked 7" "$name/fdleak/leaked"
	assert_eq "$(cat "$d/leak_rc")" 0 "$name/fdleak/exit_status"
	assert_eq "$(jqn ".processes[0].pid" "$J")" "$lpid" "$name/fdleak/pid_as_seen"
	assert_eq "$(jqn ".processes[0].leak_sites[0] | [.func, .line, .old] | @tsv" "$J")" \
		"$(printf 'leak_sockets\t%s\t7' "$line")" "$name/fdleak/leak_site"
	assert_eq "$(jqn ".processes[0].events.created_by.socket" "$J")" 57 "$name/fdleak/socket_events"
}
check_more host "$TMP/host"
check_more child "$TMP/child"
