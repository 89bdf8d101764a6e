#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Connections handed to a server's workers after the attach, the workers
# alone traced and none of them holding the listener: keepalive.py's
# handoff server (its parent accepts and hands each connection to one of
# its 2 workers over a Unix socket, as Node.js's cluster module does by
# default on Linux), `attach -p W1,W2` before any client, in the test's
# own network namespace. Then 8 keep-alive connections with 50 requests
# each, closed by the client; 10 rounds of 2 connections with one request
# each, closed at once (most open and close between two of the agent's
# intervals); 5 rounds of 2 connections closed with no request (the
# worker's first touch of them is its close). The parent's listener and
# its children have no socket storage (its owner is not traced), and
# accept() is the parent's. Each worker's books show every connection
# handed to it under "listen 127.0.0.1:PORT", accepted, with the requests
# it answered and its closes, exact against the worker's own counts (the
# fixture's "served") and the kernel's (PassiveOpens of the namespace); no
# row names a client's port, and nothing is lost. Before, the workers'
# books were empty (0 accepted, 0 requests, of 28 and 420) and nothing
# said so: no loss, no gap. Twice: the listener made before the attach
# (marked from the start-up census), and made after it ("late": as
# Node.js's cluster makes it once a worker listens; marked at its listen).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
FX=$TESTS_DIR/fixtures
fx_netns hol

# served: the workers' own counts, "W1:C:R:E W2:C:R:E" (connections handed
# to each, requests it answered, connections it closed).
served() {
	fix_cmd hs served '@(served|error) *' 10 && echo "${FIX_LINE#served }"
}
# all_closed: every connection handed to a worker closed by it.
all_closed() {
	served | tr ' ' '\n' | awk -F: '$2 != $4 { bad = 1 } END { exit bad }'
}

