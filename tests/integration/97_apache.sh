#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The doctor speaks Apache httpd's configuration (#26), checked on
# Debian's apache2 with mpm_prefork in a network namespace of the test's
# own, under ab -n 3000 -c 8:
# - keepalive_off: `KeepAlive Off` while ab asks for keep-alive (-k):
#   Apache closes every connection first, so its 3,000 TIME_WAIT are
#   spread over its children (the issue saw 542-667 each and no finding).
#   One time_wait finding for the listener, naming the service (apache2
#   on its address, every child), none for one child; its fix in Apache's
#   words (KeepAlive On, MaxKeepAliveRequests, KeepAliveTimeout, each
#   with its default) before the generic text and no other software's.
# - client_close: `KeepAlive On` while ab asks to close (no -k: HTTP/1.0
#   without keep-alive): Apache still closes first, but because the
#   client asked, and ab is traced (run's COMMAND, a wrapper's exec
#   away): the fix is the client's (ab -k), named first, Apache's after
#   (the kernel cannot tell a client's request to close from a server's
#   refusal of keep-alive).
# - keepalive_on: `KeepAlive On` and ab -k: no finding.
# Truth: Apache's access log (a line a request, %k its number on its
# connection: 0 opens one) and the namespace's kernel counters
# (PassiveOpens, TcpExt TW + TWKilled, ss).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
chmod 755 "$TMP"
N=3000
C=8
# Another software's words: never in Apache's fix.
NOT_APACHE='keepalive_timeout|keepalive_requests|upstream|IdleTimeout|MaxIdleConnsPerHost|http-reuse|requests\.Session|http\.Agent|HttpClient|Tomcat|gunicorn'

if ! command -v apache2 >/dev/null || ! command -v ab >/dev/null; then
	fail apache/installed "needs apache2 and apache2-utils (make test-deps)"
	exit 0
fi
fx_netns apache
PORT=8080

# tw_server: the server's live TIME_WAIT (its port as the source).
tw_server() {
	inns ss -Htan state time-wait "( sport = :$PORT )" | wc -l
}

# start_apache NAME ON|OFF: apache_start (fixture.sh) in $TMP/NAME with
# KeepAlive ON|OFF, its access log one line a request with %k.
start_apache() {
	local name=$1
	LOG=$TMP/$name.access
	: >"$LOG" && chmod 666 "$LOG"
	apache_start "$TMP/$name" "$NS" "$PORT" <<EOF
LogFormat "%k %m %U" conns
CustomLog $LOG conns
KeepAlive $2
MaxKeepAliveRequests 0
StartServers 4
MinSpareServers 4
# No child is stopped for being idle during a case: stopping one costs a
# connection of the parent's own to its listener ("OPTIONS *").
MaxSpareServers 32
MaxRequestWorkers 32
EOF
}

