#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Grafana dashboards (dashboards/*.json): valid JSON that Grafana 9/10 can
# import (a DS_PROMETHEUS input, a `datasource` variable every panel uses,
# multi-value pid/comm variables), and every metric, label and label value a
# query names is one connscope really writes: the families of
# `attach --prom`, `summary --prom` and the exporter's /metrics. The
# queries parse (promtool check rules) and evaluate without error on a real
# Prometheus scraping the exporter, with the Grafana variables filled in.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
DASH_DIR=$REPO_ROOT/dashboards
DASHBOARDS=(connscope-overview connscope-process connscope-agent)

# http_get PORT PATH: the response body (headers dropped), HTTP/1.0.
http_get() {
	local fd
	{ exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&"$fd"
	timeout 5 cat <&"$fd" | tr -d '\r' | sed '1,/^$/d'
	exec {fd}>&-
}

# ---- what connscope writes ----

# --fd-sites: the leak-suspect panel's family comes from the fd syscall tracing.
"$CONNSCOPE" attach -p $$ -d 1 --fd-sites --prom "$TMP/x.prom" >"$TMP/attach.out" 2>"$TMP/attach.err"
rc=$?
if ((rc)); then
	fail metrics/attach "exit status $rc: $(head -c 300 "$TMP/attach.err")"
else
	ok metrics/attach
fi
"$CONNSCOPE" summary --prom >"$TMP/sum.prom" 2>"$TMP/sum.err"
rc=$?
if ((rc)); then
	fail metrics/summary "exit status $rc: $(head -c 300 "$TMP/sum.err")"
else
	ok metrics/summary
fi
# The exporter adds metrics of its own (render time, scrapes). It traces a
# client that churns connections, so the per-endpoint and histogram series
# have samples (and labels) too, and stays up for the Prometheus below.
# The churn in a namespace of the test's own (fx_twns): the endpoint's
# TIME_WAIT gauge waited for is its 5 live, which resets could end early
# in ours. The exporter stays in ours (reads the client's namespace
# through it), where the Prometheus below scrapes it.
fx_twns dash
port=$(fx_port)
if ! { fx_start srv server -p "$port" && fx_start cli client -p "$port"; }; then
	fail fixtures "tcpfix did not start"
fi
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "${FX_PID_cli:-}" --listen "127.0.0.1:$eport" -i 0.5 >"$TMP/exp.out" 2>"$TMP/exp.err"
if wait_for "grep -q 'exporter serving' '$TMP/exp.err'" 30; then
	assert_eq "$(fx_cmd cli "churn 5")" "churned 5" churned
	ep_tw="^connscope_process_endpoint_time_wait_sockets{pid=\"$FX_PID_cli\",.*} 5$"
	wait_for "http_get $eport /metrics >'$TMP/exp.prom' && grep -q '$ep_tw' '$TMP/exp.prom'" 20
	assert_eq "$(grep -c "$ep_tw" "$TMP/exp.prom")" 1 metrics/exporter_endpoint_series
else
	fail metrics/exporter "did not start: $(head -c 300 "$TMP/exp.err")"
	: >"$TMP/exp.prom"
fi
# QUIC families exist for processes with QUIC traffic: an attach of
# Debian's ngtcp2 example server while one client fetches a page.
qport=$(udp_free_port)
{ quic_www "$TMP" && quic_server "$TMP" "$qport"; } || fail quic/server "gtlsserver did not start on $qport"
GS=${QS_PID:-0}
if cs_attach "$TMP/q.out" "$TMP/q.err" -p "$GS" --prom "$TMP/q.prom"; then
	quic_fetch "$qport"
	cs_stop
	assert_eq "$(grep -c "^connscope_process_quic_handshakes_completed_total{pid=\"$GS\"" "$TMP/q.prom")" \
		1 metrics/quic
else
	fail metrics/quic_attach "$(cat "$TMP/q.err")"
	: >"$TMP/q.prom"
fi
PROMS=("$TMP/x.prom" "$TMP/sum.prom" "$TMP/exp.prom" "$TMP/q.prom")

# Family names from "# TYPE name type"; a histogram's samples are
# name_bucket, name_sum and name_count.
awk '$1 == "#" && $2 == "TYPE" {
	print $3
	if ($4 == "histogram") { print $3 "_bucket"; print $3 "_sum"; print $3 "_count" }
}' "${PROMS[@]}" | sort -u >"$TMP/names"
# "name label" and "name label=value" for every label of every sample; and
# the label names seen at all.
awk '!/^#/ && /\{/ {
	name = substr($0, 1, index($0, "{") - 1)
	rest = substr($0, index($0, "{") + 1)
	gsub(/\\\\/, "", rest); gsub(/\\"/, "", rest)
	while (match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"/)) {
		pair = substr(rest, 1, RLENGTH)
		k = substr(pair, 1, index(pair, "=") - 1)
		v = substr(pair, index(pair, "=") + 2); v = substr(v, 1, length(v) - 1)
		print name " " k
		print name " " k "=" v
		rest = substr(rest, RLENGTH + 1); sub(/^,/, "", rest)
	}
}' "${PROMS[@]}" | sort -u >"$TMP/labels"
awk '$2 !~ /=/ { print $2 }' "$TMP/labels" | sort -u >"$TMP/label_names"
nfam=$(awk '!/_(bucket|sum|count)$/' "$TMP/names" | wc -l)
if ((nfam >= 30)); then
	ok metrics/families_found
