#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Requests and bytes of a server that reads its requests with splice()
# (#23). sock_recv_length fires in sock_recvmsg, which splice()'s
# tcp_read_sock never passes: the server's reads went uncounted, and its
# 4 keep-alive connections carrying 200 requests showed 4 requests (one
# turn, its sends, a connection) and 0 bytes received. The reads are
# counted where they move copied_seq (tcp:tcp_rcv_space_adjust), whatever
# the way of reading; the same server reading with recv() is the control.
# A server that peeks at each request before it reads it: a peek moves
# no read position, and counts nothing.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
FX=$TESTS_DIR/fixtures
C=4
N=200

busy_on_port() {
	ss -Htan "( sport = :$1 or dport = :$1 )" | awk '$1 != "LISTEN" && $1 != "TIME-WAIT"' | wc -l
}

# read_case NAME [splice]: the server traced from before the client's
# first connect until every connection is closed on both sides.
read_case() {
	local name=$1 J=$TMP/$1.json P SPID PORT
	shift
	fix_start "${name}s" python3 "$FX/keepalive.py" server "$@" &&
		fix_expect "${name}s" "listening *" 10 || { fail "$name/start" server; return; }
	read -r _ PORT SPID <<<"$FIX_LINE"
	fix_start "${name}c" python3 "$FX/keepalive.py" client "$PORT" &&
		fix_expect "${name}c" "ready *" 10 || { fail "$name/start" client; return; }
	cs_attach "$J" "$TMP/$name.err" -p "$SPID" -d 120 -i 1 -j ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return; }
	fix_cmd "${name}c" "open $C" '@(opened|error) *' 10
	assert_eq "$FIX_LINE" "opened $C" "$name/fixture_open"
	fix_cmd "${name}c" "go $N" '@(done|error) *' 60
	assert_eq "$FIX_LINE" "done $N" "$name/fixture_requests"
	fix_cmd "${name}c" close '@(closed|error) *' 10
	assert_eq "$FIX_LINE" "closed $C" "$name/fixture_closed"
	# The server's own close follows when it reads the EOF.
	wait_for "[ \$(busy_on_port $PORT) -eq 0 ]" 20 ||
		fail "$name/sockets_closed" "$(busy_on_port "$PORT") sockets still open on :$PORT"
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	fix_send "${name}c" exit
	fix_send "${name}s" exit
	P=".processes[] | select(.pid == $SPID) | .reuse"
	assert_eq "$(jqn "$P | [.connections_accepted, .connections_closed, .requests] | @tsv" "$J")" \
		"$(printf '%s\t%s\t%s' "$C" "$C" "$N")" "$name/server_requests"
	# "GET\n" in, "OK\n" out, each request.
	assert_eq "$(jqn "$P | [.bytes_received, .bytes_sent] | @tsv" "$J")" \
		"$(printf '%s\t%s' $((N * 4)) $((N * 3)))" "$name/server_bytes"
	assert_eq "$(jqn "$P | .endpoints[] | select(.endpoint == \"listen 127.0.0.1:$PORT\") | .requests_per_conn" "$J")" \
		"$((N / C))" "$name/server_requests_per_conn"
}

# seed_case NAME [MODE]: 4 keep-alive connections carry M requests
# before the attach and N after; the server's books count those after
# only. Held since before the attach, each is adopted at its first read
# after it, where the read position (tcp_rcv_space_adjust's count) held
# everything it ever read: 4 connections with 100 requests before and
# 40 after showed 40 requests, 120 bytes sent and 560 received.
seed_case() {
	local name=$1 J=$TMP/$1.json P SPID PORT M=100 N=40
	shift
	fix_start "${name}s" python3 "$FX/keepalive.py" server "$@" &&
		fix_expect "${name}s" "listening *" 10 || { fail "$name/start" server; return; }
	read -r _ PORT SPID <<<"$FIX_LINE"
	fix_start "${name}c" python3 "$FX/keepalive.py" client "$PORT" &&
		fix_expect "${name}c" "ready *" 10 || { fail "$name/start" client; return; }
	fix_cmd "${name}c" "open $C" '@(opened|error) *' 10
	assert_eq "$FIX_LINE" "opened $C" "$name/fixture_open"
	fix_cmd "${name}c" "go $M" '@(done|error) *' 60
	assert_eq "$FIX_LINE" "done $M" "$name/fixture_requests_before"
	cs_attach "$J" "$TMP/$name.err" -p "$SPID" -d 120 -i 1 -j ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return; }
	fix_cmd "${name}c" "go $N" '@(done|error) *' 60
	assert_eq "$FIX_LINE" "done $N" "$name/fixture_requests"
	fix_cmd "${name}c" close '@(closed|error) *' 10
	assert_eq "$FIX_LINE" "closed $C" "$name/fixture_closed"
	wait_for "[ \$(busy_on_port $PORT) -eq 0 ]" 20 ||
		fail "$name/sockets_closed" "$(busy_on_port "$PORT") sockets still open on :$PORT"
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	fix_send "${name}c" exit
	fix_send "${name}s" exit
	P=".processes[] | select(.pid == $SPID) | .reuse"
	assert_eq "$(jqn "$P | [.requests, .bytes_received, .bytes_sent] | @tsv" "$J")" \
		"$(printf '%s\t%s\t%s' "$N" $((N * 4)) $((N * 3)))" "$name/server_after_attach_only"
}

read_case recv
read_case splice splice
read_case peek peek
seed_case seed_recv
seed_case seed_peek peek
