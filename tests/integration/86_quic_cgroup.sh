#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The QUIC wire unit's cgroup programs go on the targets' own cgroup v2
# directories, not the root (#23: nothing that runs for the rest of the
# machine). A QUIC server and a driver whose gtlsclient children are traced
# (--children) live in a cgroup of their own; an untraced process in
# another cgroup churns TCP and sends UDP. Checked: the agent's cgroup links
# (its fdinfo: cgroup_id) and bpftool's view of both cgroups and the root;
# the packet programs' own count of untraced datagrams they ran for
# (unowned_datagrams) stays 0; the QUIC counts stay exact; nothing is left.
# A target in a cgroup below another's: one attachment, at the ancestor,
# counts exact; the same with --cgroup spelled with a trailing slash or
# relative. Then the agent in a cgroup namespace of its own, the
# target outside it: said, not seen, beside the root's reason (--comm).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

quic_setup www
cg_make quict
CGT=$CG
cg_make quico
CGO=$CG

# agent_links PID: "ATTACH_TYPE CGROUP_ID" for each cgroup link PID holds.
agent_links() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		grep -qs '^link_type:[[:space:]]*cgroup' "$f" || continue
		awk '/^attach_type:/ {t = $2} /^cgroup_id:/ {c = $2} END {print t, c}' "$f"
	done | sort
}
# ours_at DIR: how many of the agent's programs bpftool lists attached at DIR.
ours_at() {
	local ids
	ids=$(bpf_owned "$CS_PID" | awk '$1 == "prog" {print $2}' | paste -sd' ')
	# Nothing attached: no output at all, hence -s.
	bpftool cgroup show "$1" -j 2>/dev/null | jq -s --arg ids " $ids " \
		'[.[] | .[]? | objects | select(has("id")) | .id as $i | select($ids | contains(" \($i) "))] | length'
}

PA=$(udp_free_port)
spawn_bg "${CG_EXEC[@]}" "$CGT" bash -c 'exec "${@:2}" >"$1" 2>&1' srv "$TMP/gtls.log" \
	gtlsserver -q -d "$TMP/www" 127.0.0.1 "$PA" "$TMP/key.pem" "$TMP/cert.pem"
