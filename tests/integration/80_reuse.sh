#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Connection reuse in attach, exact against what the workload knows it did:
# the poolfix client counts every connect() and the requests it sent, so
# opened, accepted, requests, requests per connection, concurrency and the
# churn finding must match it to the unit on both ends. Then a real server
# (nginx) under a real load generator (ab), with and without keep-alive.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

need_fixture poolfix
POOLFIX=$FIXTURES/poolfix
TMP=$(lib_tmpdir)


# assert_true JQ_EXPR FILE NAME: the expression must print true.
assert_true() {
	assert_eq "$(jqn "$1" "$2")" true "$3"
}

# pf_start NAME ARGS...: a poolfix process on pipes (lib.sh's fix_start),
# once it said "listening PORT PID" or "ready PID"; the line is in FIX_LINE.
pf_start() {
	local name=$1
	shift
	fix_start "$name" "$POOLFIX" "$@" || return 1
	fix_expect "$name" '@(listening|ready) *' 10
}

# Sockets on PORT that are neither listening nor in TIME_WAIT: while there
# are any, some connection has not reached CLOSE, and its requests are not
# in the books yet.
busy_on_port() {
	ss -Htan "( sport = :$1 or dport = :$1 )" | awk '$1 != "LISTEN" && $1 != "TIME-WAIT"' | wc -l
}

# pool_case NAME WORKERS REQUESTS POOL [CLIENT_FLAGS...]: server and client
# traced together from before the first connect until every connection is
# closed on both sides. Leaves the JSON in $TMP/NAME.json, the fixtures'
# numbers in C (opened), K (max_concurrent), PORT, SPID and CPID, and the
# jq selectors SEL_C, SEL_S (the processes), EP_C, EP_S (their endpoint
# rows). Returns nonzero when there is nothing to assert on.
pool_case() {
	local name=$1 w=$2 n=$3 pool=$4 srv=${1}_srv cli=${1}_cli r x
	shift 4

	C='' K=''
	pf_start "$srv" server || { fail "$name/start" "server: $FIX_LINE"; return 1; }
	read -r _ PORT SPID <<<"$FIX_LINE"
	pf_start "$cli" client -p "$PORT" -w "$w" -n "$n" -P "$pool" "$@" ||
		{ fail "$name/start" "client"; return 1; }
	CPID=${FIX_LINE#ready }
	cs_attach "$TMP/$name.json" "$TMP/$name.err" -p "$CPID,$SPID" -j -i 0.5 ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return 1; }
	if ! fix_cmd "$cli" go '@(done|error) *' 120 || [[ $FIX_LINE != done* ]]; then
		fail "$name/client_done" "${FIX_LINE:-no reply}"
		cs_stop
		return 1
	fi
	read -r _ _ r _ C _ x _ K <<<"$FIX_LINE"
	assert_eq "$r" "$n" "$name/fixture_did_all_requests"
	# The client closed its idle connections before it answered; the
	# server's passive close follows when it reads the FIN.
	wait_for "fix_cmd $srv stats 'stats *' 5 && [[ \$FIX_LINE == 'stats accepted $C requests $n open 0' ]]" 20 ||
		fail "$name/server_closed_all" "$FIX_LINE, want accepted $C requests $n open 0"
	wait_for "[ \$(busy_on_port $PORT) -eq 0 ]" 20 ||
		fail "$name/sockets_closed" "$(busy_on_port "$PORT") sockets still open on :$PORT"
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	# In parentheses: jq's comma binds tighter than its pipe.
	SEL_C="(.processes[] | select(.pid == $CPID))"
	SEL_S="(.processes[] | select(.pid == $SPID))"
	EP_C="($SEL_C | .reuse.endpoints[] | select(.endpoint == \"127.0.0.1:$PORT\"))"
	EP_S="($SEL_S | .reuse.endpoints[] | select(.endpoint == \"listen 127.0.0.1:$PORT\"))"
	[[ $x == "$C" ]] || fail "$name/fixture_closed_all" "closed $x of $C"
	return 0
}

