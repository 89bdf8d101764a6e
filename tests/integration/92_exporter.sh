#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope exporter: GET /metrics (promtool-clean, exact counts), GET /,
# 404 elsewhere, bad --listen; and a real Prometheus scraping it on
# loopback sees the same numbers through its query API. Then --all: the
# workload's exact counts by pid, one --top-processes slot and "other",
# counters that never go down, and the --max-series cap.
# Its --all case gives one series slot to the busiest process, ours only
# on a quiet machine: tests/run.sh runs nothing in the background beside it.
# quiet: yes
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=9

http_status() {
	local fd
	# (refused until the server listens: the wait_for around it retries)
	{ exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\n\r\n' "$2" >&"$fd"
	timeout 5 head -1 <&"$fd" | awk '{print $2}'
	exec {fd}>&-
}

# The churn in a namespace of the test's own (fx_twns):
# metrics/time_wait_by_endpoint wants its N TIME_WAIT live, which resets
# could end early in ours. The exporter stays in ours (the scrapers and
# Prometheus reach it there) and reads the client's namespace through it.
# The keep-alive scraper's TIME_WAIT is kept in that namespace too: it
# scrapes an exporter of its own there (keepalive/ below).
fx_twns exporter
port=$(fx_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"
# A QUIC server too (Debian's ngtcp2 example), for the QUIC families and
# the dashboards' QUIC panels.
qport=$(udp_free_port)
{ quic_www "$TMP" && quic_server "$TMP" "$qport"; } || fail quic/server "gtlsserver did not start on $qport"
GS=${QS_PID:-0}
quic_clients() { quic_fetch "$qport" "$1"; }
eport=$(free_port)
# --fd-sites: the dashboards' leak-suspect panel needs the fd syscall tracing.
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_cli,$GS" --fd-sites --listen "127.0.0.1:$eport" -i 0.3 >"$TMP/exp.out" 2>"$TMP/exp.err"
EXP=$BG_PID
wait_for "grep -q 'exporter serving http://127.0.0.1:$eport/metrics' '$TMP/exp.err'" 30 ||
	fail exporter/start "$(cat "$TMP/exp.err")"
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" churned
metric() { http_get "$eport" /metrics | awk -v m="$1" -v p="pid=\"$FX_PID_cli\"" 'index($0, m "{") == 1 && index($0, p) {print $NF}' | head -1; }
wait_for "[ \"\$(metric connscope_process_time_wait_entered_total)\" = $N ]" 20
assert_eq "$(metric connscope_process_connections_opened_total)" "$N" metrics/opened
quic_clients 3
qmetric() { http_get "$eport" /metrics | awk -v m="$1" -v p="pid=\"$GS\"" 'index($0, m "{") == 1 && index($0, p) {print $NF}' | head -1; }
wait_for "[ \"\$(qmetric connscope_process_quic_handshakes_completed_total)\" = 3 ]" 20
assert_eq "$(qmetric connscope_process_quic_connections_total)" 3 metrics/quic_connections
assert_eq "$(qmetric connscope_process_quic_handshakes_completed_total)" 3 metrics/quic_handshakes
assert_eq "$(metric connscope_process_time_wait_entered_total)" "$N" metrics/time_wait_entered
http_get "$eport" /metrics >"$TMP/scrape.prom"
promtool check metrics <"$TMP/scrape.prom" >"$TMP/lint.txt" 2>&1
assert_eq "$?" 0 "metrics/promtool_clean $(head -c 300 "$TMP/lint.txt")"
assert_eq "$(grep -c '^connscope_scrapes_total ' "$TMP/scrape.prom")" 1 metrics/self_scrapes
assert_eq "$(grep -c '^connscope_program_attached{program="handle_set_state_btf"} 1$' "$TMP/scrape.prom")" 1 metrics/program_attached
assert_eq "$(grep -c '^connscope_program_attached{program="handle_set_state_tp"} 0$' "$TMP/scrape.prom")" 1 metrics/fallback_not_attached
assert_eq "$(grep -c '^connscope_snapshot_render_seconds ' "$TMP/scrape.prom")" 1 metrics/self_render_time
assert_eq "$(http_get "$eport" / | grep -c 'href="/metrics"')" 1 index/links_metrics
# The exporter's own process, as the client libraries' process collector
# names it: each series once, the fd limit the one in its /proc limits,
# started within the test's run.
for m in process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes \
	process_open_fds process_max_fds process_start_time_seconds; do
	assert_eq "$(grep -cE "^$m [0-9]+(\.[0-9]+)?$" "$TMP/scrape.prom")" 1 "self/$m"
done
assert_eq "$(awk '/^process_max_fds / {print $2}' "$TMP/scrape.prom")" \
	"$(awk '/^Max open files/ {print $4}' "/proc/$EXP/limits")" self/max_fds_is_its_limit
started=$(awk '/^process_start_time_seconds / {printf "%d", $2}' "$TMP/scrape.prom")
(( started <= $(date +%s) && started >= $(date +%s) - 600 )) && ok self/start_time ||
	fail self/start_time "$started against now $(date +%s)"
(( $(awk '/^process_open_fds / {print $2}' "$TMP/scrape.prom") > 3 )) && ok self/open_fds ||
	fail self/open_fds "$(grep '^process_open_fds' "$TMP/scrape.prom")"
# Keep-alive: three HTTP/1.1 scrapes over one connection from a known
# local port, all answered, none with "Connection: close"; the scraper
# closes, so the TIME_WAIT is on its port, none on the exporter's. That
# one TIME_WAIT must live until it is counted, which a reset could end
# early in ours (tcp_rfc1337=0, Linux's default, that no test may change):
# scraper and an exporter of its own in the test's namespace (fx_twns).
kport=$(fx_port)
spawn_bg "${FX_WRAP[@]}" "$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$kport" \
	>"$TMP/kexp.out" 2>"$TMP/kexp.err"
KEXP=$BG_PID
wait_for "grep -q 'exporter serving http://127.0.0.1:$kport/metrics' '$TMP/kexp.err' || ! kill -0 $KEXP" 30 &&
	grep -q 'exporter serving' "$TMP/kexp.err" || fail keepalive/exporter_start "$(head -c 300 "$TMP/kexp.err")"
lport=$(fx_port)
"${FX_WRAP[@]}" curl -sv --max-time 10 --local-port "$lport" -o /dev/null -o /dev/null -o /dev/null \
	"http://127.0.0.1:$kport/metrics" "http://127.0.0.1:$kport/metrics" \
	"http://127.0.0.1:$kport/metrics" 2>"$TMP/ka.txt"
assert_eq "$?" 0 keepalive/curl
assert_eq "$(grep -c '^< HTTP/1.1 200' "$TMP/ka.txt")" 3 keepalive/three_answers
assert_eq "$(grep -ci '^< connection: close' "$TMP/ka.txt")" 0 keepalive/no_connection_close
assert_eq "$(grep -c 'Re-using existing connection' "$TMP/ka.txt")" 2 keepalive/one_connection
# The kernel's closes over first (the exporter's LAST_ACK), so that the
# counts below are final.
wait_for "closes_done $kport" 20 || fail keepalive/kernel_closed "closes on $kport not over"
assert_eq "$("${FX_WRAP[@]}" ss -Htan state time-wait "( sport = :$kport and dport = :$lport )" | wc -l)" 0 \
	keepalive/no_time_wait_on_the_exporter_port
assert_eq "$("${FX_WRAP[@]}" ss -Htan state time-wait "( sport = :$lport and dport = :$kport )" | wc -l)" 1 \
	keepalive/the_scraper_closed_first
kill -TERM "$KEXP"; wait "$KEXP"
assert_eq "$?" 0 keepalive/exporter_clean_exit
# A scraper at Prometheus' usual 15 s interval keeps its connection: the
# exporter still holds it idle after 16 s and answers on it (at 10 s
# idle it closed it, so every scrape made a new one and left a TIME_WAIT
# on the exporter's port). The 16 s pass in the background while the
# checks below run (its verdict is read after the Prometheus part).
cat >"$TMP/idle.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
def scrape():
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(65536)
        if not chunk:
            return "closed"
        head += chunk
    hdr, _, body = head.partition(b"\r\n\r\n")
    length = [int(l.split(b":")[1]) for l in hdr.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    while length and len(body) < length[0]:
        chunk = s.recv(65536)
        if not chunk:
            return "closed"
        body += chunk
    return hdr.split(b"\r\n")[0].decode()
print("first", scrape())
time.sleep(16)
try:
    print("second", scrape())
except OSError as e:
    print("second", e)
s.close()
PY
spawn_bg python3 -u "$TMP/idle.py" "$eport" >"$TMP/idle.txt" 2>&1
IDLE=$BG_PID
assert_eq "$(http_status "$eport" /nope)" 404 other_paths_404
assert_eq "$(grep -c "^connscope_process_endpoint_time_wait_sockets{pid=\"$FX_PID_cli\",comm=\"tcpfix\",endpoint=\"127.0.0.1:$port\"} $N\$" "$TMP/scrape.prom")" 1 metrics/time_wait_by_endpoint
# Not GET: 405.
post_status() {
	local fd
	exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n' >&"$fd"
	timeout 5 head -1 <&"$fd" | awk '{print $2}'
	exec {fd}>&-
}
assert_eq "$(post_status "$eport")" 405 post_is_405
# A client that connects and sends nothing does not block the others, and
# concurrent scrapes all get the whole text.
exec {idle}<>"/dev/tcp/127.0.0.1/$eport"
scrapers=()
for k in 1 2 3 4; do
	http_get "$eport" /metrics >"$TMP/c$k.prom" &
	scrapers+=($!)
done
wait "${scrapers[@]}"	# each ends on its own (timeout 5 in http_get)
assert_eq "$(cat "$TMP"/c?.prom | grep -c '^connscope_build_info')" 4 concurrent_scrapes_with_an_idle_client
exec {idle}>&-

# A real Prometheus scraping the exporter every second.
if command -v prometheus >/dev/null; then
	pport=$(free_port)
	mkdir -p "$TMP/prom"
	cat >"$TMP/prom/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: connscope
    static_configs:
      - targets: ['127.0.0.1:$eport']
YML
	spawn_bg prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
		--web.listen-address="127.0.0.1:$pport" >"$TMP/prom/log" 2>&1
	wait_for "[ \"\$(http_status $pport /-/ready)\" = 200 ]" 30 || fail prometheus/ready "$(tail -3 "$TMP/prom/log")"
	q="connscope_process_connections_opened_total%7Bpid%3D%22$FX_PID_cli%22%7D"
	promq() { http_get "$pport" "/api/v1/query?query=$q" | jq -r '.data.result[0].value[1] // empty' 2>/dev/null; }
	wait_for "[ \"\$(promq)\" = $N ]" 30
	assert_eq "$(promq)" "$N" prometheus/query_opened
	up=$(http_get "$pport" "/api/v1/query?query=up" | jq -r '.data.result[0].value[1]')
	assert_eq "$up" 1 prometheus/target_up
	# Every PromQL expression of every dashboard, with its variables set to
	# this workload (job and instance: the scrape's own target labels; node,
	# container and pod "All": no relabelling here, no container),
	# returns at least one series. More churn while
	# Prometheus scrapes, so that rates are not 0; rate windows of 1m.
	assert_eq "$(fx_cmd cli "churn 20")" "churned 20" churned_while_scraped
	quic_clients 3
	wait_for "[ \"\$(promq)\" = $((N + 20)) ]" 30
	assert_eq "$(promq)" "$((N + 20))" prometheus/query_opened_after_more
	# The QUIC panels' variables point at the QUIC server.
	dash_exprs() {
		local pid comm
		jq -r '.. | objects | select(has("expr")) | .expr' "$REPO_ROOT"/dashboards/*.json |
			sort -u | while IFS= read -r e; do
				pid=$FX_PID_cli comm=tcpfix
				[[ $e == *quic* ]] && pid=$GS comm=gtlsserver
				sed -e "s/\\\$__rate_interval/1m/g; s/\\\$__interval/1m/g; s/\\\$__range/1m/g" \
				    -e "s/\\\${pid[^}]*}/$pid/g; s/\\\$pid/$pid/g" \
				    -e "s/\\\${comm[^}]*}/$comm/g; s/\\\$comm/$comm/g" \
				    -e "s/\\\$job/connscope/g; s/\\\$instance/127.0.0.1:$eport/g" \
				    -e "s/\\\$node/.*/g; s/\\\$container/.*/g; s/\\\$pod/.*/g" <<<"$e"
			done
	}
	series_of() {
		local enc
		enc=$(jq -rn --arg q "$1" '$q | @uri')
		http_get "$pport" "/api/v1/query?query=$enc" | jq -r '.data.result | length' 2>/dev/null
	}
	nexpr=0
	while IFS= read -r expr; do
		[ -n "$expr" ] || continue
		nexpr=$((nexpr + 1))
		wait_for "[ \"\$(series_of \"\$expr\")\" -ge 1 ] 2>/dev/null" 20
		got=$(series_of "$expr")
		if [ "${got:-0}" -ge 1 ] 2>/dev/null; then
			ok "dashboards/expr_has_data: ${expr:0:60}"
		else
			fail "dashboards/expr_has_data" "no series for: $expr"
		fi
	done < <(dash_exprs)
	assert_eq "$((nexpr > 0))" 1 dashboards/exprs_found
else
	fail prometheus "prometheus missing (Debian: prometheus)"
fi
wait "$IDLE"
assert_eq "$(awk '$1 == "second" { $1 = ""; print substr($0, 2) }' "$TMP/idle.txt")" "HTTP/1.1 200 OK" \
	keepalive/idle_16s_kept

kill -TERM "$EXP"; wait "$EXP"
assert_eq "$?" 0 exporter/clean_exit

# ---- exporter --all ----
# Every process is traced, the workload found by its pid. Three exporters
# side by side: A with slots for everyone (the exact counts), B with one
# slot (taken by the server, which holds the most sockets when B starts;
# the client is summed into pid="other"), C with a series cap that leaves
# processes out, whole, and says so.
NA=7
# --all reads every namespace from ours: these fixtures are ours.
FX_WRAP=()
aport=$(free_port)
fx_start asrv server -p "$aport" && fx_start acli client -p "$aport"
# More sockets than any other process holds (ss sees what B's first
# snapshot ranks by), so that the server is the busiest when B starts: in
# every network namespace a process is in, as --all reads them all.
all_netns_tcp() {
	local pid ino
	declare -A seen=()
	for pid in /proc/[0-9]*; do
		ino=$(stat -L -c %i "$pid/ns/net" 2>/dev/null) || continue
		[[ -n ${seen[$ino]:-} ]] && continue
		seen[$ino]=1
		nsenter -t "${pid#/proc/}" -n ss -Htanp 2>/dev/null
	done
}
busiest=$(all_netns_tcp | grep -o 'pid=[0-9]*' | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
HOLD=$((${busiest:-0} + 50))
((HOLD < 100)) && HOLD=100
((HOLD > 900)) && HOLD=900	# the fixtures' fd limit
assert_eq "$(fx_cmd acli "open $HOLD")" "opened $HOLD" all/held_open
wait_for "[[ \$(fx_cmd asrv stats) == 'stats accepted $HOLD '* ]]" 10
declare -A APORT APID
for x in A B C; do
	APORT[$x]=$(free_port)
	case $x in
	A) extra=(--top-processes 4096) ;;
	B) extra=(--top-processes 1) ;;
	# C: room for the fixed series (host, agent: ~110 with one series per
	# BPF program of the agent-cost families) and one process (~150), not two.
	C) extra=(--top-processes 4096 --max-series 320) ;;
	esac
	spawn_bg "$CONNSCOPE" exporter --all "${extra[@]}" --listen "127.0.0.1:${APORT[$x]}" -i 0.3 \
		>"$TMP/all$x.out" 2>"$TMP/all$x.err"
	APID[$x]=$BG_PID
done
for x in A B C; do
	wait_for "grep -q 'exporter serving' '$TMP/all$x.err' || ! kill -0 ${APID[$x]}" 30
	grep -q '^connscope: tracing every process' "$TMP/all$x.err" ||
		fail "all/start_$x" "$(head -c 300 "$TMP/all$x.err")"
done
# mval X NAME PID: the value of NAME{pid="PID",...} in exporter X's scrape.
mval() {
	http_get "${APORT[$1]}" /metrics | awk -v m="$2" -v p="{pid=\"$3\"," \
		'index($0, m p) == 1 {print $NF}' | head -1
}
http_get "${APORT[B]}" /metrics >"$TMP/allB.before"
assert_eq "$(fx_cmd acli "churn $NA")" "churned $NA" all/churned
wait_for "[ \"\$(mval A connscope_process_connections_opened_total $FX_PID_acli)\" = $NA ]" 20
assert_eq "$(mval A connscope_process_connections_opened_total "$FX_PID_acli")" "$NA" all/client_opened
wait_for "[ \"\$(mval A connscope_process_connections_accepted_total $FX_PID_asrv)\" = $NA ]" 10
assert_eq "$(mval A connscope_process_connections_accepted_total "$FX_PID_asrv")" "$NA" all/server_accepted
assert_eq "$(mval A connscope_process_tcp_sockets "$FX_PID_asrv" | head -1)" "$HOLD" all/server_held_sockets_seeded
http_get "${APORT[A]}" /metrics >"$TMP/allA.prom"
promtool check metrics <"$TMP/allA.prom" >"$TMP/lintA.txt" 2>&1
assert_eq "$?:$(head -c 300 "$TMP/lintA.txt")" 0: all/promtool_silent
assert_eq "$(grep -c "^connscope_process_open_fds{pid=\"$FX_PID_acli\"," "$TMP/allA.prom")" 1 all/fds_from_proc
assert_eq "$(grep -c '^# TYPE connscope_process_fd_leak_suspects' "$TMP/allA.prom")" 0 all/no_leak_sites_without_fd_tracing

# B: one slot, the server's (unless a busier process turned up meanwhile).
wait_for "[ \"\$(mval B connscope_process_connections_accepted_total $FX_PID_asrv)\" = $NA ]" 10
http_get "${APORT[B]}" /metrics >"$TMP/allB.after"
members=$(awk -F'[{},"]' '/^connscope_process_connections_opened_total\{pid="[0-9]+"/ {print $3 " " $6}' "$TMP/allB.after")
assert_eq "$(grep -c . <<<"$members")" 1 "top1/one_slot ($members)"
if [[ ${members%% *} == "$FX_PID_asrv" ]]; then
	assert_eq "$(mval B connscope_process_connections_accepted_total "$FX_PID_asrv")" "$NA" top1/server_has_the_slot
else
	skip top1/server_has_the_slot "a process busier than the server took the one slot ($members): not a quiet machine"
fi
assert_eq "$(grep -c "{pid=\"$FX_PID_acli\"," "$TMP/allB.after")" 0 top1/client_has_no_series
other=$(awk '/^connscope_process_connections_opened_total\{pid="other",comm="other"\}/ {print $NF}' "$TMP/allB.after")
assert_eq "$((${other:-0} >= NA))" 1 "top1/client_counted_in_other ($other)"
assert_eq "$(awk '/^connscope_processes_other / {print ($2 >= 1)}' "$TMP/allB.after")" 1 top1/processes_other
# No counter series (histograms included) lower after the churn than before.
counters_down() {
	awk 'FNR == 1 {f++}
	     $1 == "#" && $2 == "TYPE" && ($4 == "counter" || $4 == "histogram") {c[$3] = 1; next}
	     /^#/ {next}
	     {k = $0; sub(/ [^ ]*$/, "", k); n = k; sub(/\{.*/, "", n); b = n; sub(/_(bucket|sum|count)$/, "", b)
	      if (!(n in c) && !(b in c)) next
	      if (f == 1) v[k] = $NF; else if ((k in v) && $NF + 0 < v[k] + 0) print k, v[k], "->", $NF}' "$@"
}
assert_eq "$(counters_down "$TMP/allB.before" "$TMP/allB.after" | head -3)" "" top1/no_counter_went_down

# C: the cap. Whole processes (every bucket of every histogram), the cap
# held, and the drop reported.
wait_for "[ \"\$(http_get ${APORT[C]} /metrics | awk '/^connscope_series_dropped_total / {print (\$2 > 0)}')\" = 1 ]" 10
http_get "${APORT[C]}" /metrics >"$TMP/allC.prom"
lines=$(grep -vc '^#' "$TMP/allC.prom")
assert_eq "$(awk '/^connscope_snapshot_series / {print $2}' "$TMP/allC.prom")" "$lines" cap/series_gauge_is_the_line_count
assert_eq "$((lines <= 320))" 1 "cap/held ($lines lines)"
assert_eq "$(awk '/^connscope_series_limit / {print $2}' "$TMP/allC.prom")" 320 cap/limit_reported
assert_eq "$(awk '/^connscope_snapshot_series_dropped / {print ($2 > 0)}' "$TMP/allC.prom")" 1 cap/dropped_reported
assert_eq "$(awk '/^connscope_series_dropped_total / {print ($2 > 0)}' "$TMP/allC.prom")" 1 cap/dropped_total_reported
assert_eq "$(awk -F'[{,]' '/^connscope_process_connection_lifetime_seconds_/ {n[$2]++}
	END {for (p in n) if (n[p] != 35) print p, n[p]}' "$TMP/allC.prom")" "" cap/histograms_whole
assert_eq "$(grep -c '^connscope_process_connections_opened_total{' "$TMP/allC.prom")" 1 cap/one_process_fits
promtool check metrics <"$TMP/allC.prom" >"$TMP/lintC.txt" 2>&1
assert_eq "$?:$(head -c 300 "$TMP/lintC.txt")" 0: cap/promtool_silent
for x in A B C; do
	kill -TERM "${APID[$x]}"; wait "${APID[$x]}"
	assert_eq "$?" 0 "all/clean_exit_$x"
done
fx_stop acli; fx_stop asrv
# Bad input.
"$CONNSCOPE" exporter -p 1 --listen nonsense >/dev/null 2>"$TMP/bad.err"
assert_eq "$?" 2 bad/listen_status
assert_eq "$(grep -c "expected ADDR:PORT" "$TMP/bad.err")" 1 bad/listen_message
# bad_usage NAME MESSAGE ARGS...: exit 2 and the one message MESSAGE (its
# wrapped lines joined), each line within 80 columns.
bad_usage() {
	local name=$1 want=$2
	shift 2
	"$CONNSCOPE" exporter "$@" >/dev/null 2>"$TMP/bad.err"
	assert_eq "$?:$(msg_join "$TMP/bad.err")" "2:$want" "bad/$name"
	fits80 "bad/$name" "$TMP/bad.err"
}
bad_usage all_and_pids "connscope exporter: -p and --all both given: give the one you mean, not both" --all -p 1
bad_usage no_target "connscope exporter: which processes? give -p PID, --comm NAME or --all"
bad_usage max_series_0 "connscope: --max-series '0': expected an integer between 100 and 10000000" --all --max-series 0
bad_usage max_series_garbage "connscope: --max-series '12x': expected an integer between 100 and 10000000" --all --max-series 12x
bad_usage top_processes_0 "connscope: --top-processes '0': expected an integer between 1 and 10000" --all --top-processes 0
bad_usage top_without_all "connscope exporter: --top-processes needs --all (-p processes each have series)" -p 1 --top-processes 5
bad_usage all_children "connscope exporter: --children with --all: all are traced; drop --children" --all --children
# A port in use in ours (the churn's server listens in the test's namespace).
bport=$(free_port)
fx_start busy server -p "$bport" || fail bad/in_use_server "tcpfix did not start"
"$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$bport" >/dev/null 2>"$TMP/inuse.err"
assert_eq "$?" 1 bad/in_use_status
assert_eq "$(cat "$TMP/inuse.err")" "connscope: cannot listen on 127.0.0.1:$bport (in use? try another --listen port)" bad/in_use_one_message
fx_stop busy
# Lost events: a tiny ring buffer and a paused exporter. Its warning when
# it stops names the exported counts and the series that tells the kinds:
# it has no report for "counts below" (it said "counts below are low (see
# agent: losses)").
lport=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_cli" --ringbuf-size 4096 --listen "127.0.0.1:$lport" \
	-i 0.5 >"$TMP/lost.out" 2>"$TMP/lost.err"
LEXP=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/lost.err' || ! kill -0 $LEXP" 30 ||
	fail lost/exporter_start "$(head -c 300 "$TMP/lost.err")"
kill -STOP "$LEXP"
assert_eq "$(fx_cmd cli "churn 200")" "churned 200" lost/churned
kill -CONT "$LEXP"
lost_counted() {
	http_get "$lport" /metrics |
		awk 'index($0, "connscope_agent_losses_total{what=\"tcp_events\"} ") == 1 {print ($2 > 0)}'
}
wait_for '[ "$(lost_counted)" = 1 ]' 20 || fail lost/counted "no tcp_events loss in /metrics"
kill -TERM "$LEXP"; wait "$LEXP"
assert_eq "$?" 0 lost/exporter_clean_exit
lost_paragraph "$TMP/lost.err" |
	grep -Eq '^connscope: warning: LOST: [0-9]+ TCP events .*; the exported counts are low \(see connscope_agent_losses_total\)$' &&
	ok lost/warned || fail lost/warned "$(head -c 600 "$TMP/lost.err")"
fits80 lost/warning "$TMP/lost.err"
fx_stop cli; fx_stop srv
