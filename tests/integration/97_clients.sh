#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The doctor speaks the client runtime it diagnoses, checked on real
# clients (#26): Node.js's http module with an http.Agent({ keepAlive:
# false }) and Python's requests (Debian's python3-requests) calling
# requests.get() per request churn a connection a request, and the churn
# finding's fix names that runtime's own setting (http.Agent keepAlive and
# maxSockets; requests.Session and HTTPAdapter pool_maxsize) sized to the
# requests in flight, and no other runtime's or server's words. Their
# healthy twins (keepAlive: true, maxSockets: 8; one Session for all
# threads) get no churn finding and hold 8 connections at the peak.
#
# The client is `connscope run`'s COMMAND (traced from before it starts),
# the server (roundhttp.py, untraced) answers in rounds of 8 requests held
# together, so exactly 8 are in flight at the peak whatever the
# scheduling: before #26 item 5 a Node client like this one was told
# "concurrency 16". Truth: the server's own counts of connections and
# requests. node_late: the same Node client against the same server
# sending its FIN 50 ms after each answer (roundhttp.py late): the client
# has its answer and has begun the next request while the old socket
# still waits for the FIN. A connection carries a request until its last
# byte read or sent, not until the first FIN: before, 16 for 8 in flight
# (9-12 where the FIN came late by the machine's load alone).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
W=8
N=400
PY=/usr/bin/python3	# Debian's, where python3-requests is installed

# Words of another runtime's or a server's fix: never in a client's.
NOT_NODE='requests\.Session|urllib3|aiohttp|MaxIdleConnsPerHost|keepalive_timeout|IdleTimeout|HttpClient|OkHttp|ab -k'
NOT_PY='http\.Agent|keepAlive|undici|MaxIdleConnsPerHost|keepalive_timeout|IdleTimeout|HttpClient|OkHttp|ab -k'

fix_start srv "$PY" "$TESTS_DIR/fixtures/roundhttp.py" "$W" && fix_expect srv "listening *" 10 ||
	{ fail server/start "roundhttp.py did not start"; exit 0; }
read -r _ PORT _ <<<"$FIX_LINE"
SRV=srv
EP=127.0.0.1:$PORT

# server_counts: "CONNECTIONS REQUESTS" server $SRV has seen so far.
server_counts() {
	fix_cmd "$SRV" stats "stats *" 10 && echo "${FIX_LINE#stats }"
}

# client_case NAME COMM [RUN FLAGS...] -- CLIENT...: run the client under
# `connscope run -j`; J is its report, CONNS and REQS what the server saw.
client_case() {
	local name=$1 before after rc
	shift
	local flags=()
	while [[ $1 != -- ]]; do flags+=("$1"); shift; done
	shift
	before=$(server_counts)
	J=$TMP/$name.json
	timeout 120 "$CONNSCOPE" run -j -i 0.3 "${flags[@]}" -- "$@" >"$J" 2>"$TMP/$name.err"
	rc=$?
	assert_eq "$rc" 0 "$name/exit_status"
	assert_eq "$(grep -c "^done $N" "$TMP/$name.err")" 1 "$name/client_done"
	grep '^done' "$TMP/$name.err" | sed "s/^/# $name: /"
	after=$(server_counts)
	CONNS=$(($(cut -d' ' -f1 <<<"$after") - $(cut -d' ' -f1 <<<"$before")))
	REQS=$(($(cut -d' ' -f2 <<<"$after") - $(cut -d' ' -f2 <<<"$before")))
	echo "# $name: server saw $CONNS connections, $REQS requests;" \
		"findings $(jqn -c '[.findings[] | .rule]' "$J")"
	assert_eq "$REQS" "$N" "$name/server_requests"
	# Neither client leaks: what it held waiting at run's gate, before
	# its exec, is not where its growth starts (a start-up ramp of 6 ->
	# 19 fds read as fd_leak before), nor is a runtime's start listed
	# just after its exec: Node's 7 fds, then 30 held to its end, read
	# as fd_leak "30 open now, up from 7" on runs of 1.5-4 s under load
	# (7 of 8 node_late runs at load 10-13) until a leak had to grow in
	# the second half of the listings too, over 2 s of listings at least
	# (a node living 1.2 s: 8, 8, 30, 33 still read as one, 2 of 40).
	assert_eq "$(jqn '[.findings[] | select(.rule == "fd_leak")] | length' "$J")" 0 \
		"$name/no_fd_leak"
}

# churn_of COMM: the churn findings of processes named COMM.
churn_of() {
	jqn "[.findings[] | select(.rule == \"churn\" and .comm == \"$1\")]" "$J"
}