# The books that must match the fixture whatever the pool does: N requests
# over exactly C connections, each end on its own endpoint row, the peak the
# client saw, histograms and heatmaps that hold every closed connection.
common_asserts() {
	local name=$1 n=$2 J=$TMP/$1.json

	assert_eq "$(jqn "$SEL_C | .reuse.connections_opened" "$J")" "$C" "$name/client_opened_eq_fixture"
	assert_eq "$(jqn "$SEL_C | .reuse.connections_accepted" "$J")" 0 "$name/client_accepted_none"
	assert_eq "$(jqn "$SEL_C | .reuse.connections_closed" "$J")" "$C" "$name/client_closed"
	assert_eq "$(jqn "$SEL_C | .reuse.requests" "$J")" "$n" "$name/client_requests"
	assert_eq "$(jqn "$SEL_S | .reuse.connections_accepted" "$J")" "$C" "$name/server_accepted_eq_fixture"
	assert_eq "$(jqn "$SEL_S | .reuse.connections_opened" "$J")" 0 "$name/server_opened_none"
	assert_eq "$(jqn "$SEL_S | .reuse.connections_closed" "$J")" "$C" "$name/server_closed"
	assert_eq "$(jqn "$SEL_S | .reuse.requests" "$J")" "$n" "$name/server_requests"
	# reuse_ratio = 1 - connections / requests, never below 0 (fewer
	# requests than connections is no reuse), printed with 6 decimals.
	assert_true "[$SEL_C, $SEL_S] | all(.reuse.reuse_ratio - ([0, 1 - $C / $n] | max) | fabs < 5e-7)" "$J" \
		"$name/reuse_ratio"

	assert_eq "$(jqn "[$EP_C] | length" "$J")" 1 "$name/client_endpoint_row"
	assert_eq "$(jqn "$EP_C | [.side, .opened, .accepted, .requests] | @tsv" "$J")" \
		"$(printf 'remote\t%s\t0\t%s' "$C" "$n")" "$name/client_endpoint_counts"
	assert_true "$EP_C | .requests_per_conn - ($n / $C) | fabs < 5e-4" "$J" \
		"$name/client_endpoint_requests_per_conn"
	assert_true "$EP_C | .reuse_ratio - ([0, 1 - $C / $n] | max) | fabs < 5e-7" "$J" \
		"$name/client_endpoint_reuse_ratio"
	# The pool's own concurrency: connections the client held at once.
	assert_eq "$(jqn "$EP_C | .peak_concurrent" "$J")" "$K" "$name/client_peak_concurrent_eq_fixture"
	assert_eq "$(jqn "[$EP_S] | length" "$J")" 1 "$name/server_endpoint_row"
	assert_eq "$(jqn "$EP_S | [.side, .opened, .accepted, .requests] | @tsv" "$J")" \
		"$(printf 'listen\t0\t%s\t%s' "$C" "$n")" "$name/server_endpoint_counts"
	assert_true "$EP_S | .requests_per_conn - ($n / $C) | fabs < 5e-4" "$J" \
		"$name/server_endpoint_requests_per_conn"
	# No row but the one: all traffic went to one port.
	assert_eq "$(jqn "[$SEL_C, $SEL_S | .reuse.endpoints | length] | @tsv" "$J")" \
		"$(printf '1\t1')" "$name/one_endpoint_each"

	# Every connect() had a handshake; every closed connection is in the
	# histograms once, on each side.
	assert_eq "$(jqn "$SEL_C | .reuse.handshake_us_log2 | add" "$J")" "$C" "$name/client_handshakes"
	assert_true "[$SEL_C, $SEL_S | .reuse | (.requests_per_conn_log2 | add) == .connections_closed and
		(.lifetime_ms_log2 | add) == .connections_closed] | all" "$J" "$name/histograms_hold_closed"
	assert_true "$EP_C | .lifetime_ms_p50 <= .lifetime_ms_p99" "$J" "$name/lifetime_quantiles_ordered"

	assert_true "[$SEL_C, $SEL_S | .heatmaps | .lifetime, .requests_per_conn |
		(.rows | length) >= 1 and (.cells | length) == (.rows | length) and
		.bucket_seconds > 0] | all" "$J" "$name/heatmaps_exist"
	assert_true "[$SEL_C, $SEL_S | (.heatmaps.requests_per_conn.cells | flatten | add) ==
		.reuse.connections_closed] | all" "$J" "$name/heatmap_requests_per_conn_sums_to_closed"
	assert_true "[$SEL_C, $SEL_S | (.heatmaps.lifetime.cells | flatten | add) ==
		.reuse.connections_closed] | all" "$J" "$name/heatmap_lifetime_sums_to_closed"
	assert_eq "$(jqn ".agent.events_lost" "$J")" 0 "$name/no_events_lost"
}

# The churn findings for the client's endpoint, as a jq array.
findings_sel() {
	echo "[.findings[] | select(.kind == \"churn\" and .pid == $CPID and .endpoint == \"127.0.0.1:$PORT\")]"
}