# apache_case NAME ON|OFF AB_FLAGS -- CONNSCOPE ARGS...: Apache with
# KeepAlive ON|OFF, ab with AB_FLAGS under the doctor (`doctor` or `run`
# with ARGS); leaves J, REQS and CONNS (Apache's log: requests, new
# connections), PASSIVE (the kernel's) and TW_MADE, TW_LIVE.
apache_case() {
	local name=$1 ka=$2 abf=$3 p0 t0 s0 cs
	shift 4
	J=$TMP/$name.json
	# A port a case: the TIME_WAIT of one are not counted in the next.
	PORT=$((PORT + 1))
	start_apache "$name" "$ka" || { fail "$name/start" "$(tail -3 "$TMP/$name/error.log")"; return 1; }
	p0=$(snmp_tcp PassiveOpens) t0=$(tw_made) s0=$(tw_server)
	if [[ $1 == run ]]; then
		timeout 120 "$CONNSCOPE" run -j -i 0.3 "${@:2}" -p "$APID" --children -- \
			ip netns exec "$NS" ab -q $abf -n "$N" -c "$C" "http://127.0.0.1:$PORT/index.html" \
			>"$J" 2>"$TMP/$name.err"
		assert_eq "$?" 0 "$name/exit_status"
	else
		spawn_bg "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$APID" --children >"$J" 2>"$TMP/$name.err"
		cs=$BG_PID
		wait_for "grep -q '^connscope: tracing' '$TMP/$name.err' || ! kill -0 $cs 2>/dev/null" 30
		inns ab -q $abf -n "$N" -c "$C" "http://127.0.0.1:$PORT/index.html" >"$TMP/$name.ab" 2>&1
		assert_eq "$?" 0 "$name/ab_ran"
		# Apache's TIME_WAIT are made when ab's FIN comes in, maybe
		# after ab is gone: wait for as many as connections accepted.
		wait_for "(( \$(tw_made) - t0 >= \$(snmp_tcp PassiveOpens) - p0 ))" 10
		kill -INT "$cs"
		wait "$cs"
		assert_eq "$?" 0 "$name/exit_status"
	fi
	PASSIVE=$(($(snmp_tcp PassiveOpens) - p0))
	TW_MADE=$(($(tw_made) - t0)) TW_LIVE=$(($(tw_server) - s0))
	apache_stop
	# ab's requests (Apache's own "OPTIONS *" at its stop left out).
	REQS=$(grep -c ' GET ' "$LOG")
	CONNS=$(grep -c '^0 GET ' "$LOG")
	echo "# $name: Apache logged $REQS requests on $CONNS connections; the kernel" \
		"$PASSIVE passive opens, $TW_MADE TIME_WAIT made, $TW_LIVE live on :$PORT;" \
		"findings $(jqn -c '[.findings[] | [.rule, .pid, .endpoint]]' "$J")"
	assert_eq "$(( REQS >= N && REQS <= N + C ))" 1 "$name/apache_served_all ($REQS)"
}

