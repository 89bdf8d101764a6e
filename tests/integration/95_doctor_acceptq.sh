#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A server's concurrency counts connections from when accept() returned
# them, not while they wait in its accept queue (#26: a prefork child
# showed peak_concurrent 8 counting queued connections). acceptq.py: 8
# clients connect and send their request while the server accepts
# nothing (the kernel's queue holds 8: ss's Recv-Q), then the server
# accepts, answers and closes them one at a time. One connection at a
# time carried a request on the server: its listener's peak_concurrent is
# 1, with 8 accepted. Before: 8. Both record modes: per-transition
# records carry accept()'s time; socket-storage summaries carry the time
# the accepting process first used the socket (that mode traces no
# syscall; the first send, receive or close in a task is where it learns
# accept() returned it). Before, that mode counted a connection from its
# handshake's end, and its peak stayed 8.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=8
AQ=$TESTS_DIR/fixtures/acceptq.py

acceptq_case() {
	local name=$1 J=$TMP/$1.json q
	shift
	fix_start "${name}s" python3 "$AQ" server && fix_expect "${name}s" "listening *" 10 ||
		{ fail "$name/start" server; return; }
	read -r _ PORT SPID <<<"$FIX_LINE"
	fix_start "${name}c" python3 "$AQ" client "$PORT" && fix_expect "${name}c" "ready *" 10 ||
		{ fail "$name/start" client; return; }
	spawn_bg "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$SPID" "$@" >"$J" 2>"$TMP/$name.err"
	DR_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$TMP/$name.err' || ! kill -0 $DR_PID 2>/dev/null" 30
	if ! grep -q '^connscope: tracing' "$TMP/$name.err"; then
		fail "$name/attach" "$(cat "$TMP/$name.err")"
		return
	fi
	fix_cmd "${name}c" "connect $N" "connected *" 10
	assert_eq "$FIX_LINE" "connected $N" "$name/connected"
	fix_cmd "${name}c" send "sent *" 10
	assert_eq "$FIX_LINE" "sent $N" "$name/sent"
	# The kernel's truth: all 8 wait in the accept queue, requests in.
	q=$(ss -Hltn "( sport = :$PORT )" | awk '{print $2}')
	assert_eq "$q" "$N" "$name/kernel_queue_holds_$N"
	fix_cmd "${name}s" "serve $N" "served *" 30
	assert_eq "$FIX_LINE" "served $N" "$name/served"
	fix_cmd "${name}c" read "@(read|error) *" 30
	assert_eq "$FIX_LINE" "read $N" "$name/answers"
	kill -INT "$DR_PID"
	wait "$DR_PID"
	assert_eq "$?" 0 "$name/exit_status"
	echo "# $name: $(jqn -c "[.processes[] | select(.pid == $SPID) | .reuse.endpoints[] |
		{endpoint, accepted, peak_concurrent}]" "$J")"
	assert_eq "$(jqn "[.processes[] | select(.pid == $SPID) | .reuse.endpoints[] |
		select(.endpoint == \"listen 127.0.0.1:$PORT\")] | if length == 1 then .[0] |
		[.accepted, .peak_concurrent] | @tsv else \"rows: \\(length)\" end" "$J")" \
		"$(printf '%s\t1' "$N")" "$name/peak_is_the_one_carrying_not_the_queue"
	fix_send "${name}c" exit
	fix_send "${name}s" exit
}

acceptq_case per_transition --per-transition
acceptq_case storage