# churn_asserts NAME N: the one finding says what the fixture did.
churn_asserts() {
	local name=$1 n=$2 J=$TMP/$1.json f

	f=$(findings_sel)
	assert_eq "$(jqn "$f | length" "$J")" 1 "$name/churn_finding"
	assert_eq "$(jqn "${f}[0] | [.connections, .requests, .concurrency] | @tsv" "$J")" \
		"$(printf '%s\t%s\t%s' "$C" "$n" "$K")" "$name/churn_finding_counts"
	assert_eq "$(jqn "${f}[0].text" "$J")" \
		"pool to 127.0.0.1:$PORT churns: $C connections for $n requests at concurrency $K; a pool that keeps >= $K idle connections would open $K" \
		"$name/churn_finding_text"
}

# ---- a pool as large as the workers: one connection each, kept ----

if pool_case pool8 8 800 8; then
	J=$TMP/pool8.json
	assert_eq "$C" 8 pool8/fixture_opened_one_per_worker
	assert_eq "$K" 8 pool8/fixture_peak_is_workers
	common_asserts pool8 800
	assert_eq "$(jqn "$SEL_C | .reuse.connections_opened" "$J")" 8 pool8/client_opened
	assert_eq "$(jqn "$EP_C | .requests_per_conn" "$J")" 100 pool8/requests_per_conn_100
	assert_true "[($SEL_C, $SEL_S | .reuse.reuse_ratio), ($EP_C | .reuse_ratio)] |
		length == 3 and all(. - 0.99 | fabs < 1e-9)" "$J" pool8/reuse_ratio_0.99
	assert_eq "$(jqn "$(findings_sel) | length" "$J")" 0 pool8/no_churn_finding
fi

# ---- pool 2 for 8 workers, in rounds: the churn is known in advance ----

# -b: 100 rounds of 8; each round keeps 2 idle and closes 6, so the next
# one dials 6: 8 + 99 * 6 connections, 8 of them open at once.
if pool_case pool2_rounds 8 800 2 -b; then
	assert_eq "$C" 602 pool2_rounds/fixture_opened
	assert_eq "$K" 8 pool2_rounds/fixture_peak_is_workers
	common_asserts pool2_rounds 800
	churn_asserts pool2_rounds 800
fi

# ---- pool 2 for 8 free-running workers: the churn varies, the books not ----

if pool_case pool2 8 800 2; then
	echo "pool2: fixture opened $C, max_concurrent $K" >&2
	common_asserts pool2 800
	# Whether it is a finding at all depends on the scheduling; the rule
	# (dr_churn_costs, user/books/doctor.h): more than 3 connections per
	# unit of concurrency and handshakes at least 5 % of the round trips,
	# C / (C + 800) >= 0.05, that is 19 C >= 800.
	if ((C >= 4 && C > 3 * K && 19 * C >= 800)); then
		churn_asserts pool2 800
	else
		assert_eq "$(jqn "$(findings_sel) | length" "$TMP/pool2.json")" 0 pool2/no_churn_finding
	fi
fi

# ---- connections still open when attach stops ----

