#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The doctor speaks the software it diagnoses, checked on the real
# programs (Debian's): redis-benchmark -k 0 against redis-server and
# pgbench -C against PostgreSQL churn, and the churn finding's fix names
# that program's own setting (-k 1; pgbench without -C and a pooler such
# as PgBouncer), no HTTP or Go words, the generic fix last. Their healthy
# twins (-k 1; pgbench without -C) get no churn finding. The client is
# followed by --comm from before it starts; the server by -p.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
chmod 755 "$TMP"

dr_start() {
	local out=$1 err=$2
	shift 2
	spawn_bg "$CONNSCOPE" doctor -d 120 -i 0.3 -j "$@" >"$out" 2>"$err"
	DR_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$err' || ! kill -0 $DR_PID 2>/dev/null" 30
	grep -q '^connscope: tracing' "$err"
}

dr_stop() {
	kill -INT "$DR_PID" 2>/dev/null
	wait "$DR_PID"
}

# churn_of J COMM: the churn findings of processes named COMM, as a jq array.
churn_of() {
	jqn "[.findings[] | select(.rule == \"churn\" and .comm == \"$2\")]" "$1"
}

# fix_asserts NAME J COMM WANT...: one churn finding for COMM whose fix has
# every WANT before "in general:", and no HTTP vocabulary.
fix_asserts() {
	local name=$1 J=$2 comm=$3 fix w
	shift 3
	assert_eq "$(churn_of "$J" "$comm" | jq length)" 1 "$name/churn_on_$comm"
	fix=$(churn_of "$J" "$comm" | jq -r '.[0].fix // ""')
	for w in "$@"; do
		assert_eq "$(jq -rn --arg f "$fix" --arg w "$w" \
			'($f | index($w)) as $i | ($f | index("in general: ")) as $g |
			 $i != null and $g != null and $i < $g')" true "$name/fix_names/$w"
	done
	assert_eq "$(jq -rn --arg f "$fix" '$f | test("HTTP|keep-alive|MaxIdleConns|nginx")')" \
		false "$name/no_http_words"
}

# ---- Redis ----
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
	fail redis/installed "needs redis-server and redis-tools (make test-deps)"
else
	RPORT=$(free_port)
	spawn_bg redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$TMP" --logfile "$TMP/redis.log"
	RPID=$BG_PID
	wait_for "redis-cli -h 127.0.0.1 -p $RPORT ping 2>/dev/null | grep -q PONG" 20 ||
		fail redis/start "redis-server did not answer on $RPORT"
	for k in 0 1; do
		name=redis_k$k
		before=$(redis-cli -h 127.0.0.1 -p "$RPORT" info stats | tr -d '\r' |
			 awk -F: '/^total_connections_received/ {print $2}')
		dr_start "$TMP/$name.json" "$TMP/$name.err" -p "$RPID" --comm redis-benchmark ||
			{ fail "$name/attach" "$(cat "$TMP/$name.err")"; continue; }
		redis-benchmark -h 127.0.0.1 -p "$RPORT" -c 4 -n 2000 -k "$k" -t ping_inline -q \
			>"$TMP/$name.bench" 2>&1
		assert_eq "$?" 0 "$name/benchmark_ran"
		dr_stop
		assert_eq "$?" 0 "$name/exit_status"
		after=$(redis-cli -h 127.0.0.1 -p "$RPORT" info stats | tr -d '\r' |
			awk -F: '/^total_connections_received/ {print $2}')
		# redis-cli's own connections: the two INFO calls.
		echo "# $name: redis-server counted $((after - before - 1)) connections"
		J=$TMP/$name.json
		if ((k == 0)); then
			fix_asserts "$name" "$J" redis-benchmark "redis-benchmark -k 1" "server (Redis): keeps idle clients open"
		else
			assert_eq "$(churn_of "$J" redis-benchmark | jq length)" 0 "$name/no_churn"
		fi
	done
fi

