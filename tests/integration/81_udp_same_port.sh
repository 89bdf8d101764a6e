#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# UDP never enters the TCP books. An HTTP/3 gateway holds a TCP listener
# and a UDP socket on one port number; the UDP socket's traffic used to be
# adopted as a connection of the listener's seed (taken from the start-up
# snapshot by address and port alone), so datagrams showed up as TCP
# requests on a server with no TCP connection. Here one process holds
# both; datagram round trips must leave the TCP books empty, and TCP
# connections beside them must be counted exactly, in both modes.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
UDP_TRIPS=10
TCP_CONNS=5

# one_case NAME TCP_CONNS [ATTACH_FLAGS...]
one_case() {
	local name=$1 tcp=$2 J=$TMP/$1.json port pid sel ep
	shift 2

	fix_start "$name" python3 "$TESTS_DIR/fixtures/same_port.py" || { fail "$name/start" "python3"; return; }
	fix_expect "$name" 'listening *' 10 || { fail "$name/start" "no listening line"; return; }
	read -r _ port pid <<<"$FIX_LINE"
	cs_attach "$J" "$TMP/$name.err" -p "$pid" -j -i 0.5 "$@" ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return; }
	fix_cmd "$name" "udp $UDP_TRIPS" 'udp done *' 10 || fail "$name/udp" "${FIX_LINE:-no reply}"
	if ((tcp)); then
		fix_cmd "$name" "tcp $tcp" 'tcp done *' 10 || fail "$name/tcp" "${FIX_LINE:-no reply}"
	fi
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	sel="(.processes[] | select(.pid == $pid))"
	ep="($sel | .reuse.endpoints[] | select(.endpoint == \"listen 127.0.0.1:$port\"))"
	assert_eq "$(jqn "$sel | .reuse | [.connections_accepted, .connections_opened, .requests] | @tsv" "$J")" \
		"$(printf '%s\t%s\t%s' "$tcp" "$tcp" "$((2 * tcp))")" "$name/process_counts"
	assert_eq "$(jqn "[$ep] | map(.accepted, .requests) | @tsv" "$J")" \
		"$( ((tcp)) && printf '%s\t%s' "$tcp" "$tcp")" "$name/listener_row"
	assert_eq "$(jqn ".agent.events_lost" "$J")" 0 "$name/no_events_lost"
}

one_case udp_only 0
one_case udp_only_per_transition 0 --per-transition
one_case udp_and_tcp "$TCP_CONNS"
one_case udp_and_tcp_per_transition "$TCP_CONNS" --per-transition