# -H keeps the 4 idle connections: their requests count all the same, from
# the kernel's per-socket counters at the end.
pf_start held_srv server || fail held/start server
read -r _ PORT SPID <<<"$FIX_LINE"
pf_start held_cli client -p "$PORT" -w 4 -n 400 -P 4 -H || fail held/start client
CPID=${FIX_LINE#ready }
if cs_attach "$TMP/held.json" "$TMP/held.err" -p "$CPID,$SPID" -j -i 0.5; then
	fix_cmd held_cli go '@(done|error) *' 60
	assert_eq "$FIX_LINE" "done requests 400 opened 4 closed 0 max_concurrent 4" held/fixture_done
	cs_stop
	J=$TMP/held.json c="(.processes[] | select(.pid == $CPID))" s="(.processes[] | select(.pid == $SPID))"
	# And their bytes: "GET\n" out, "OK\n" back, 400 times. The server's
	# last answer on each held connection is counted by the report's own
	# look at the socket where sends are counted from write_seq (its
	# requests, (199 + 1) / 2 = 100, did not show it missing).
	assert_eq "$(jqn "$c | .reuse | [.connections_opened, .connections_closed, .requests, .bytes_sent, .bytes_received] | @tsv" "$J")" \
		"$(printf '4\t0\t400\t1600\t1200')" held/client_open_connections_counted
	assert_eq "$(jqn "$s | .reuse | [.connections_accepted, .connections_closed, .requests, .bytes_sent, .bytes_received] | @tsv" "$J")" \
		"$(printf '4\t0\t400\t1200\t1600')" held/server_open_connections_counted
	assert_eq "$(jqn "$c | .reuse.endpoints[] | select(.endpoint == \"127.0.0.1:$PORT\") | [.requests, .peak_concurrent] | @tsv" "$J")" \
		"$(printf '400\t4')" held/client_endpoint
	assert_eq "$(jqn "$c | .heatmaps.requests_per_conn.cells | flatten | add // 0" "$J")" 0 \
		held/heatmap_holds_closed_only
	assert_eq "$(fx_cmd held_cli close)" "closed 4" held/fixture_closed
else
	fail held/attach "$(cat "$TMP/held.err")"
fi

# ---- nginx under ab ----

if ! command -v nginx >/dev/null || ! command -v ab >/dev/null; then
	skip nginx "needs nginx and ab (Debian: nginx, apache2-utils)"
	exit 0
fi

NGX=$TMP/nginx
NPORT=$("$FIXTURES/tcpfix" freeport)
# nginx's own books are the truth to compare with: stub_status counts
# every connection it accepted and every request, and the access log says
# how many requests each connection carried.
if ! nginx_start "$NGX" "$NPORT" log status; then
	fail nginx/start "$(tail -5 "$NGX/error.log" 2>/dev/null)"
	exit 0
fi
assert_eq "$(wc -w <<<"$NGX_WORKER")" 1 nginx/one_worker

# "ACCEPTS REQUESTS" from stub_status, each counting this query itself,
# over bash's /dev/tcp so the test needs no HTTP client but ab. nginx
# closes the connection after a HTTP/1.0 answer; wait for that, so no
# status query is half open while attach starts or stops.
ngx_status() {
	local fd line

	exec {fd}<>"/dev/tcp/127.0.0.1/$NPORT" || return 1
	printf 'GET /status HTTP/1.0\r\nHost: localhost\r\n\r\n' >&"$fd"
	while read -r -u "$fd" line; do
		# " 12 12 30" after "server accepts handled requests"
		if [[ $line =~ ^\ *([0-9]+)\ +([0-9]+)\ +([0-9]+) ]]; then
			echo "${BASH_REMATCH[1]} ${BASH_REMATCH[3]}"
		fi
	done
	exec {fd}<&-
	wait_for "[ \$(busy_on_port $NPORT) -eq 0 ]" 10
}

# The requests_per_conn_log2 histogram the access log implies, as JSON:
# each logged connection in the bucket of its request count, the accepted
# ones that never sent a request in bucket 0 (0-1). Buckets as connscope
# makes them: 0-1, 2-3, 4-7, ...
log_histogram() {
	awk -v accepted="$1" '
		{ if ($2 > n[$1]) n[$1] = $2 }
		END {
			last = 0
			for (c in n) {
				v = n[c]; b = 0
				while (v > 1) { v = int(v / 2); b++ }
				h[b]++; logged++
				if (b > last) last = b
			}
			h[0] += accepted - logged
			printf "["
			for (b = 0; b <= last; b++) printf "%s%d", b ? "," : "", h[b]
			printf "]\n"
		}' "$NGX/access.log"
}

# ab_case NAME AB_ARGS...: attach to the worker, run ab, wait until nginx
# closed every connection, stop. What nginx counted meanwhile ends up in
# ACCEPTED and REQUESTS, ab's completed requests in DONE, the connections
# the access log names in LOGGED.
ab_case() {
	local name=$1 J=$TMP/$1.json a0 r0 a1 r1
	shift

	: >"$NGX/access.log"
	read -r a0 r0 < <(ngx_status)
	cs_attach "$J" "$TMP/$name.err" -p "$NGX_WORKER" -j -i 0.5 ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return 1; }
	ab "$@" "http://127.0.0.1:$NPORT/" >"$TMP/$name.ab" 2>"$TMP/$name.ab.err" ||
		fail "$name/ab" "$(tail -3 "$TMP/$name.ab.err")"
	wait_for "[ \$(busy_on_port $NPORT) -eq 0 ]" 20 ||
		fail "$name/sockets_closed" "$(busy_on_port "$NPORT") sockets still open on :$NPORT"
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	read -r a1 r1 < <(ngx_status)
	# Both queries count themselves; the first one is in a0 already.
	ACCEPTED=$((a1 - a0 - 1)) REQUESTS=$((r1 - r0 - 1))
	DONE=$(awk '/^Complete requests:/ {print $3}' "$TMP/$name.ab")
	LOGGED=$(awk '{print $1}' "$NGX/access.log" | sort -u | wc -l)
	echo "$name: nginx accepted $ACCEPTED connections ($LOGGED with requests), $REQUESTS requests" >&2
	assert_eq "$(awk '/^Failed requests:/ {print $3}' "$TMP/$name.ab")" 0 "$name/ab_no_failures"
	assert_eq "$REQUESTS" "$DONE" "$name/nginx_requests_eq_ab"
	assert_eq "$(wc -l <"$NGX/access.log")" "$DONE" "$name/nginx_logged_every_request"
	return 0
}

