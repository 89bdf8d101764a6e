#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Connections a server's workers accepted before the attach, still open,
# when the workers alone are traced and none of them holds the listener:
# keepalive.py's handoff server (its parent accepts and hands each
# connection to one of its 2 workers over a Unix socket, as Node.js's
# cluster module does; the workers never hold the listener), 4 keep-alive
# connections opened and each used once before `attach -p W1,W2`, then 400
# requests over them. Each worker holds 2 connections accepted under the
# listener 127.0.0.1:PORT: its books show them on the "listen
# 127.0.0.1:PORT" endpoint, held at the start, with the 200 requests they
# carried, and no endpoint row for the clients' ephemeral ports. Before,
# the listener, in no target's fds, was never noted, and each held
# connection was booked as one the worker opened to its client's port
# ("endpoint 127.0.0.1:430xx", 100 requests each; listen row none).
# Then nginx (one worker, keep-alive), its worker alone traced with 3
# connections held: the worker holds the listener too (inherited), so its
# books were right before as well: the user's case, kept as it is.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
FX=$TESTS_DIR/fixtures
J=$TMP/held.json ERR=$TMP/held.err

# pids_on STATE PORT: the pids holding a socket of 127.0.0.1:PORT in ss's
# STATE (listening, established), each once, in order, on one line.
pids_on() {
	ss -Htnp state "$1" "( sport = :$2 )" | grep -o 'pid=[0-9]*' | cut -d= -f2 |
		sort -n | uniq -c | awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1 } END { print "" }'
}

fix_start hs python3 "$FX/keepalive.py" server handoff 2 && fix_expect hs "listening *" 10 ||
	{ fail setup/server "keepalive.py server handoff 2: ${FIX_LINE:-no line}"; exit 1; }
read -r _ PORT SRV _ W1 W2 <<<"$FIX_LINE"
fix_start hc python3 "$FX/keepalive.py" client "$PORT" && fix_expect hc "ready *" 10 ||
	{ fail setup/client "keepalive.py client: ${FIX_LINE:-no line}"; exit 1; }
fix_cmd hc "open 4" '@(opened|error) *' 10
assert_eq "$FIX_LINE" "opened 4" setup/opened
# One request on each: its answer says a worker holds it by now.
fix_cmd hc "go 4" '@(done|error) *' 10
assert_eq "$FIX_LINE" "done 4" setup/each_answered
# What the case is about: the parent alone holds the listener, and each
# worker 2 of the connections it accepted (handed out in turn).
assert_eq "$(pids_on listening "$PORT")" "$SRV:1" setup/listener_parent_only
assert_eq "$(pids_on established "$PORT")" "$(printf '%s:2\n' "$W1" "$W2" | sort -n | paste -sd ' ')" \
	setup/two_held_by_each_worker

cs_attach "$J" "$ERR" -p "$W1,$W2" -j -i 0.5 ||
	{ fail attach "$(cat "$ERR")"; exit 1; }
fix_cmd hc "go 400" '@(done|error) *' 120
assert_eq "$FIX_LINE" "done 400" fixture_requests
# Stopped with the connections still open: their requests count from the
# kernel's per-socket counters at the end, as any held connection's.
cs_stop
assert_eq "$?" 0 exit_status
fix_cmd hc close '@(closed|error) *' 10
fix_send hc exit
fix_send hs exit

# What each worker's books say, for the log: endpoint, held, requests.
jq -c '.processes[] | {pid, endpoints: [.reuse.endpoints[]? | [.endpoint, .held_at_start, .requests]]}' \
	"$J" >&2
for w in "$W1" "$W2"; do
	P="(.processes[] | select(.pid == $w) | .reuse)"
	# Its one row, the listener's: both connections held there, with
	# every request they carried (round robin: 100 on each).
	assert_eq "$(jqn "[$P | .endpoints[] | .endpoint] | join(\",\")" "$J")" \
		"listen 127.0.0.1:$PORT" "worker_$w/listen_endpoint_only"
	assert_eq "$(jqn "$P | .endpoints[] | select(.endpoint == \"listen 127.0.0.1:$PORT\") |
		[.side, .opened, .accepted, .held_at_start, .requests] | @tsv" "$J")" \
		"$(printf 'listen\t0\t0\t2\t200')" "worker_$w/held_under_listen"
	assert_eq "$(jqn "$P | [.connections_opened, .connections_held_at_start, .requests] | @tsv" "$J")" \
		"$(printf '0\t2\t200')" "worker_$w/totals"
done
# No row names a port of the client's (its connections' local ports).
assert_eq "$(jqn "[.processes[].reuse.endpoints[]? | select(.side == \"remote\")] | length" "$J")" \
	0 no_ephemeral_port_endpoint
assert_eq "$(jqn ".agent.events_lost" "$J")" 0 no_events_lost

# ---- nginx, its worker alone traced: it holds the listener too ----

# The user's case: `attach -p` of nginx's worker, keep-alive connections
# it accepted before the attach still open. The worker holds the master's
# listener (inherited), so it is seeded as the worker's: the same books.
if ! command -v nginx >/dev/null; then
	skip nginx "needs nginx (Debian: nginx)"
	exit 0
fi
NPORT=$("$FIXTURES/tcpfix" freeport)
nginx_start "$TMP/nginx" "$NPORT" || { fail nginx/start "$(tail -3 "$TMP/nginx/error.log")"; exit 1; }
# http_ok FD: one HTTP/1.1 request on the connection FD, its answer read
# up to its body ("ok").
http_ok() {
	local line

	printf 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n' >&"$1" || return 1
	while read -r -t 5 -u "$1" line; do
		[[ $line == ok* ]] && return 0
	done
	return 1
}
NFDS=()
for i in 1 2 3; do
	exec {fd}<>"/dev/tcp/127.0.0.1/$NPORT" || break
	NFDS+=("$fd")
	http_ok "$fd" || fail nginx/setup_request "connection $i: no answer"
done
assert_eq "$(pids_on established "$NPORT")" "$NGX_WORKER:3" nginx/setup_worker_holds_3
NJ=$TMP/nginx.json
if cs_attach "$NJ" "$TMP/nginx.err" -p "$NGX_WORKER" -j -i 0.5; then
	answered=0
	for ((r = 0; r < 50; r++)); do
		for fd in "${NFDS[@]}"; do
			http_ok "$fd" && answered=$((answered + 1))
		done
	done
	assert_eq "$answered" 150 nginx/requests_answered
	cs_stop
	assert_eq "$?" 0 nginx/exit_status
	jq -c '.processes[] | {pid, endpoints: [.reuse.endpoints[]? | [.endpoint, .held_at_start, .requests]]}' \
		"$NJ" >&2
	P="(.processes[] | select(.pid == $NGX_WORKER) | .reuse)"
	assert_eq "$(jqn "[$P | .endpoints[] | [.endpoint, .held_at_start, .requests] | @tsv] | join(\",\")" "$NJ")" \
		"$(printf 'listen 127.0.0.1:%s\t3\t150' "$NPORT")" nginx/held_under_listen
else
	fail nginx/attach "$(cat "$TMP/nginx.err")"
fi
for fd in "${NFDS[@]}"; do
	exec {fd}>&-
done
