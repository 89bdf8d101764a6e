#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope exporter: GET /metrics (promtool-clean, exact counts), GET /,
# 404 elsewhere, bad --listen; and a real Prometheus scraping it on
# loopback sees the same numbers through its query API.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
N=9

# http_get PORT PATH: the response body (headers dropped), HTTP/1.0.
http_get() {
	local fd
	exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&"$fd"
	timeout 5 cat <&"$fd" | tr -d '\r' | sed '1,/^$/d'
	exec {fd}>&-
}
http_status() {
	local fd
	# (refused until the server listens: the wait_for around it retries)
	{ exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\n\r\n' "$2" >&"$fd"
	timeout 5 head -1 <&"$fd" | awk '{print $2}'
	exec {fd}>&-
}

port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$eport" -i 0.3 >"$TMP/exp.out" 2>"$TMP/exp.err"
EXP=$BG_PID
wait_for "grep -q 'exporter serving http://127.0.0.1:$eport/metrics' '$TMP/exp.err'" 30 ||
	fail exporter/start "$(cat "$TMP/exp.err")"
assert_eq "$(fx_cmd cli "churn $N")" "churned $N" churned
metric() { http_get "$eport" /metrics | awk -v m="$1" -v p="pid=\"$FX_PID_cli\"" 'index($0, m "{") == 1 && index($0, p) {print $NF}' | head -1; }
wait_for "[ \"\$(metric connscope_process_time_wait_entered_total)\" = $N ]" 20
assert_eq "$(metric connscope_process_connections_opened_total)" "$N" metrics/opened
assert_eq "$(metric connscope_process_time_wait_entered_total)" "$N" metrics/time_wait_entered
http_get "$eport" /metrics >"$TMP/scrape.prom"
promtool check metrics <"$TMP/scrape.prom" >"$TMP/lint.txt" 2>&1
assert_eq "$?" 0 "metrics/promtool_clean $(head -c 300 "$TMP/lint.txt")"
assert_eq "$(grep -c '^connscope_scrapes_total ' "$TMP/scrape.prom")" 1 metrics/self_scrapes
assert_eq "$(grep -c '^connscope_program_attached{program="handle_set_state_btf"} 1$' "$TMP/scrape.prom")" 1 metrics/program_attached
assert_eq "$(grep -c '^connscope_program_attached{program="handle_set_state_tp"} 0$' "$TMP/scrape.prom")" 1 metrics/fallback_not_attached
assert_eq "$(grep -c '^connscope_snapshot_render_seconds ' "$TMP/scrape.prom")" 1 metrics/self_render_time
assert_eq "$(http_get "$eport" / | grep -c 'href="/metrics"')" 1 index/links_metrics
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
	# this workload, returns at least one series. More churn while
	# Prometheus scrapes, so that rates are not 0; rate windows of 1m.
	assert_eq "$(fx_cmd cli "churn 20")" "churned 20" churned_while_scraped
	wait_for "[ \"\$(promq)\" = $((N + 20)) ]" 30
	assert_eq "$(promq)" "$((N + 20))" prometheus/query_opened_after_more
	dash_exprs() {
		jq -r '.. | objects | select(has("expr")) | .expr' "$REPO_ROOT"/dashboards/*.json |
			sed -e "s/\\\$__rate_interval/1m/g; s/\\\$__interval/1m/g; s/\\\$__range/1m/g" \
			    -e "s/\\\${pid[^}]*}/$FX_PID_cli/g; s/\\\$pid/$FX_PID_cli/g" \
			    -e "s/\\\${comm[^}]*}/tcpfix/g; s/\\\$comm/tcpfix/g" | sort -u
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

kill -TERM "$EXP"; wait "$EXP"
assert_eq "$?" 0 exporter/clean_exit
# Bad input.
"$CONNSCOPE" exporter -p 1 --listen nonsense >/dev/null 2>"$TMP/bad.err"
assert_eq "$?" 2 bad/listen_status
assert_eq "$(grep -c "expected ADDR:PORT" "$TMP/bad.err")" 1 bad/listen_message
"$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$port" >/dev/null 2>"$TMP/inuse.err"
assert_eq "$?" 1 bad/in_use_status
assert_eq "$(cat "$TMP/inuse.err")" "connscope: cannot listen on 127.0.0.1:$port (in use? try another --listen port)" bad/in_use_one_message
fx_stop cli; fx_stop srv