SPID=$BG_PID
wait_for "[[ -n \$(ss -Hlun 'sport = :$PA') ]]" 10 || { fail setup/server "gtlsserver did not bind $PA"; exit 1; }
fix_start drv "${CG_EXEC[@]}" "$CGT" "$TESTS_DIR/quic_driver.sh"
fix_expect drv 'ready *' 10 || { fail setup/driver "no ready line"; exit 1; }
DPID=${FIX_LINE#ready }
assert_eq "$(grep -c "^0::/${CGT#"$CG_MNT"/}\$" /proc/"$SPID"/cgroup /proc/"$DPID"/cgroup |
	awk -F: '{n += $2} END {print n}')" 2 setup/targets_in_their_cgroup

# The untraced: a TCP pair and a UDP sender in the other cgroup.
FX_WRAP=("${CG_EXEC[@]}" "$CGO")
port=$(free_port)
fx_start osrv server -p "$port" || { fail setup/other_server "tcpfix"; exit 1; }
fx_start ocli client -p "$port" || { fail setup/other_client "tcpfix"; exit 1; }
FX_WRAP=()

cs_attach "$TMP/q.json" "$TMP/q.err" -p "$SPID,$DPID" --children -j -i 0.3 ||
	{ fail attach "$(cat "$TMP/q.err")"; exit 1; }
CS_OWNED=$(bpf_owned "$CS_PID")
idt=$(stat -c %i "$CGT")
# The server holds a UDP socket: all four on at once, at its cgroup alone
# (attach types 0, 1 ingress/egress; 2 sock_create; 34 sock_release).
assert_eq "$(agent_links "$CS_PID" | paste -sd,)" "0 $idt,1 $idt,2 $idt,34 $idt" links/target_cgroup_only
assert_eq "$(ours_at "$CGT")" 4 bpftool/target_cgroup_lists_ours
assert_eq "$(ours_at "$CG_MNT")" 0 bpftool/root_lists_none_of_ours
assert_eq "$(ours_at "$CGO")" 0 bpftool/other_cgroup_lists_none_of_ours

run() {	# NAME COMMAND: the driver's clients, none failed
	if fix_cmd drv "$2" 'done *' 120; then
		assert_eq "${FIX_LINE#done }" 0 "clients/$1"
	else
		fail "clients/$1" "driver gave no answer to: $2"
	fi
}
run sequential "seq 4 $PA"
assert_eq "$(fx_cmd ocli "churn 20")" "churned 20" other/tcp_churned
# 100 UDP datagrams there, to itself and back: untraced packets.
"${CG_EXEC[@]}" "$CGO" python3 -c '
import socket
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(("127.0.0.1", 0))
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b.bind(("127.0.0.1", 0))
for i in range(50):
    a.sendto(b"x" * 40, b.getsockname()); b.recvfrom(100)
    b.sendto(b"y" * 40, a.getsockname()); a.recvfrom(100)
print("sent 100")' >"$TMP/udp.out" 2>&1
assert_eq "$(cat "$TMP/udp.out")" "sent 100" other/udp_sent
run parallel "par 4 2 $PA"
cs_stop
assert_eq "$?" 0 attach/exit_status
J=$TMP/q.json

# Exact, as in 65_quic: 8 connections, each a client of its own.
srv() { jqn ".processes[] | select(.pid == $SPID) | .quic$1" "$J"; }
assert_eq "$(srv .by_source.wire.connections)" 8 server/wire/connections
assert_eq "$(srv .by_source.wire.handshakes_completed)" 8 server/wire/handshakes
assert_eq "$(srv .by_source.ngtcp2.connections)" 8 server/ngtcp2/connections
C='[.processes[] | select(.comm == "gtlsclient")]'
assert_eq "$(jqn "$C | length" "$J")" 8 clients/processes
assert_eq "$(jqn "$C | map(.quic.by_source.wire.connections) | add" "$J")" 8 clients/wire/connections
assert_eq "$(jqn "$C | map(.quic.by_source.wire.handshakes_completed) | add" "$J")" 8 \
	clients/wire/handshakes
# Where, and the programs' own count: no untraced datagram ran them.
assert_eq "$(jqn .agent.quic.cgroup "$J")" "$CGT" json/cgroup
assert_eq "$(jqn .agent.quic.cgroup_note "$J")" "" json/no_note
assert_eq "$(jqn .agent.quic.cgroup_swaps "$J")" 0 json/no_swaps
assert_eq "$(jqn .agent.quic.unowned_datagrams "$J")" 0 json/no_untraced_datagram
assert_eq "$(jqn .agent.quic.wire_events_lost "$J")" 0 json/nothing_lost
assert_eq "$(jqn "[.processes[] | select(.pid == $FX_PID_ocli or .pid == $FX_PID_osrv)] | length" "$J")" \
	0 other/not_traced
assert_eq "$(bpf_alive "$CS_OWNED")" "" nothing_left/bpf

# ---- a target below another's cgroup: one attachment, at the ancestor ----
# A server in CGT/sub is added first (its cgroup), then the driver in CGT:
# CGT replaces CGT/sub, or the server's sockets would run each program
# twice and its datagrams be counted twice.
mkdir "$CGT/sub" || { fail sub/mkdir "cannot make $CGT/sub"; exit 1; }
on_exit "cg_remove '$CGT/sub'"
PB=$(udp_free_port)
spawn_bg "${CG_EXEC[@]}" "$CGT/sub" bash -c 'exec "${@:2}" >"$1" 2>&1' srv2 "$TMP/gtls2.log" \
	gtlsserver -q -d "$TMP/www" 127.0.0.1 "$PB" "$TMP/key.pem" "$TMP/cert.pem"
S2=$BG_PID
wait_for "[[ -n \$(ss -Hlun 'sport = :$PB') ]]" 10 || { fail sub/server "gtlsserver did not bind $PB"; exit 1; }
cs_attach "$TMP/sub.json" "$TMP/sub.err" -p "$S2,$DPID" --children -j -i 0.3 ||
	{ fail sub/attach "$(cat "$TMP/sub.err")"; exit 1; }
CS_OWNED=$(bpf_owned "$CS_PID")
assert_eq "$(agent_links "$CS_PID" | paste -sd,)" "0 $idt,1 $idt,2 $idt,34 $idt" sub/links_at_ancestor_only
assert_eq "$(ours_at "$CGT/sub")" 0 sub/bpftool_none_below
run sub "seq 3 $PB"
cs_stop
assert_eq "$?" 0 sub/exit_status
S="$TMP/sub.json"
assert_eq "$(jqn ".processes[] | select(.pid == $S2) | .quic | [.by_source.wire.connections, .by_source.wire.handshakes_completed, .by_source.ngtcp2.connections] | join(\" \")" "$S")" \
	"3 3 3" sub/server_exact
assert_eq "$(jqn "[.processes[] | select(.comm == \"gtlsclient\") | .quic.by_source.wire.connections] | add" "$S")" \
	3 sub/clients_exact
assert_eq "$(jqn .agent.quic.cgroup "$S")" "$CGT" sub/json_cgroup
# CGT on, then CGT/sub off: one moment a datagram there ran them twice.
assert_eq "$(jqn .agent.quic.cgroup_swaps "$S")" 1 sub/json_swap_said
assert_eq "$(bpf_alive "$CS_OWNED")" "" sub/nothing_left
kill "$S2"; wait "$S2" 2>/dev/null

# ---- --cgroup spelled otherwise: the same directory, one attachment ----
# A target alone in CGS/sub is found at its own cgroup (mount + the 0::
# line); --cgroup names CGS with a trailing slash, or relative to the
# current directory: CGS all the same, the ancestor of CGS/sub. One
# attachment a program (4 links, at CGS), each datagram counted once: 10
# datagrams to itself, each seen leaving and arriving, 20 (once 40, 8
# links: both spellings held the programs, and nothing said).
cg_make quics
CGS=$CG
mkdir "$CGS/sub" || { fail spell/mkdir "cannot make $CGS/sub"; exit 1; }
on_exit "cg_remove '$CGS/sub'"
ids=$(stat -c %i "$CGS")
# shellcheck disable=SC2016
fix_start udp "${CG_EXEC[@]}" "$CGS/sub" python3 -u -c '
import socket, sys
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(("127.0.0.1", 0))
print("ready", flush=True)
for line in sys.stdin:
    for i in range(int(line)):
        a.sendto(b"q" * 40, a.getsockname()); a.recvfrom(100)
    print("sent", line.strip(), flush=True)'
fix_expect udp 'ready' 10 || { fail spell/setup "no ready line from the UDP target"; exit 1; }
spelled() {	# NAME SPELLING [DIR]: attach with --cgroup SPELLING from DIR
	local dir=${3:-$PWD}
	pushd "$dir" >/dev/null || { fail "spell/$1/cd" "cannot cd to $dir"; return; }
	cs_attach "$TMP/sp-$1.json" "$TMP/sp-$1.err" --cgroup "$2" -j -i 0.3
	local ok=$?
	popd >/dev/null || true
	((ok == 0)) || { fail "spell/$1/attach" "$(cat "$TMP/sp-$1.err")"; return; }
	CS_OWNED=$(bpf_owned "$CS_PID")
	assert_eq "$(agent_links "$CS_PID" | paste -sd,)" "0 $ids,1 $ids,2 $ids,34 $ids" \
		"spell/$1/links_at_cgs_only"
	fix_cmd udp 10 'sent *' 10 || fail "spell/$1/sent" "the UDP target did not answer"
	cs_stop
	assert_eq "$?" 0 "spell/$1/exit_status"
	assert_eq "$(jqn .agent.quic.datagrams "$TMP/sp-$1.json")" 20 "spell/$1/datagrams_once"
	assert_eq "$(jqn .agent.quic.cgroup "$TMP/sp-$1.json")" "$CGS" "spell/$1/json_cgroup"
	assert_eq "$(jqn .agent.quic.cgroup_swaps "$TMP/sp-$1.json")" 0 "spell/$1/no_swaps"
	assert_eq "$(bpf_alive "$CS_OWNED")" "" "spell/$1/nothing_left"
}
spelled plain "$CGS"
spelled trailing_slash "$CGS/"
spelled relative "./${CGS##*/}" "$CG_MNT"
spelled dotdot .. "$CGS/sub"
fix_eof udp

# ---- the agent in a cgroup namespace of its own (a container's) ----
# Its cgroup2 mount holds its namespace only; the server's cgroup lies
# outside (/proc/PID/cgroup reads "0::/../..."): no directory it can attach
# to holds it. One line says so, the JSON too, and nothing is attached.
# (The mount it inherits is the host's, rooted at "/.." in its namespace;
# a container mounts its own, rooted at its namespace: as here.)
cg_make quica
spawn_bg "${CG_EXEC[@]}" "$CG" unshare -C -m --propagation private \
	bash -c 'umount "$1" && mount -t cgroup2 cgroup2 "$1" && exec "${@:2}"' ns "$CG_MNT" \
	"$CONNSCOPE" attach -p "$SPID" -d 1 -j >"$TMP/ns.json" 2>"$TMP/ns.err"
wait "$BG_PID"
assert_eq "$?" 0 cgroupns/exit_status
# One message, wrapped at 80 columns (continuation lines indented).
assert_eq "$(grep -c "datagrams of process $SPID are not seen on the wire: its cgroup .* outside this agent's cgroup namespace" \
	<(msg_join "$TMP/ns.err"))" 1 cgroupns/said_once
fits80 cgroupns/stderr "$TMP/ns.err"
assert_eq "$(jqn '.agent.quic | [.wire, .cgroup, (.cgroup_note | test("not seen"))] | map(tostring) | join(" ")' "$TMP/ns.json")" \
	"true  true" cgroupns/json_says_not_seen
# Two reasons, both kept: the root (--comm: a process of that name may
# start anywhere) and the target not seen (once only the first one was).
spawn_bg "${CG_EXEC[@]}" "$CG" unshare -C -m --propagation private \
	bash -c 'umount "$1" && mount -t cgroup2 cgroup2 "$1" && exec "${@:2}"' ns "$CG_MNT" \
	"$CONNSCOPE" attach --comm connscope-none -p "$SPID" -d 1 -j >"$TMP/ns2.json" 2>"$TMP/ns2.err"
wait "$BG_PID"
assert_eq "$?" 0 cgroupns/root/exit_status
assert_eq "$(jqn '.agent.quic.cgroup_note | [test("on the cgroup root: --comm"), test("not seen")] | map(tostring) | join(" ")' "$TMP/ns2.json")" \
	"true true" cgroupns/root/json_note_has_both

fix_send drv quit
fx_stop ocli; fx_stop osrv
