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
inner() {
	local out=$1 port cpid spid
	port=$("$FIXTURES/tcpfix" freeport)
	fx_start srv server -p "$port" || { echo "server did not start" >"$out/error"; return; }
	fx_start cli client -p "$port" || { echo "client did not start" >"$out/error"; return; }
	spid=$FX_PID_srv cpid=$FX_PID_cli
	echo "$cpid $spid" >"$out/pids"
	cs_attach "$out/p.json" "$out/p.err" -p "$cpid,$spid" -i 0.5 -j ||
		{ echo "attach failed" >"$out/error"; return; }
	fx_cmd cli "churn $N" >"$out/churned"
	wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $N closed $N open 0' ]" 30
	fx_cmd srv stats >"$out/srv_stats"
	wait_for "[ \$(tw_on_port $port) -ge $N ]" 20
	tw_on_port "$port" >"$out/tw"
	cs_stop
	echo $? >"$out/rc"
	fx_stop cli; fx_stop srv
}

if [[ ${PIDNS_INNER:-} ]]; then
	inner "$PIDNS_INNER"
	exit 0
fi

# check NAME DIR: the counts of a run (inner's files) against the fixtures'.
check() {
	local name=$1 d=$2 cpid spid J=$2/p.json
	[[ -s $d/error ]] && fail "$name/ran" "$(cat "$d/error") $(cat "$d/p.err" 2>/dev/null)"
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
assert_eq "$(jqn '.run.pid_namespace.child' "$TMP/child/p.json")" true child/json_says_namespace
assert_eq "$(jqn '.run.pid_namespace.child' "$TMP/host/p.json")" false host/json_says_namespace