else
	fail metrics/families_found "only $nfam families in attach --prom, summary --prom and /metrics"
fi
# The traced shell has per-process series, so their labels are known.
assert_eq "$(grep -c "^connscope_process_tcp_sockets pid$" "$TMP/labels")" 1 metrics/process_labels_seen

command -v promtool >/dev/null || fail promtool "promtool missing (Debian: prometheus)"

# A real Prometheus scraping the exporter, to run the queries on.
pport=
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
        # As the fleet's relabelling adds it (deploy/kubernetes/prometheus.yml).
        labels:
          node: test-node
YML
	spawn_bg prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
		--web.listen-address="127.0.0.1:$pport" >"$TMP/prom/log" 2>&1
	# Three scrapes at least, so rate() over the window has samples.
	scrapes() { http_get "$pport" "/api/v1/query?query=sum(count_over_time(up%5B1m%5D))" |
		jq -r '.data.result[0].value[1] // 0' 2>/dev/null; }
	if wait_for "[ \"\$(scrapes)\" -ge 3 ] 2>/dev/null" 40; then
		ok prometheus/scraping
	else
		fail prometheus/scraping "$(tail -3 "$TMP/prom/log")"
		pport=
	fi
else
	fail prometheus "prometheus missing (Debian: prometheus)"
fi

# The node variable's query, as Grafana runs it ("All" jobs and instances):
# the node the target was given.
if [[ -n $pport ]]; then
	assert_eq "$(http_get "$pport" "/api/v1/label/node/values?match%5B%5D=$(jq -rn \
		'"connscope_process_tcp_sockets{job=~\".*\",instance=~\".*\"}" | @uri')" |
		jq -r '.data | join(" ")')" test-node prometheus/node_variable_values
fi

# ---- the dashboards ----

# jq: the panels that query (rows hold panels when collapsed; a row itself
# queries nothing).
JQ_PANELS='def panels: [.panels[]? | ., (.panels[]?)] | map(select(.type != "row"));'

# not_in FILE: the stdin lines not in FILE (sorted, unique), joined by spaces.
not_in() {
	sort -u | comm -23 - "$1" | tr '\n' ' ' | sed 's/ $//'
}