# ab_asserts NAME: the worker's books against nginx's.
ab_asserts() {
	local name=$1 J=$TMP/$1.json w="(.processes[] | select(.pid == $NGX_WORKER))"

	assert_eq "$(jqn "$w | .reuse | [.connections_accepted, .connections_closed, .connections_opened] | @tsv" "$J")" \
		"$(printf '%s\t%s\t0' "$ACCEPTED" "$ACCEPTED")" "$name/accepted_eq_nginx"
	assert_eq "$(jqn "$w | .reuse.requests" "$J")" "$REQUESTS" "$name/requests_eq_nginx"
	assert_eq "$(jqn "$w | .reuse.endpoints[] | select(.endpoint == \"listen 127.0.0.1:$NPORT\") | [.side, .accepted, .requests] | @tsv" "$J")" \
		"$(printf 'listen\t%s\t%s' "$ACCEPTED" "$REQUESTS")" "$name/listen_endpoint"
	assert_true "$w | .reuse.reuse_ratio - ([0, 1 - $ACCEPTED / $REQUESTS] | max) | fabs < 5e-7" "$J" "$name/reuse_ratio"
	# Connection by connection, as nginx counted its requests.
	assert_eq "$(jqn -c "$w | .reuse.requests_per_conn_log2" "$J")" "$(log_histogram "$ACCEPTED")" \
		"$name/requests_per_conn_eq_nginx_log"
	assert_true "$w | (.heatmaps.requests_per_conn.cells | flatten | add) == .reuse.connections_closed" \
		"$J" "$name/heatmap_sums_to_closed"
	assert_eq "$(jqn ".agent.events_lost" "$J")" 0 "$name/no_events_lost"
}

# Keep-alive: ab's 10 connections carry all 1000 requests.
if ab_case ab_keepalive -k -n 1000 -c 10; then
	assert_eq "$DONE" 1000 ab_keepalive/ab_complete
	assert_eq "$(awk '/^Keep-Alive requests:/ {print $3}' "$TMP/ab_keepalive.ab")" 1000 ab_keepalive/ab_kept_alive
	# A kept-alive connection is never replaced: keepalive_requests and
	# keepalive_timeout are far off.
	assert_eq "$ACCEPTED $LOGGED" "10 10" ab_keepalive/nginx_accepted_10
	ab_asserts ab_keepalive
fi

# Without keep-alive one request per connection, and nginx closes first.
# ab may dial a connection or two more than it needs near the end and close
# them unused: nginx accepts those, and so must the books (with no request).
if ab_case ab_close -n 200 -c 5; then
	assert_eq "$DONE" 200 ab_close/ab_complete
	assert_eq "$LOGGED" 200 ab_close/nginx_logged_200_connections
	assert_eq "$((ACCEPTED >= 200))" 1 ab_close/nginx_accepted_at_least_200
	ab_asserts ab_close
fi

# A clean stop: QUIT is nginx's graceful shutdown; the master waits for its
# worker, so once it is gone, so is every nginx process of this test.
# (bash reaps its children as they end, so "gone" is "no longer a running
# job"; the worker is not ours: gone means its /proc entry is.)
kill -QUIT "$NGX_MASTER"
if wait_for "! jobs -rp | grep -qx $NGX_MASTER" 10; then
	wait "$NGX_MASTER"
	assert_eq "$?" 0 nginx/clean_exit
else
	fail nginx/clean_exit "master $NGX_MASTER still running 10 s after QUIT"
fi
wait_for "[ ! -e /proc/$NGX_WORKER ]" 5
assert_eq "$(pgrep -c -P "$NGX_MASTER"; [ -e "/proc/$NGX_WORKER" ] && echo worker)" 0 nginx/no_process_left
