#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The doctor speaks HAProxy's configuration (#26 Tests), checked on
# Debian's haproxy in HTTP mode in front of an HTTP/1.1 backend
# (roundhttp.py), under ab -k (keep-alive on the client side): with
# `option http-server-close` HAProxy closes the server side after every
# response and opens a connection a request; the churn finding on haproxy
# names its own settings (http-reuse, http-server-close) and no other
# software's. The healthy twin (`http-reuse safe`) reuses a few backend
# connections and gets no churn finding. Truth: the backend's own count
# of connections and requests.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=2000
PY=/usr/bin/python3
NOT_HAP='keepalive_timeout|in the upstream block|proxy_http_version|MaxIdleConnsPerHost|requests\.Session|http\.Agent|HttpClient|ab -k|KeepAlive On'

if ! command -v haproxy >/dev/null || ! command -v ab >/dev/null; then
	fail installed "needs haproxy and ab (Debian: haproxy, apache2-utils; make test-deps)"
	exit 0
fi
fix_start be "$PY" "$TESTS_DIR/fixtures/roundhttp.py" 1 && fix_expect be "listening *" 10 ||
	{ fail backend/start "roundhttp.py did not start"; exit 0; }
read -r _ BPORT _ <<<"$FIX_LINE"

backend_counts() {
	fix_cmd be stats "stats *" 10 && echo "${FIX_LINE#stats }"
}

hap_case() {
	local name=$1 opt=$2 J=$TMP/$1.json fport before after conns reqs
	fport=$(free_port)
	cat >"$TMP/$name.cfg" <<EOF
global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:$fport
    default_backend be
backend be
    $opt
    server s1 127.0.0.1:$BPORT
EOF
	spawn_bg haproxy -db -f "$TMP/$name.cfg"
	HPID=$BG_PID
	wait_for "ss -Hltn '( sport = :$fport )' | grep -q ." 10 || { fail "$name/start" haproxy; return; }
	spawn_bg "$CONNSCOPE" doctor -d 120 -i 0.3 -j -p "$HPID" >"$J" 2>"$TMP/$name.err"
	DR_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$TMP/$name.err' || ! kill -0 $DR_PID 2>/dev/null" 30
	grep -q '^connscope: tracing' "$TMP/$name.err" || { fail "$name/attach" "$(cat "$TMP/$name.err")"; return; }
	before=$(backend_counts)
	ab -q -k -c 4 -n "$N" "http://127.0.0.1:$fport/" >"$TMP/$name.ab" 2>&1
	assert_eq "$(awk '/^Complete requests:/ {c = $3} /^Failed requests:/ {f = $3} END {print c, f}' "$TMP/$name.ab")" \
		"$N 0" "$name/ab_complete"
	after=$(backend_counts)
	kill -INT "$DR_PID"
	wait "$DR_PID"
	assert_eq "$?" 0 "$name/exit_status"
	conns=$(($(cut -d' ' -f1 <<<"$after") - $(cut -d' ' -f1 <<<"$before")))
	reqs=$(($(cut -d' ' -f2 <<<"$after") - $(cut -d' ' -f2 <<<"$before")))
	echo "# $name: backend saw $conns connections, $reqs requests; findings $(jqn -c '[.findings[] | .rule]' "$J")"
	assert_eq "$reqs" "$N" "$name/backend_requests"
	# HAProxy's row to its backend: opened = the backend's count.
	assert_eq "$(jqn "[.processes[] | select(.pid == $HPID) | .reuse.endpoints[] |
		select(.endpoint == \"127.0.0.1:$BPORT\")] | if length == 1 then .[0] | [.opened, .requests] | @tsv
		else \"rows: \\(length)\" end" "$J")" "$(printf '%s\t%s' "$conns" "$reqs")" "$name/backend_row_exact"
	CHURN=$(jqn "[.findings[] | select(.rule == \"churn\" and .pid == $HPID)]" "$J")
	kill "$HPID"
	wait "$HPID" 2>/dev/null
}

hap_case close "option http-server-close"
assert_eq "$(jq length <<<"$CHURN")" 1 close/churn_on_haproxy
assert_eq "$(jq -r '.[0].endpoint' <<<"$CHURN")" "127.0.0.1:$BPORT" close/endpoint_is_the_backend
fix=$(jq -r '.[0].fix // ""' <<<"$CHURN")
echo "# close fix: $fix"
for w in "client (HAProxy): in the backend: http-reuse safe" "no option http-server-close cancels"; do
	assert_eq "$(jq -rn --arg f "$fix" --arg w "$w" \
		'($f | index($w)) as $i | ($f | index("in general: ")) as $g |
		 $i != null and $g != null and $i < $g')" true "close/fix_names/$w"
done
assert_eq "$(jq -rn --arg f "$fix" --arg re "$NOT_HAP" '$f | test($re)')" false close/no_other_words

hap_case reuse "http-reuse safe"
assert_eq "$(jq length <<<"$CHURN")" 0 reuse/silent

fix_send be exit