check_dashboard() {
	local d=$1 f=$DASH_DIR/$1.json out v

	if [[ ! -f $f ]]; then
		fail "$d/exists" "$f missing"
		return
	fi
	if ! jq empty "$f" 2>"$TMP/jq.err"; then
		fail "$d/valid_json" "$(head -c 300 "$TMP/jq.err")"
		return
	fi
	ok "$d/valid_json"
	out=$(jq -r '.schemaVersion >= 36 and .schemaVersion <= 39 and (.uid | type) == "string"
		and (.title | type) == "string" and (.panels | length) > 0' "$f")
	assert_eq "$out" true "$d/grafana_model"
	assert_eq "$(jq '[.__inputs[]? | select(.name == "DS_PROMETHEUS" and .type == "datasource"
		and .pluginId == "prometheus")] | length' "$f")" 1 "$d/input_DS_PROMETHEUS"
	assert_eq "$(jq '[.templating.list[]? | select(.name == "datasource" and .type == "datasource"
		and .query == "prometheus")] | length' "$f")" 1 "$d/variable_datasource"
	# A fleet's nodes and containers do not mix: job and instance (the
	# target labels Prometheus adds), node (added by the fleet's
	# relabelling, deploy/kubernetes/prometheus.yml), container and pod
	# (connscope's container and pod_uid labels of a process in a
	# container) are variables, multi-value with an "All" of .* (which a
	# series without the label matches too), and every selector filters on
	# all five.
	assert_eq "$(jq '[.templating.list[]? | select(.type == "query" and .multi == true
		and .includeAll == true and .allValue == ".*"
		and ((.name == "job" and .definition == "label_values(connscope_process_tcp_sockets, job)")
		or (.name == "instance" and .definition ==
		"label_values(connscope_process_tcp_sockets{job=~\"$job\"}, instance)")
		or (.name == "node" and .definition ==
		"label_values(connscope_process_tcp_sockets{job=~\"$job\",instance=~\"$instance\"}, node)")
		or (.name == "container" and .definition ==
		"label_values(connscope_process_tcp_sockets{job=~\"$job\",instance=~\"$instance\",node=~\"$node\"}, container)")
		or (.name == "pod" and .definition ==
		"label_values(connscope_process_tcp_sockets{job=~\"$job\",instance=~\"$instance\",node=~\"$node\"}, pod_uid)")
		))] | length' "$f")" 5 "$d/variables_job_instance_node_container_pod"
	# Every selector: {...} after a metric name, and bare ones ({__name__=~...}).
	out=$(jq -r "$JQ_PANELS"'panels[] | .targets[]? | .expr // empty' "$f" |
		grep -oE '(connscope_[A-Za-z0-9_]+)?\{[^}]*\}|connscope_[A-Za-z0-9_]+' |
		grep -vF 'job=~"$job",instance=~"$instance",node=~"$node",container=~"$container",pod_uid=~"$pod"' |
		sort -u | head -3 | tr '\n' ' ')
	assert_eq "$out" "" "$d/every_selector_on_job_instance_node_container_pod"
	for v in pid comm; do
		assert_eq "$(jq --arg v "$v" '[.templating.list[]? | select(.name == $v and .type == "query"
			and .multi == true and .includeAll == true
			and (.datasource.uid == "${datasource}" or .datasource.uid == "$datasource")
			and (.definition // .query.query // .query) == "label_values(connscope_process_tcp_sockets, \($v))"
			)] | length' "$f")" 1 "$d/variable_$v"
	done

	# Every panel and every query of it on the datasource variable.
	out=$(jq -r "$JQ_PANELS"'panels[] | select(
		([.datasource.uid] + [.targets[]? | select(has("datasource")) | .datasource.uid])
		| any(. != "${datasource}" and . != "$datasource")) | .title' "$f")
	assert_eq "$out" "" "$d/panels_use_datasource_variable"
	out=$(jq -r "$JQ_PANELS"'panels[] | select([.targets[]? | .expr // "" | select(. != "")]
		| length == 0) | .title' "$f")
	assert_eq "$out" "" "$d/panels_have_queries"
	out=$(jq -r "$JQ_PANELS"'[.panels[]? | ., (.panels[]?) | .id] | (length == (unique | length))' "$f")
	assert_eq "$out" true "$d/panel_ids_unique"

	# Heatmaps: Prometheus buckets as they are (no calculation in Grafana).
	out=$(jq -r "$JQ_PANELS"'panels[] | select(.type == "heatmap") | select(
		.options.calculate != false or ([.targets[] | select(.format != "heatmap"
		or (.expr | test("^sum by \\(le\\) \\(rate\\(connscope_[a-z_]+_bucket\\{[^}]*\\}\\[\\$__rate_interval\\]\\)\\)$") | not))]
		| length > 0)) | .title' "$f")
	assert_eq "$out" "" "$d/heatmaps_from_buckets"

	jq -r "$JQ_PANELS"'panels[] | .targets[]? | .expr // empty' "$f" >"$TMP/$d.exprs"
	jq -r '.templating.list[]? | select(.type == "query") | .definition // .query.query // .query' \
		"$f" >>"$TMP/$d.exprs"

	# Ranges from Grafana, so they follow the scrape interval.
	out=$(grep -oE '\[[^]]*\]' "$TMP/$d.exprs" | grep -vxE '\[\$__(rate_interval|range|interval)\]' |
		sort -u | tr '\n' ' ')
	assert_eq "$out" "" "$d/ranges_from_grafana"

	# Metric names: each one connscope writes.
	out=$(grep -oE 'connscope_[A-Za-z0-9_]+' "$TMP/$d.exprs" | not_in "$TMP/names")
	assert_eq "$out" "" "$d/metric_names_exist"
	grep -oE 'connscope_[A-Za-z0-9_]+' "$TMP/$d.exprs" >>"$TMP/used"

	# Selectors: the labels a metric is filtered on are labels it has, and a
	# fixed value (state="time_wait") is one it takes.
	out=$(grep -oE 'connscope_[A-Za-z0-9_]+\{[^}]*\}' "$TMP/$d.exprs" | awk '{
		name = substr($0, 1, index($0, "{") - 1)
		rest = substr($0, index($0, "{") + 1); sub(/\}$/, "", rest)
		while (match(rest, /^ *[a-zA-Z_][a-zA-Z0-9_]* *(=~|!~|!=|=) *"[^"]*"/)) {
			m = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
			sub(/^ *, */, "", rest)
			k = m; sub(/^ */, "", k); sub(/[ =!~].*/, "", k)
			op = m; sub(/^ *[a-zA-Z0-9_]+ */, "", op); sub(/ *".*/, "", op)
			v = m; sub(/^[^"]*"/, "", v); sub(/"$/, "", v)
			print name " " k
			if (op == "=" && v !~ /\$/)
				print name " " k "=" v
		}
		if (rest != "")
			print name " UNPARSED:" rest
	}' | grep -vE '^[^ ]+ (job|instance|node|container|pod_uid)$' | not_in "$TMP/labels")
	assert_eq "$out" "" "$d/selector_labels_exist"

	# by (...) / without (...) and {{label}} in legends: labels connscope
	# writes, or the target labels Prometheus adds.
	{
		grep -oE '(by|without) *\([^)]*\)' "$TMP/$d.exprs" | sed -E 's/^[a-z]+ *\(//; s/\)$//' |
			tr ',' '\n' | tr -d ' '
		jq -r "$JQ_PANELS"'panels[] | .targets[]? | .legendFormat // empty' "$f" |
			grep -oE '\{\{ *[a-zA-Z_][a-zA-Z0-9_]* *\}\}' | tr -d '{} '
	} | grep -vxE 'instance|job' | sed '/^$/d' >"$TMP/$d.grouping"
	assert_eq "$(not_in "$TMP/label_names" <"$TMP/$d.grouping")" "" "$d/grouping_labels_exist"

	# The panel queries with the variables as Grafana fills them in
	# ($pid, $comm, $job, $instance, $container, $pod "All" is .*; $node
	# the one node of the Prometheus below), one JSON string a line.
	jq -r "$JQ_PANELS"'panels[] | .targets[]? | .expr // empty
		| gsub("\\$__rate_interval"; "5s") | gsub("\\$__range"; "1m")
		| gsub("\\$__interval"; "1s") | gsub("\\$\\{?node\\}?"; "test-node")
		| gsub("\\$\\{?(pid|comm|job|instance|container|pod)\\}?"; ".*") | @json' \
		"$f" >"$TMP/$d.queries"

	# PromQL that parses: every query as a recording rule.
	if command -v promtool >/dev/null; then
		{
			echo "groups:"
			echo "  - name: $d"
			echo "    rules:"
			awk '{ printf "      - record: dashboard_query:%s:%d\n        expr: %s\n", d, NR, $0 }' \
				d="${d//-/_}" "$TMP/$d.queries"
		} >"$TMP/$d.rules.yml"
		if promtool check rules "$TMP/$d.rules.yml" >"$TMP/$d.rules.out" 2>&1; then
			ok "$d/promql_parses"
		else
			fail "$d/promql_parses" "$(grep -v '^Checking' "$TMP/$d.rules.out" | head -c 400)"
		fi
	fi

	# And that evaluate on real data: no error, no warning (many-to-many
	# matching, duplicate series after dropping labels, ...).
	if [[ -n $pport ]]; then
		local q bad='' res
		while IFS= read -r q; do
			res=$(http_get "$pport" "/api/v1/query?query=$(jq -rn --argjson q "$q" '$q | @uri')" |
				jq -r 'if .status == "success" and ((.warnings // []) | length) == 0 then "ok"
					else "\(.error // "") \(.warnings // [] | join("; "))" end' 2>&1)
			[[ $res == ok ]] || bad+="$(jq -rn --argjson q "$q" '$q'): $res; "
		done <"$TMP/$d.queries"
		assert_eq "$bad" "" "$d/queries_evaluate"
	fi
}

for d in "${DASHBOARDS[@]}"; do
	check_dashboard "$d"
done

uids=$(for d in "${DASHBOARDS[@]}"; do jq -r .uid "$DASH_DIR/$d.json" 2>/dev/null; done | sort | uniq -d)
assert_eq "$uids" "" uids_unique

# docs/metrics.md lists every family.
out=$(awk '!/_(bucket|sum|count)$/' "$TMP/names" | while read -r n; do
	grep -qF "\`$n\`" "$REPO_ROOT/docs/metrics.md" 2>/dev/null || echo "$n"
done | tr '\n' ' ')
assert_eq "$out" "" docs/metrics_md_lists_every_family

# Not a failure: families no dashboard shows yet.
unused=$(awk '!/_(bucket|sum|count)$/' "$TMP/names" | comm -23 - <(sed -E 's/_(bucket|sum|count)$//' "$TMP/used" | sort -u) | tr '\n' ' ')
[[ -n $unused ]] && echo "91_dashboards: families on no dashboard: $unused" >&2
exit 0