# tw_findings: the time_wait findings on the listener, and on any apache2.
tw_findings() {
	jqn "[.findings[] | select(.rule == \"time_wait\" or .rule == \"port_exhaustion\" or
		(.rule == \"churn\" and .comm == \"apache2\"))]" "$J"
}

# fix_has NAME FIX WANT...: each WANT in FIX before "in general: ".
fix_has() {
	local name=$1 fix=$2 w
	shift 2
	for w in "$@"; do
		assert_eq "$(jq -rn --arg f "$fix" --arg w "$w" \
			'($f | index($w)) as $i | ($f | index("in general: ")) as $g |
			 $i != null and $g != null and $i < $g')" true "$name/fix_names/$w"
	done
}

# ---- KeepAlive Off, ab -k: Apache's own fix, for the service ----
apache_case keepalive_off Off -k -- doctor
F=$(tw_findings)
assert_eq "$(jq length <<<"$F")" 1 keepalive_off/one_finding
assert_eq "$(jq -r '.[0] | [.rule, .endpoint] | @tsv' <<<"$F")" \
	"$(printf 'time_wait\tlisten 127.0.0.1:%s' "$PORT")" keepalive_off/on_the_listener
ACCEPTING=$(jqn '[.processes[] | select(.comm == "apache2" and .totals.time_wait_entered > 0)] | length' "$J")
echo "# keepalive_off: $ACCEPTING children held TIME_WAIT:" \
	"$(jqn -c '[.processes[] | select(.comm == "apache2") | .totals.time_wait_entered]' "$J")"
assert_eq "$((ACCEPTING > 1))" 1 "keepalive_off/spread_over_children ($ACCEPTING)"
# The service, not one child: no pid of its own, every child listed.
assert_eq "$(jq -r '.[0] | [.pid, (.pids | length)] | @tsv' <<<"$F")" \
	"$(printf '0\t%s' "$ACCEPTING")" keepalive_off/names_the_service
assert_eq "$(jq -r ".[0].verdict | test(\"^apache2 on 127.0.0.1:$PORT \\\\($ACCEPTING processes accepting on it\\\\)\")" <<<"$F")" \
	true keepalive_off/verdict_names_the_listener
# Counts: Apache's log and the kernel's.
assert_eq "$CONNS" "$N" keepalive_off/apache_one_connection_a_request
ev() { jq -r ".[0].evidence[] | select(.name == \"$1\") | .value" <<<"$F"; }
# ab may open a connection or two it sends nothing on and closes itself
# (a TIME_WAIT on its side): the kernel's TIME_WAIT less those.
assert_eq "$(ev time_wait_entered)" "$CONNS" keepalive_off/time_wait_eq_apache_connections
assert_eq "$(ev time_wait_entered)" "$((TW_MADE - (PASSIVE - CONNS)))" keepalive_off/time_wait_eq_kernel
assert_eq "$(ev processes)" "$ACCEPTING" keepalive_off/processes
assert_eq "$(jqn '[.processes[] | select(.comm == "apache2") | .totals.connections_accepted] | add' "$J")" \
	"$PASSIVE" keepalive_off/accepted_eq_kernel
FIX=$(jq -r '.[0].fix' <<<"$F")
echo "# keepalive_off fix: $FIX"
fix_has keepalive_off "$FIX" "server (Apache httpd): KeepAlive On (default On)" \
	"MaxKeepAliveRequests (default 100)" "KeepAliveTimeout (default 5 s)"
assert_eq "$(jq -rn --arg f "$FIX" --arg re "$NOT_APACHE|ab -k" '$f | test($re)')" false \
	keepalive_off/no_other_words
# The peak: the children's TIME_WAIT summed at one moment; all 3,000 live
# at the end (a run is shorter than their 60 s), as ss counts them.
echo "# keepalive_off: time_wait_peak $(ev time_wait_peak), the most one child held $(ev time_wait_peak_one_process), ss $TW_LIVE"
assert_eq "$(( $(ev time_wait_peak) > $(ev time_wait_peak_one_process) && $(ev time_wait_peak) <= TW_LIVE ))" \
	1 keepalive_off/peak_pooled_within_ss

# ---- KeepAlive On, ab without -k: the client asks to close ----
# ab runs as `ip netns exec NS ab`: run's COMMAND execs twice before it
# is ab, and is named by what it became (before: "ip", and no fix of
# its own).
apache_case client_close On "" -- run
F=$(tw_findings)
echo "# client_close: $(jqn -c '[.findings[] | {rule, comm, pid, endpoint, fix}]' "$J")"
assert_eq "$(jq length <<<"$F")" 1 client_close/one_finding
assert_eq "$(jq -r '.[0] | [.rule, .endpoint, .pid] | @tsv' <<<"$F")" \
	"$(printf 'time_wait\tlisten 127.0.0.1:%s\t0' "$PORT")" client_close/on_the_listener
CH=$(jqn '[.findings[] | select(.rule == "churn")]' "$J")
assert_eq "$(jq -r '[.[] | .comm] | join(",")' <<<"$CH")" ab client_close/churn_on_ab_by_its_name
FIX=$(jq -r '.[0].fix' <<<"$F")
# The client's fix first: Apache keeps connections open already.
fix_has client_close "$FIX" "where they ask the server to close (HTTP/1.0 without keep-alive, Connection: close) the fix is theirs: client (ab): ab -k" \
	"server (Apache httpd): KeepAlive On (default On)"
assert_eq "$(jq -rn --arg f "$FIX" '($f | index("client (ab)")) < ($f | index("server (Apache httpd)"))')" \
	true client_close/client_named_first
assert_eq "$(jq -rn --arg f "$FIX" --arg re "$NOT_APACHE" '$f | test($re)')" false \
	client_close/no_other_words
assert_eq "$(jq -r '.[0].fix' <<<"$CH" | grep -c '^client (ab): ab -k')" 1 client_close/churn_fix_is_abs
assert_eq "$CONNS" "$N" client_close/apache_one_connection_a_request
ev() { jq -r ".[0].evidence[] | select(.name == \"$1\") | .value" <<<"$F"; }
assert_eq "$(ev time_wait_entered)" "$CONNS" client_close/time_wait_eq_apache_connections

# ---- KeepAlive On, ab -k: healthy ----
apache_case keepalive_on On -k -- doctor
assert_eq "$(jqn '[.findings[] | select(.rule != "agent_cost")] | length' "$J")" 0 keepalive_on/silent
# ab -k may open a connection more than -c and send a request more than
# -n (9 and 3,001 seen): Apache's own count is the truth.
assert_eq "$(( CONNS >= C && CONNS <= 2 * C ))" 1 "keepalive_on/apache_a_connection_a_client ($CONNS)"
assert_eq "$(jqn '[.processes[] | select(.comm == "apache2") | .totals.connections_accepted] | add' "$J")" \
	"$PASSIVE" keepalive_on/accepted_eq_kernel
