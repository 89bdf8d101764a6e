#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Which listen() the kernel side marks for handed connections (handoff_ports
# in bpf/tcpstate.bpf.c, 80_reuse_handoff_late.sh): an untraced one in a
# network namespace the agent reads, at once; not one in another namespace
# (another pod of the node, another test). A mark costs every untraced
# socket at that port, in every namespace, a look at the task and a lookup
# at each send and read for the rest of the run: before, any listen() on
# the host marked its port (review s43 R12).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

fx_netns hsa
OTHER=connscope-hsb-$$
new_netns "$OTHER" || { fail netns_other "ip netns add $OTHER failed"; exit 1; }
TMP=$(lib_tmpdir)
LISTEN='import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print("listening", s.getsockname()[1], flush=True)
sys.stdin.readline()'

spawn_bg ip netns exec "$NS" sleep 600
TARGET=$BG_PID
CS_WRAP=(ip netns exec "$NS")
cs_attach "$TMP/a.json" "$TMP/a.err" -p "$TARGET" -j -i 0.5 ||
	{ fail attach "$(cat "$TMP/a.err")"; exit 1; }
BSS=$(agent_map_id "$CS_PID" tcpstate.bss) || { fail bss_map "no tcpstate.bss held by $CS_PID"; exit 1; }
# marked PORT: the kernel side's mark for PORT, 0 or 1.
marked() {
	bpftool map dump id "$BSS" -j |
		jq -r --argjson p "$1" '.[0].formatted.value[".bss"][] | select(.handoff_ports) | .handoff_ports[$p]'
}

# The near listener first: its listen() marks its port. Then the other
# namespace's, which the census never reads, so a mark of its port can only
# come from the kernel side at its listen(). Two namespaces draw their
# ports apart and may draw the same one (about once in 28,000): then the
# far listener is made again, a few times (its port was marked already).
fix_start near ip netns exec "$NS" python3 -c "$LISTEN" && fix_expect near 'listening *' 10 ||
	{ fail near_listening "${FIX_LINE:-no line}"; exit 1; }
NEAR=${FIX_LINE#listening }
for ((try = 1; try <= 5; try++)); do
	fix_start far ip netns exec "$OTHER" python3 -c "$LISTEN" && fix_expect far 'listening *' 10 ||
		{ fail far_listening "${FIX_LINE:-no line}"; exit 1; }
	FAR=${FIX_LINE#listening }
	[[ $FAR != "$NEAR" ]] && break
	fix_send far ""
done
[[ $FAR != "$NEAR" ]] || { fail distinct_ports "5 listeners at $NEAR, the other's port"; exit 1; }
wait_for "[ \"\$(marked $NEAR)\" = 1 ]" 10
assert_eq "$(marked "$NEAR")" 1 untraced_listen_in_the_targets_namespace_marked
assert_eq "$(marked "$FAR")" 0 untraced_listen_elsewhere_not_marked
fix_send near ""
fix_send far ""
cs_stop
assert_eq "$?" 0 exit_status
assert_eq "$(jqn '.agent.events_lost' "$TMP/a.json")" 0 nothing_lost
