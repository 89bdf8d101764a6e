#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The agent itself in a podman container (tests/podman.sh: runc, cgroupfs,
# a store of the test's own), with the privileges of docs/image.md (no
# --privileged, the default seccomp profile plus bpf and perf_event_open),
# twice: with its own pid namespace (no --pid=host, its own loopback) and
# with the host's (--pid=host). In each, a churn between two
# fixtures in the same container, traced by -p with the pids as the
# container's /proc shows them: opened, accepted, TIME_WAIT exact against
# the fixtures' and ss's counts. Without --pid=host, a pid of the host is
# refused with one line that says why it cannot be seen and what to do.
# Under the runtime's default seccomp profile, bpf() is refused: said.
#
# The container's root holds only mount points: /usr (and so bash, ss and
# the libraries) and the tree are the host's, bind-mounted read-only; this
# script runs again inside it (CINNER) and leaves its results in files.
#
# The churn's N TIME_WAIT must live until the agent's last dump
# (kernel_time_wait, client_time_wait_live_eq_ss); on a loaded machine
# resets can end them early unless net.ipv4.tcp_rfc1337=1 (fx_twns in
# tests/fixture.sh says why). Neither run uses the host's network
# namespace, where no test changes a sysctl: its own loopback gets the
# sysctl from podman (--sysctl, set in the container's namespace), and the
# --pid=host run joins a namespace the test made (fx_twns; --network
# ns:PATH) instead of --network host. The agent and its fixtures share a
# network namespace in both, as they would share the host's; the agent
# with --network host on the host's own fixtures is 88_image's.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"

N=500

# ---- inside the container ----
inner() {
	local out=$1 port
	port=$("$FIXTURES/tcpfix" freeport)
	fx_start srv server -p "$port" || { echo "server did not start" >"$out/error"; return; }
	fx_start cli client -p "$port" || { echo "client did not start" >"$out/error"; return; }
	echo "$FX_PID_cli $FX_PID_srv" >"$out/pids"
	cs_attach "$out/p.json" "$out/p.err" -p "$FX_PID_cli,$FX_PID_srv" -i 0.5 -j ||
		{ echo "attach failed: $(head -c 400 "$out/p.err")" >"$out/error"; return; }
	fx_cmd cli "churn $N" >"$out/churned"
	wait_for "[ \"\$(fx_cmd srv stats)\" = 'stats accepted $N closed $N open 0' ]" 30
	fx_cmd srv stats >"$out/srv_stats"
	wait_for "[ \$(tw_on_port $port) -ge $N ] && closes_done $port" 20
	tw_on_port "$port" >"$out/tw"
	# The kernel's: 1 in the container's namespace (podman's --sysctl or the test's).
	sysctl -n net.ipv4.tcp_rfc1337 >"$out/rfc1337"
	cs_stop
	echo $? >"$out/rc"
	fx_stop cli; fx_stop srv
	# A pid this /proc does not show (the outer test's own, on the host).
	if [[ ! -e /proc/$HOST_PID ]]; then
		"$CONNSCOPE" attach -p "$HOST_PID" -d 1 >/dev/null 2>"$out/outside.err"
		echo $? >"$out/outside.rc"
	fi
	echo done >"$out/done"
}

if [[ ${CINNER:-} ]]; then
	inner "$CINNER"
	exit 0
fi

require_root
for t in podman runc jq; do
	command -v "$t" >/dev/null || { fail "tools/$t" "$t missing (make test-deps installs it)"; exit 1; }
done
source "$TESTS_DIR/podman.sh"
TMP=$(lib_tmpdir)
pm_setup "$TMP/pm" || { fail setup "podman store in $TMP/pm"; exit 1; }
"$REPO_ROOT/dist/container/seccomp.sh" >"$TMP/seccomp.json" || { fail seccomp_profile "seccomp.sh failed"; exit 1; }

ROOT=$TMP/rootfs
mkdir -p "$ROOT"/{usr,proc,sys,dev,tmp,etc,run}
chmod 1777 "$ROOT/tmp"
for l in bin lib lib64 sbin; do ln -s "usr/$l" "$ROOT/$l"; done

# run_inner NAME OUTDIR PODMAN_ARGS...: this script in a container, to its end.
run_inner() {
	local name=$1 out=$2
	shift 2
	mkdir -p "$out"
	timeout 120 podman "${PM_ARGS[@]}" run --rm --name "$name" "$@" \
		--cap-drop all --cap-add "$PM_AGENT_CAPS" --security-opt "seccomp=$TMP/seccomp.json" \
		"${PM_AGENT_MOUNTS[@]}" -v /usr:/usr:ro -v "$REPO_ROOT:$REPO_ROOT:ro" -v "$out:$out" \
		-e CINNER="$out" -e HOST_PID=$$ -e TESTS_DIR="$TESTS_DIR" -e REPO_ROOT="$REPO_ROOT" \
		-e CONNSCOPE="$CONNSCOPE" -e FIXTURES="$FIXTURES" -e PATH=/usr/sbin:/usr/bin \
		--rootfs "$ROOT" /usr/bin/bash "$TESTS_DIR/integration/87_agent_in_container.sh" >&2
}

