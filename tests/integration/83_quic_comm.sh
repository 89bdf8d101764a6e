#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Clients named by --comm get the QUIC packet programs and the libngtcp2
# probes before they can send: a gtlsclient joins the targets at its exec
# (in the kernel), its first Initial goes out within milliseconds, and the
# programs used to be attached only once the agent heard of its UDP socket
# (the wire missed it) and the probes only at an interval's scan (ngtcp2
# saw nothing). 10 short clients, one after another: each counted once,
# as client, handshake completed, by the wire and by ngtcp2. The same
# again for clients that join by --cgroup (#27: "whatever way the targets
# are named"): each started in a cgroup the test makes, after attach.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

quic_setup www
N=10

PA=$(udp_free_port)
quic_server "$TMP" "$PA" || { fail setup/server "gtlsserver did not bind $PA"; exit 1; }
cs_attach "$TMP/c.json" "$TMP/c.err" --comm gtlsclient -j -i 0.5 ||
	{ fail attach "$(cat "$TMP/c.err")"; exit 1; }
quic_fetch "$PA" "$N"
cs_stop
assert_eq "$?" 0 attach/exit_status
C='[.processes[] | select(.comm == "gtlsclient")]'
J=$TMP/c.json
assert_eq "$(jqn "$C | length" "$J")" "$N" clients/each_a_process
assert_eq "$(jqn "$C | map(select(.quic.by_source.wire.connections == 1 and
	.quic.by_source.wire.handshakes_completed == 1 and .quic.as_client == 1 and
	.quic.as_server == 0 and .quic.handshakes_failed == 0)) | length" "$J")" "$N" clients/wire_exact
assert_eq "$(jqn "$C | map(.quic.by_source.ngtcp2.connections // 0) | add" "$J")" "$N" clients/ngtcp2_saw_each
assert_eq "$(jqn "$C | map(.quic.connections) | add" "$J")" "$N" clients/headline
assert_eq "$(jqn .agent.quic.wire_events_lost "$J")" 0 agent/nothing_lost

# ---- --cgroup: clients that start in a cgroup the test makes ----
MNT=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[[ -n $MNT ]] || { fail cgroup/mount "no cgroup2 mount in /proc/self/mountinfo"; exit 0; }
CG=$MNT/connscope-quic-$$
mkdir "$CG" || { fail cgroup/mkdir "cannot make $CG"; exit 0; }
on_exit "rmdir '$CG'"
cs_attach "$TMP/g.json" "$TMP/g.err" --cgroup "$CG" -j -i 0.5 ||
	{ fail cgroup/attach "$(cat "$TMP/g.err")"; exit 0; }
# Each client: a shell that moves itself into the cgroup, then execs it.
for ((i = 0; i < N; i++)); do
	bash -c 'echo $BASHPID >"$1/cgroup.procs" && exec "${@:2}"' _ "$CG" \
		gtlsclient -q --exit-on-all-streams-close 127.0.0.1 "$PA" \
		"https://127.0.0.1:$PA/index.html" >/dev/null 2>&1 </dev/null
done
cs_stop
assert_eq "$?" 0 cgroup/exit_status
J=$TMP/g.json
assert_eq "$(jqn "$C | length" "$J")" "$N" cgroup/each_a_process
assert_eq "$(jqn "$C | map(select(.quic.by_source.wire.connections == 1 and
	.quic.by_source.wire.handshakes_completed == 1 and .quic.as_client == 1 and
	.quic.as_server == 0 and .quic.handshakes_failed == 0)) | length" "$J")" "$N" cgroup/wire_exact
assert_eq "$(jqn "$C | map(.quic.by_source.ngtcp2.connections // 0) | add" "$J")" "$N" cgroup/ngtcp2_saw_each
assert_eq "$(jqn "$C | map(.quic.connections) | add" "$J")" "$N" cgroup/headline
assert_eq "$(jqn .agent.quic.wire_events_lost "$J")" 0 cgroup/nothing_lost