# handoff_case NAME [late]: the server (its listener made after the attach
# with late), the attach, the load, the books against the counts.
handoff_case() {
	local name=$1 late=${2:-} J=$TMP/$1.json ERR=$TMP/$1.err P0 PASSIVE SERVED
	local PORT SRV W1 W2 r w pid conns reqs closed P

	fix_start hs ip netns exec "$NS" python3 "$FX/keepalive.py" server handoff 2 $late ||
		{ fail "$name/setup/server" "keepalive.py server handoff 2 $late"; return; }
	if [[ -n $late ]]; then
		fix_expect hs "workers *" 10 ||
			{ fail "$name/setup/workers" "${FIX_LINE:-no line}"; return; }
		read -r _ W1 W2 <<<"$FIX_LINE"
		cs_attach "$J" "$ERR" -p "$W1,$W2" -j -i 0.5 ||
			{ fail "$name/attach" "$(cat "$ERR")"; return; }
		fix_cmd hs listen "listening *" 10
	else
		fix_expect hs "listening *" 10
	fi
	[[ $FIX_LINE == listening* ]] ||
		{ fail "$name/setup/listening" "${FIX_LINE:-no line}"; return; }
	read -r _ PORT SRV _ W1 W2 <<<"$FIX_LINE"
	fix_start hc ip netns exec "$NS" python3 "$FX/keepalive.py" client "$PORT" &&
		fix_expect hc "ready *" 10 ||
		{ fail "$name/setup/client" "keepalive.py client: ${FIX_LINE:-no line}"; return; }
	if [[ -z $late ]]; then
		cs_attach "$J" "$ERR" -p "$W1,$W2" -j -i 0.5 ||
			{ fail "$name/attach" "$(cat "$ERR")"; return; }
	fi
	P0=$(snmp_tcp PassiveOpens)
	# Keep-alive: 8 connections, 400 requests round robin, closed by
	# the client.
	fix_cmd hc "open 8" '@(opened|error) *' 10
	assert_eq "$FIX_LINE" "opened 8" "$name/setup/opened"
	fix_cmd hc "go 400" '@(done|error) *' 120
	assert_eq "$FIX_LINE" "done 400" "$name/fixture_requests"
	fix_cmd hc close '@(closed|error) *' 10
	assert_eq "$FIX_LINE" "closed 8" "$name/setup/closed"
	# Short-lived: 2 connections, one request each, closed, 10 times;
	# then 2 closed with none, 5 times.
	for ((r = 0; r < 15; r++)); do
		fix_cmd hc "open 2" '@(opened|error) *' 10 &&
			{ ((r >= 10)) || fix_cmd hc "go 2" '@(done|error) *' 10; } &&
			fix_cmd hc close '@(closed|error) *' 10 ||
			{ fail "$name/setup/round_$r" "$FIX_LINE"; break; }
	done
	wait_for all_closed 20 || fail "$name/setup/workers_closed" "$(served)"
	PASSIVE=$(($(snmp_tcp PassiveOpens) - P0))
	SERVED=$(served)
	echo "# $name: the workers served $SERVED (pid:conns:requests:closed)," \
		"the kernel $PASSIVE passive opens" >&2
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	fix_send hc exit
	fix_send hs exit

	assert_eq "$PASSIVE" 38 "$name/kernel_passive_opens"
	assert_eq "$(tr ' ' '\n' <<<"$SERVED" | awk -F: '{ c += $2; r += $3 }
		END { print c, r }')" "38 420" "$name/fixture_served"
	# What each worker's books say, and the agent's losses, for the log.
	jq -c '.processes[] | {pid, endpoints: [.reuse.endpoints[]? |
		[.endpoint, .accepted, .held_at_start, .closed, .requests]]}' "$J" >&2
	jq -c '.agent | {losses, books_mismatch_max, books_mismatch_last}' "$J" >&2
	for w in $SERVED; do
		IFS=: read -r pid conns reqs closed <<<"$w"
		P="(.processes[] | select(.pid == $pid) | .reuse)"
		assert_eq "$(jqn "[$P | .endpoints[] | .endpoint] | join(\",\")" "$J")" \
			"listen 127.0.0.1:$PORT" "$name/worker_$pid/listen_endpoint_only"
		assert_eq "$(jqn "$P | .endpoints[] |
			select(.endpoint == \"listen 127.0.0.1:$PORT\") |
			[.side, .opened, .accepted, .held_at_start, .closed, .requests,
			 (.requests_per_conn * 1000 | round)] | @tsv" "$J")" \
			"$(printf 'listen\t0\t%s\t0\t%s\t%s\t%s' "$conns" "$closed" "$reqs" \
				"$(((reqs * 1000 + conns / 2) / conns))")" "$name/worker_$pid/under_listen"
		assert_eq "$(jqn "$P | [.connections_opened, .connections_accepted,
			.connections_closed, .requests] | @tsv" "$J")" \
			"$(printf '0\t%s\t%s\t%s' "$conns" "$closed" "$reqs")" "$name/worker_$pid/totals"
		# The client closes every one first, also those the worker
		# first touched at its own close, after the client's FIN.
		assert_eq "$(jqn "(.processes[] | select(.pid == $pid) | .totals) |
			[.closed_by_this_side, .closed_by_peer] | @tsv" "$J")" \
			"$(printf '0\t%s' "$closed")" "$name/worker_$pid/closed_first_by_the_client"
	done
	# The kernel's passive opens, every one a worker's.
	assert_eq "$(jqn '[.processes[].reuse.connections_accepted] | add' "$J")" "$PASSIVE" \
		"$name/accepted_eq_kernel"
	assert_eq "$(jqn '[.processes[].reuse.endpoints[]? | select(.side == "remote")] | length' \
		"$J")" 0 "$name/no_ephemeral_port_endpoint"
	assert_eq "$(jqn '.agent.events_lost' "$J")" 0 "$name/no_events_lost"
	assert_eq "$(jqn '.agent.losses.total' "$J")" 0 "$name/no_losses"
}

handoff_case listener_before
handoff_case listener_after late