# check NAME DIR: a run's counts against the fixtures' and the kernel's.
check() {
	local name=$1 d=$2 cpid spid J=$2/p.json
	[[ -s $d/error ]] && fail "$name/ran" "$(cat "$d/error")"
	[[ -s $d/done ]] && ok "$name/ran_to_its_end" || { fail "$name/ran_to_its_end" "no result"; return; }
	read -r cpid spid <"$d/pids"
	local c=".processes[] | select(.pid == $cpid)" s=".processes[] | select(.pid == $spid)"
	assert_eq "$(cat "$d/churned")" "churned $N" "$name/client_churned"
	assert_eq "$(cat "$d/srv_stats")" "stats accepted $N closed $N open 0" "$name/server_counted"
	assert_eq "$(cat "$d/rc")" 0 "$name/exit_status"
	assert_eq "$(jqn "$c | .totals.connections_opened" "$J")" "$N" "$name/client_opened"
	assert_eq "$(jqn "$c | .totals.time_wait_entered" "$J")" "$N" "$name/client_time_wait_entered"
	assert_eq "$(cat "$d/rfc1337")" 1 "$name/rfc1337_in_its_namespace"
	assert_eq "$(cat "$d/tw")" "$N" "$name/kernel_time_wait"
	assert_eq "$(jqn "$c | .time_wait" "$J")" "$(cat "$d/tw")" "$name/client_time_wait_live_eq_ss"
	assert_eq "$(jqn "$s | .totals.connections_accepted" "$J")" "$N" "$name/server_accepted"
	assert_eq "$(jqn "$s | .totals.connections_closed" "$J")" "$N" "$name/server_closed"
	assert_eq "$(jqn ".agent.events_lost" "$J")" 0 "$name/no_events_lost"
	assert_eq "$(jqn '[.processes[].pid] | sort | join(" ")' "$J")" \
		"$(printf '%s\n' "$cpid" "$spid" | sort -n | paste -sd' ')" "$name/pids_as_the_container_sees_them"
}

# ---- its own pid namespace and loopback ----
run_inner "cs-agent-own-$$" "$TMP/own" --network none --sysctl net.ipv4.tcp_rfc1337=1
check own "$TMP/own"
read -r cpid spid <"$TMP/own/pids"
assert_eq "$([ "$cpid" -lt 100 ] && [ "$spid" -lt 100 ] && echo small)" small own/pids_are_the_namespaces
assert_eq "$(jqn '.run.pid_namespace.child' "$TMP/own/p.json")" true own/json_says_child_namespace
grep -q 'child pid namespace' "$TMP/own/p.err" && ok own/stderr_says_namespace ||
	fail own/stderr_says_namespace "$(head -c 400 "$TMP/own/p.err")"
# What it cannot see: a host pid, one message naming the cause and the
# fix, wrapped at 80 columns (continuation lines indented; it was one line
# of ~280 columns).
if [[ -s $TMP/own/outside.err ]]; then
	msg_join "$TMP/own/outside.err" >"$TMP/own/outside.msg"
	assert_eq "$(cat "$TMP/own/outside.rc") $(wc -l <"$TMP/own/outside.msg")" "1 1" own/outside_pid_one_message
	fits80 own/outside_pid "$TMP/own/outside.err"
	grep -q "pid namespace" "$TMP/own/outside.msg" && grep -q -- "--pid=host" "$TMP/own/outside.msg" &&
		ok own/outside_pid_said || fail own/outside_pid_said "$(cat "$TMP/own/outside.err")"
else
	fail own/outside_pid_tried "pid $$ is in the container's /proc too"
fi

# ---- the runtime's default seccomp profile: bpf() refused, said ----
# (podman's, as Docker's: bpf() and perf_event_open() with CAP_SYS_ADMIN
# only, EPERM otherwise). One message naming seccomp and the profile to
# use, wrapped at 80 columns (it was one line of 385).
podman "${PM_ARGS[@]}" run --rm --name "cs-agent-sc-$$" --network none \
	--cap-drop all --cap-add "$PM_AGENT_CAPS" "${PM_AGENT_MOUNTS[@]}" \
	-v /usr:/usr:ro -v "$REPO_ROOT:$REPO_ROOT:ro" --rootfs "$ROOT" \
	"$CONNSCOPE" attach -p 1 -d 1 >/dev/null 2>"$TMP/seccomp.err"
st=$?
msg_join "$TMP/seccomp.err" >"$TMP/seccomp.msg"
assert_eq "$st $(wc -l <"$TMP/seccomp.msg")" "1 1" seccomp/one_message
fits80 seccomp "$TMP/seccomp.err"
grep -q "seccomp filter" "$TMP/seccomp.msg" && grep -q "dist/container/seccomp.sh" "$TMP/seccomp.msg" &&
	ok seccomp/said || fail seccomp/said "$(cat "$TMP/seccomp.err")"

# ---- the host's pid namespace, a network namespace of the test's ----
fx_twns agentct
run_inner "cs-agent-host-$$" "$TMP/host" --pid=host --network "ns:/run/netns/$NS"
check host "$TMP/host"
assert_eq "$(jqn '.run.pid_namespace.child' "$TMP/host/p.json")" false host/json_says_host_namespace
assert_eq "$(pm ps -aq | wc -l)" 0 cleanup/no_container
exit 0