# The client's row to the server: opened, requests, peak concurrency.
row_of() {
	jqn "[.processes[] | select(.comm == \"$1\") | .reuse.endpoints[] |
		select(.endpoint == \"$EP\")] | if length == 1 then .[0] | [.opened, .requests, .peak_concurrent] | @tsv
		else \"rows: \\(length)\" end" "$J"
}

# sick_asserts NAME COMM NOT_RE WANT...: one churn finding for COMM sized to
# the 8 requests in flight, each WANT in its fix before "in general:", none
# of NOT_RE anywhere in it.
sick_asserts() {
	local name=$1 comm=$2 not=$3 fix w
	shift 3
	assert_eq "$(churn_of "$comm" | jq length)" 1 "$name/churn_on_$comm"
	assert_eq "$CONNS" "$N" "$name/server_saw_a_connection_a_request"
	# node_late's row: late_asserts.
	if [[ $name != node_late ]]; then
		assert_eq "$(churn_of "$comm" | jq '.[0].concurrency')" "$W" "$name/concurrency_is_requests_in_flight"
		assert_eq "$(row_of "$comm")" "$(printf '%s\t%s\t%s' "$CONNS" "$REQS" "$W")" "$name/row_exact"
	fi
	fix=$(churn_of "$comm" | jq -r '.[0].fix // ""')
	echo "# $name fix: $fix"
	for w in "$@"; do
		assert_eq "$(jq -rn --arg f "$fix" --arg w "$w" \
			'($f | index($w)) as $i | ($f | index("in general: ")) as $g |
			 $i != null and $g != null and $i < $g')" true "$name/fix_names/$w"
	done
	assert_eq "$(jq -rn --arg f "$fix" --arg re "$not" '$f | test($re)')" false "$name/no_other_words"
}

# well_asserts NAME COMM: no churn, TIME_WAIT or port finding; 8
# connections carried all the requests, 8 at the peak.
well_asserts() {
	local name=$1 comm=$2
	assert_eq "$(jqn '[.findings[] | select(.rule == "churn" or .rule == "time_wait" or .rule == "port_exhaustion")] | length' "$J")" \
		0 "$name/silent"
	assert_eq "$CONNS" "$W" "$name/server_saw_$W"
	assert_eq "$(row_of "$comm")" "$(printf '%s\t%s\t%s' "$W" "$REQS" "$W")" "$name/row_exact"
}

# late_asserts: node_late's row and finding. Under load (8 of 120 runs
# with two node_late loops side by side at load 5-10; 0 of 30 with one)
# the kernel runs neither state program for some of the client's
# FIN_WAIT2 -> CLOSE (3 to 16 of 400): a tracefs instance on
# sock:inet_sock_set_state recorded all 400, counters at the entry of
# both handle_set_state_btf and handle_set_state_nested saw 392 (a debug
# build), and both programs' recursion_misses stayed 0 (so not the
# recursion their pair covers); no event lost, the storage never looked
# up (the programs were not entered), all 400 ends 2 s before the run
# ended (not the exit order). Why the kernel skips them is not found.
# Such a connection is missing whole (opened short of what the server
# saw) or held open to the run's end (born, no end: its request is
# missing, and each adds at most one to the peak); either way the books
# count it lost (tcp_ends_not_run, from the storages' books), and
# every request missing from the row is one of those (150 runs: exact
# in each). So the peak is the 8 in flight, exactly when every
# connection was seen whole, and at most 8 plus the held ones otherwise.
late_asserts() {
	local opened reqs peak held conc
	read -r opened reqs peak <<<"$(row_of node)"
	held=$((opened - reqs))
	conc=$(churn_of node | jq '.[0].concurrency')
	LATE_CONC=$conc	# the fix is sized to it
	echo "# node_late: row $opened $reqs $peak; server $CONNS; held open $held"
	assert_eq "$conc" "$peak" node_late/finding_says_the_peak
	assert_eq "$((REQS - reqs))" "$(jqn '.agent.losses.tcp_ends_not_run' "$J")" \
		node_late/missing_ends_counted_lost
	if ((opened == CONNS && reqs == REQS)); then
		assert_eq "$peak" "$W" node_late/peak_is_requests_in_flight
	else
		assert_eq "$((peak >= W && peak <= W + held))" 1 node_late/peak_within_ends_missing
	fi
}

# ---- Node.js ----
if ! command -v node >/dev/null; then
	fail node/installed "needs Node.js (Debian's nodejs: make test-deps)"
else
	NODE_JS=$TESTS_DIR/fixtures/nodeclient.js
	# keepAlive: false sends "Connection: close": the server closes
	# first, the client's sockets pass through CLOSE_WAIT. Both modes.
	client_case node_close -- node "$NODE_JS" "$PORT" "$W" "$N" close
	sick_asserts node_close node "$NOT_NODE" \
		"client (Node.js): http.Agent({ keepAlive: true, maxSockets: $W })"
	client_case node_close_pt --per-transition -- node "$NODE_JS" "$PORT" "$W" "$N" close
	sick_asserts node_close_pt node "$NOT_NODE" \
		"client (Node.js): http.Agent({ keepAlive: true, maxSockets: $W })"
	client_case node_keep -- node "$NODE_JS" "$PORT" "$W" "$N" keep
	well_asserts node_keep node
	if fix_start srvlate "$PY" "$TESTS_DIR/fixtures/roundhttp.py" "$W" late &&
		fix_expect srvlate "listening *" 10; then
		read -r _ LPORT _ <<<"$FIX_LINE"
		SRV=srvlate EP=127.0.0.1:$LPORT
		# Traced 2 s past the client's exit: its last sockets end
		# when the late FINs come (their ends carry their requests).
		client_case node_late --cooldown 2 -- node "$NODE_JS" "$LPORT" "$W" "$N" close
		late_asserts
		sick_asserts node_late node "$NOT_NODE" \
			"client (Node.js): http.Agent({ keepAlive: true, maxSockets: $LATE_CONC })"
		fix_send srvlate exit
		SRV=srv EP=127.0.0.1:$PORT
	else
		fail node_late/start "roundhttp.py late did not start"
	fi
fi

# ---- Python: requests (urllib3 underneath) ----
if ! "$PY" -c 'import requests' 2>/dev/null; then
	fail python/installed "needs Debian's python3-requests (make test-deps)"
else
	PY_CLIENT=$TESTS_DIR/fixtures/pyclient.py
	client_case py_get -- "$PY" "$PY_CLIENT" "$PORT" "$W" "$N" get
	sick_asserts py_get python3 "$NOT_PY" \
		"client (Python): requests: one requests.Session() for all calls" \
		"HTTPAdapter(pool_maxsize=$W)" "PoolManager(maxsize=$W)"
	client_case py_session -- "$PY" "$PY_CLIENT" "$PORT" "$W" "$N" session
	well_asserts py_session python3
fi

fix_send srv exit