# ---- Redis, port reuse: TIME_WAIT reused by the kernel is no exhaustion ----
# 20,000 connections without keep-alive from one client hold half the
# ephemeral ports in TIME_WAIT, but with tcp_tw_reuse (2: loopback) the
# kernel reuses them for new connects (TcpExt TWRecycled) and no connect
# fails: a warning at most, saying so, never a critical exhaustion. In a
# namespace of the test's own, so its TIME_WAIT go with it.
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	fx_netns vocab
	NPORT=6379
	spawn_bg ip netns exec "$NS" redis-server --port "$NPORT" --bind 127.0.0.1 --save '' \
		--appendonly no --daemonize no --dir "$TMP" --logfile "$TMP/redis-ns.log"
	wait_for "inns redis-cli -h 127.0.0.1 -p $NPORT ping 2>/dev/null | grep -q PONG" 20 ||
		fail reuse/start "redis-server did not answer in $NS"
	NRP=$(pgrep -f "redis-server 127.0.0.1:$NPORT" | while read -r p; do
		[[ $(readlink /proc/$p/ns/net) == "$(inns readlink /proc/self/ns/net)" ]] && echo "$p"; done)
	recycled() { awk '/^TcpExt:/ {if (!h) {split($0, k); h = 1} else {split($0, v);
		for (i in k) if (k[i] == "TWRecycled") print v[i]}}' "/proc/$NRP/net/netstat"; }
	before=$(recycled)
	timeout 120 "$CONNSCOPE" run -p "$NRP" --comm redis-benchmark --no-trace-command -j -i 0.5 \
		-- ip netns exec "$NS" redis-benchmark -h 127.0.0.1 -p "$NPORT" -c 4 -n 20000 -k 0 \
		-t ping_inline -q >"$TMP/reuse.json" 2>"$TMP/reuse.err"
	assert_eq "$?" 0 reuse/exit_status
	after=$(recycled)
	J=$TMP/reuse.json
	echo "# reuse: the kernel reused $((after - before)) TIME_WAIT ports (TWRecycled)"
	assert_eq "$((after - before > 0))" 1 "reuse/kernel_reused_ports ($((after - before)))"
	assert_eq "$(jqn '[.findings[] | select(.rule != "agent_cost" and .severity == "critical")] | length' "$J")" \
		0 reuse/no_critical
	# Half the ports in TIME_WAIT at the peak: the rule looks at it.
	assert_eq "$(jqn '[.findings[] | select(.rule == "port_exhaustion")] | length' "$J")" 1 \
		reuse/port_rule_judged_it
	assert_eq "$(jqn '[.findings[] | select(.rule == "port_exhaustion") |
		(.verdict | test("the kernel reused [1-9][0-9]* TIME_WAIT ports .* and no connect failed"))] | all' "$J")" \
		true reuse/exhaustion_verdict_says_reused
	assert_eq "$(jqn "[.findings[] | select(.rule == \"port_exhaustion\") | .evidence[] |
		select(.name == \"time_wait_reused\") | .value <= $((after - before))] | all" "$J")" \
		true reuse/reused_count_within_the_kernels
fi

# ---- PostgreSQL ----
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [[ -z $PGBIN || ! -x $PGBIN/pgbench ]]; then
	fail postgres/installed "needs postgresql and postgresql-contrib (make test-deps)"
else
	PGDATA=$TMP/pg
	PGPORT=$(free_port)
	mkdir -p "$PGDATA" && chown postgres: "$PGDATA"
	runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -A trust -U postgres --no-sync \
		>"$TMP/initdb.log" 2>&1 || fail postgres/initdb "$(tail -3 "$TMP/initdb.log")"
	on_exit "runuser -u postgres -- '$PGBIN/pg_ctl' -D '$PGDATA' -m immediate stop >/dev/null 2>&1"
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w \
		-o "-p $PGPORT -k $PGDATA -c listen_addresses=127.0.0.1 -c fsync=off" start \
		>/dev/null 2>&1 || fail postgres/start "$(tail -3 "$PGDATA/server.log")"
	PGPID=$(head -1 "$PGDATA/postmaster.pid")
	PGB=(runuser -u postgres -- "$PGBIN/pgbench" -h 127.0.0.1 -p "$PGPORT" -U postgres)
	"${PGB[@]}" -i -q postgres >"$TMP/pgbench-init.log" 2>&1 ||
		fail postgres/pgbench_init "$(tail -3 "$TMP/pgbench-init.log")"
	for mode in C persistent; do
		name=pg_$mode
		flags=(-c 4 -j 4 -t 100 -S)
		[[ $mode == C ]] && flags+=(-C)
		dr_start "$TMP/$name.json" "$TMP/$name.err" -p "$PGPID" --children --comm pgbench ||
			{ fail "$name/attach" "$(cat "$TMP/$name.err")"; continue; }
		"${PGB[@]}" "${flags[@]}" postgres >"$TMP/$name.bench" 2>&1
		assert_eq "$?" 0 "$name/pgbench_ran"
		dr_stop
		assert_eq "$?" 0 "$name/exit_status"
		J=$TMP/$name.json
		if [[ $mode == C ]]; then
			fix_asserts "$name" "$J" pgbench "pgbench without -C" "PgBouncer" \
				"pool_mode = transaction"
		else
			assert_eq "$(churn_of "$J" pgbench | jq length)" 0 "$name/no_churn"
		fi
	done
fi
