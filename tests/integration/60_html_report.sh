#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# attach --report on a real loopback workload: the HTML file is complete,
# self-contained, says what the JSON report of the same run says (table
# and every heatmap cell), and its hover readout works in a real browser
# (headless Chromium, driven through the page's #hover=ID:ROW:COL hook).
# attach with --fd-sites traces fds with their leak sites: the fd part says what the JSON's fd
# part says, and its heatmaps hover the same way. The client's churn (a
# connection per request) is a finding in both, and the reuse part (table
# and lifetime / requests maps) agrees with the JSON's. A screenshot is
# kept as an artifact for people to look at.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

N=30
HELD=6		# sockets the client keeps open: fds that grow and get old
TMP=$(lib_tmpdir)
H=$TMP/report.html
J=$TMP/out.json
ARTIFACT_DIR=${ARTIFACT_DIR:-$REPO_ROOT/.output/artifacts}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}


# The fixtures in a namespace of the test's own (fx_twns): the churn waits
# for each batch's TIME_WAIT and the heatmap's peak is all N of them live,
# and resets can end them early in ours.
fx_twns html
port=$(fx_port)
# Without the workload, attach or the file, nothing below can mean anything.
fx_start srv server -p "$port" || { fail start server; exit 1; }
fx_start cli client -p "$port" || { fail start client; exit 1; }
cpid=$FX_PID_cli
# -j to stdout and --report together: one run, two renderings to compare.
# --leak-age 0.5: the held sockets are leak suspects by the end.
cs_attach "$J" "$TMP/err" -p "$cpid" -i 0.5 -j --report "$H" --fd-sites --leak-age 0.5 ||
	{ fail attach "$(cat "$TMP/err")"; exit 1; }
# In batches of B, each closed (TIME_WAIT) before the next begins: the
# books count a connection open until it reaches CLOSE, and a slow server
# would let all N overlap. This way at most HELD are open at once whatever
# the server's pace, and a connection per request is the churn finding.
B=5
churned=0
for ((k = B; k <= N; k += B)); do
	[[ $(fx_cmd cli "churn $B") == "churned $B" ]] || break
	wait_for "[ \$(tw_on_port $port) -ge $k ] && closes_done $port" 20 || break
	churned=$k
done
assert_eq "$churned" "$N" churned
# The kernel's closes over too (the server's LAST_ACK ends), not only the
# client's TIME_WAIT begun: no close of the churn comes after this.
wait_for "[ \$(tw_on_port $port) -ge $N ] && closes_done $port" 20 ||
	fail kernel_closed "kernel: $(tw_on_port "$port") TIME_WAIT, closes on $port not over"
assert_eq "$(fx_cmd cli "open $HELD")" "opened $HELD" held_open
# Two more intervals, so the map has columns with all N alive. Intervals
# are wall-clock time: there is no event to poll for.
sleep 1.2
cs_stop
assert_eq "$?" 0 exit_status

# ---- the file ----
assert_eq "$([[ -s $H ]] && echo yes)" yes file_written || exit 1
assert_eq "$(ls "$H".tmp 2>/dev/null)" "" no_tmp_left
assert_eq "$(tail -n 1 "$H")" "</html>" complete
assert_eq "$(head -n 1 "$H")" "<!DOCTYPE html>" doctype
# Nothing to fetch: no URL at all, every src/href/url() local.
assert_eq "$(grep -c -i -E 'https?:|//' "$H")" 0 no_urls
assert_eq "$(grep -o -i -E '(src|href)=["'"'"']?[^"'"'"' >]*|url\([^)]*\)' "$H" |
	grep -v -i -E '^(src|href)=["'"'"']?(#|data:)|^url\(["'"'"']?#' | head -3)" "" refs_local
assert_eq "$(grep -c "Content-Security-Policy\" content=\"default-src 'none'" "$H")" 1 csp

# ---- the table agrees with the JSON ----
c=".processes[] | select(.pid == $cpid)"
# The value of data-k=KEY in the summary row of pid.
html_td() {
	grep -o "<tr id=\"proc-$1\">.*" "$H" | grep -o "data-k=\"$2\">[^<]*" | head -n 1 |
		cut -d'>' -f2
}
assert_eq "$(html_td "$cpid" time_wait_entered)" "$N" table/time_wait_entered
assert_eq "$(jqn "$c | .totals.time_wait_entered" "$J")" "$N" json/time_wait_entered
for k in connections_opened connections_accepted connections_closed time_wait_entered \
	time_wait_expired time_wait_ended_early; do
	assert_eq "$(html_td "$cpid" "$k")" "$(jqn "$c | .totals.$k" "$J")" "table/$k"
done
assert_eq "$(html_td "$cpid" time_wait)" "$(jqn "$c | .time_wait" "$J")" table/time_wait_live
assert_eq "$(html_td "$cpid" orphans_now)" "$(jqn "$c | .tcp.orphan" "$J")" table/orphans_now
assert_eq "$(html_td "$cpid" comm)" "$(jqn "$c | .comm" "$J")" table/comm
# The run's parameters: "<dt>NAME</dt><dd ...>VALUE</dd>", a fixed string.
html_dd() {
	sed 's/<dd [^>]*>/<dd>/g' "$H" | grep -c -F "<dt>$1</dt><dd>$2</dd>"
}
assert_eq "$(html_dd hook "$(jqn .run.hook "$J")")" 1 run/hook
assert_eq "$(html_dd "TIME_WAIT method" "$(jqn .run.time_wait_method "$J")")" 1 run/time_wait_method
assert_eq "$(html_dd events "$(jqn .agent.events "$J")")" 1 run/events
assert_eq "$(html_dd "events lost" "$(jqn .agent.events_lost "$J")")" 1 run/events_lost
assert_eq "$(html_dd "end reason" "$(jqn .run.end_reason "$J")")" 1 run/end_reason
assert_eq "$(html_dd interval "$(jqn .run.interval_s "$J") s")" 1 run/interval
assert_eq "$(html_dd reconciles "$(jqn .agent.reconciles "$J")")" 1 run/reconciles

# ---- the heatmap agrees with the JSON, cell by cell ----
id=hm-$cpid-time_wait
hm="$c | .heatmaps.time_wait"
svg=$TMP/tw.svg
sed -n "/<svg class=\"hm\" id=\"$id\"/,/<\/svg>/p" "$H" >"$svg"
rows=$(jqn "$hm | .rows | length" "$J")
cols=$(jqn "$hm | .cells[0] | length" "$J")
assert_eq "$((rows >= 1 && cols >= 2))" 1 heatmap/has_rows_and_columns
assert_eq "$(grep -o '<rect class="c"' "$svg" | wc -l)" "$((rows * cols))" \
	heatmap/rows_x_cols_cells
assert_eq "$(grep -o 'data-rows="[0-9]*" data-cols="[0-9]*"' "$svg")" \
	"data-rows=\"$rows\" data-cols=\"$cols\"" heatmap/dimensions
assert_eq "$(grep -o 'data-row="[0-9]*" data-col="[0-9]*" data-value="[0-9]*"' "$svg" |
	sed 's/[^0-9 ]//g' | sort)" \
	"$(jqn "$hm | .cells | to_entries[] | .key as \$r | .value | to_entries[] |
		\"\(\$r) \(.key) \(.value)\"" "$J" | sort)" heatmap/cells_equal_json
assert_eq "$(jqn "$hm | .cells[0] | max" "$J")" "$N" heatmap/peak_is_n
label=$(jqn "$hm | .rows[0]" "$J")
assert_eq "$label" "127.0.0.1:$port" heatmap/row0_is_endpoint
# The first column holding the peak: a value we know.
col=$(jqn "$hm | .cells[0] | index(max)" "$J")
want=$(jqn "$hm | .cells[0][$col]" "$J")

# ---- the run's clock starts once tracing does ----
# One fd listing an interval, and the client always holds fds: a column
# without any is an interval of the run that was not traced (the clock
# started before the programs were loaded, seconds on a busy host, and the
# first columns stayed empty).
assert_eq "$(jqn "[.processes[] | select(.pid == $cpid) | .fds.heatmaps.fd_type.cells |
	transpose[] | add] | map(select(. == 0)) | length" "$J")" 0 clock/no_empty_fd_column

# ---- the programs by their whole names, the footer by the hooks used ----
# The kernel keeps 15 characters of a program's name: handle_set_state_btf
# and handle_set_state_nested both read handle_set_stat there.
assert_eq "$(jqn '[.agent.cost.programs[].name] | (length == (unique | length)) and
	(index("handle_set_state_btf") != null)' "$J")" true programs/json_names_whole_unique
prog_names=$(sed -n '/<table class="ep" id="bpf-programs">/,/<\/table>/p' "$H" |
	grep -o '<span class="mono">[A-Za-z0-9_]*</span>\|<td class="l mono">[A-Za-z0-9_]*</td>' |
	sed 's/<[^>]*>//g')
assert_eq "$(sort <<<"$prog_names" | uniq -d | head -3)" "" programs/html_names_unique
assert_eq "$(sort <<<"$prog_names")" "$(jqn '.agent.cost.programs[].name' "$J" | sort)" \
	programs/html_names_equal_json
footer=$(grep -o '<footer data-k="sources">.*</footer>' "$H" | sed 's/<[^>]*>//g')
assert_eq "$(grep -c -F "($(jqn .run.hook "$J")" <<<"$footer")" 1 footer/names_the_hook
# An accept hook runs per transition only (.run.records says which), and
# the footer names the one run.accept_hook names.
if [[ $(jqn .run.records "$J") == "per socket"* ]]; then
	assert_eq "$(grep -c accept <<<"$footer")" 0 footer/no_accept_hook_unused
else
	assert_eq "$(grep -c -F "accepts at $(jqn .run.accept_hook "$J")" <<<"$footer")" 1 \
		footer/accept_hook_used
fi

# ---- the fd part agrees with the JSON ----
f="$c | .fds"
assert_eq "$(jqn "$f | .pid" "$J")" "$cpid" fd/json_has_fd_part
assert_eq "$(html_td "$cpid" fds_now)" "$(jqn "$f | .fds.total" "$J")" table/fds_now
assert_eq "$(($(html_td "$cpid" fds_now) >= HELD + 3))" 1 table/fds_now_holds_held
assert_eq "$(grep -c "<div class=\"fdpart\" id=\"fd-$cpid\">" "$H")" 1 fd/part
assert_eq "$(grep -o "<span data-k=\"fds_now\">[0-9]*</span> of RLIMIT_NOFILE [0-9]*" "$H" |
	sed 's/<[^>]*>//g')" "$(jqn "\"\($f | .fds.total) of RLIMIT_NOFILE \($f |
	.limits.rlimit_nofile_soft)\"" "$J")" fd/fds_vs_limit
# map_equals_json ID JQ NAME: the SVG of ID has the JSON map's rows x
# columns cells, each with the JSON's value.
map_equals_json() {
	local id=$1 m=$2 name=$3 svg=$TMP/$1.svg r k

	sed -n "/<svg class=\"hm\" id=\"$id\"/,/<\/svg>/p" "$H" >"$svg"
	r=$(jqn "$m | .rows | length" "$J")
	k=$(jqn "$m | .cells[0] | length" "$J")
	assert_eq "$((r >= 1 && k >= 2))" 1 "$name/has_rows_and_columns"
	assert_eq "$(grep -o '<rect class="c"' "$svg" | wc -l)" "$((r * k))" \
		"$name/rows_x_cols_cells"
	assert_eq "$(grep -o 'data-rows="[0-9]*" data-cols="[0-9]*"' "$svg")" \
		"data-rows=\"$r\" data-cols=\"$k\"" "$name/dimensions"
	assert_eq "$(grep -o 'data-row="[0-9]*" data-col="[0-9]*" data-value="[0-9]*"' "$svg" |
		sed 's/[^0-9 ]//g' | sort)" \
		"$(jqn "$m | .cells | to_entries[] | .key as \$r | .value | to_entries[] |
			\"\(\$r) \(.key) \(.value)\"" "$J" | sort)" "$name/cells_equal_json"
}
fid=hm-$cpid-fd_type
fm="$f | .heatmaps.fd_type"
map_equals_json "$fid" "$fm" fd_type
map_equals_json "hm-$cpid-fd_age" "$f | .heatmaps.fd_age" fd_age
frows=$(jqn "$fm | .rows | length" "$J")
fcols=$(jqn "$fm | .cells[0] | length" "$J")
# The tcp row at its peak: the held sockets, and the value we hover.
frow=$(jqn "$fm | .rows | index(\"tcp\")" "$J")
assert_eq "$((frow >= 0))" 1 fd_type/has_tcp_row
fcol=$(jqn "$fm | .cells[$frow] | index(max)" "$J")
fwant=$(jqn "$fm | .cells[$frow][$fcol]" "$J")
assert_eq "$((fwant >= HELD))" 1 fd_type/tcp_peak_holds_held
# The leak suspects: the held sockets' site, named as the JSON names it.
assert_eq "$(jqn "$f | .leak_sites | length >= 1" "$J")" true fd/json_has_leak_site
unescape() { sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&#39;/'"'"'/g; s/&amp;/\&/g'; }
assert_eq "$(grep -o "<tr data-rank=\"1\"[^>]*>.*" "$H" | grep -o 'data-k="site">[^<]*' |
	cut -d'>' -f2 | unescape)" "$(jqn "$f | .leak_sites[0].site" "$J")" fd/site_equals_json
assert_eq "$(grep -o "<tr data-rank=\"1\"[^>]*>.*" "$H" | grep -o 'data-k="old">[0-9]*' |
	cut -d'>' -f2)" "$(jqn "$f | .leak_sites[0].old" "$J")" fd/site_old_equals_json

# ---- connection reuse agrees with the JSON ----
# The client opens a connection per request ("churn"): a churn finding for
# its endpoint in the JSON, and the same text in a box at the top.
ep=127.0.0.1:$port
fnd=".findings[] | select(.pid == $cpid and .endpoint == \"$ep\")"
assert_eq "$(jqn "[$fnd] | length" "$J")" 1 reuse/json_finding
assert_eq "$(jqn "$fnd | .kind" "$J")" churn reuse/json_finding_kind
box="<div class=\"finding\" id=\"finding-[0-9]*\" data-kind=\"churn\" data-pid=\"$cpid\" \
data-endpoint=\"$ep\">"
assert_eq "$(grep -c "^$box\$" "$H")" 1 reuse/html_finding_box
assert_eq "$(sed -n "/^$box\$/,/class=\"ft\"/p" "$H" | grep -o 'data-k="text">[^<]*' |
	cut -d'>' -f2 | unescape)" "$(jqn "$fnd | .text" "$J")" reuse/finding_text_equals_json
fline=$(grep -n -m1 '<section id="findings"' "$H" | cut -d: -f1)
sline=$(grep -n -m1 'id="summary"' "$H" | cut -d: -f1)
assert_eq "$((${fline:-999999} < ${sline:-0}))" 1 reuse/findings_above_table
r="$c | .reuse"
# data-k=KEY in the reuse part of pid (figures before the endpoint table).
reuse_fig() {
	sed -n "/<div class=\"reusepart\" id=\"reuse-$cpid\">/,/<h3>Reuse by endpoint/p" "$H" |
		grep -o "data-k=\"$1\">[^<]*" | head -n 1 | cut -d'>' -f2
}
assert_eq "$(reuse_fig connections)" \
	"$(jqn "$r | .connections_opened + .connections_accepted" "$J")" reuse/connections
assert_eq "$(reuse_fig requests)" "$(jqn "$r | .requests" "$J")" reuse/requests
assert_eq "$(($(reuse_fig requests) >= N))" 1 reuse/requests_counted
assert_eq "$(sed -n "/id=\"reuse-$cpid\"/,/Reuse by endpoint/p" "$H" |
	grep -o 'data-v="[-0-9.]*" data-k="reuse_ratio"' | head -n 1 | cut -d'"' -f2)" \
	"$(printf %.6f "$(jqn "$r | .reuse_ratio" "$J")")" reuse/reuse_ratio
# The endpoint's row of the reuse table against the JSON's endpoint.
je="$r | .endpoints[] | select(.endpoint == \"$ep\")"
erow=$(sed -n "/<table class=\"ep reuse\" id=\"reuse-ep-$cpid\">/,/<\/table>/p" "$H" |
	grep -F "<span data-k=\"endpoint\">$ep</span>")
assert_eq "$(grep -c . <<<"$erow")" 1 reuse/endpoint_row
assert_eq "$(grep -c '^<tr class="churn">' <<<"$erow")" 1 reuse/endpoint_row_marked
for k in opened accepted closed requests peak_concurrent lifetime_ms_p50 lifetime_ms_p99; do
	assert_eq "$(grep -o "data-k=\"$k\">[^<]*" <<<"$erow" | cut -d'>' -f2)" \
		"$(jqn "$je | .$k" "$J")" "reuse/endpoint/$k"
done
# The HTML shows one decimal of the books' value, the JSON three: the same
# number when they differ by no more than the two roundings (0.05 + 0.0005).
# Rounding the JSON's 3.650 again to one decimal is no test: it can give
# 3.6 where the HTML rounded the unrounded 3.6504 to 3.7.
same_rounded() {
	awk -v h="$1" -v j="$2" 'BEGIN { d = h - j; if (d < 0) d = -d; exit !(h != "" && d <= 0.0505) }'
}
for k in requests_per_conn mean_concurrent; do
	hv=$(grep -o "data-k=\"$k\">[^<]*" <<<"$erow" | cut -d'>' -f2)
	jv=$(jqn "$je | .$k" "$J")
	if same_rounded "$hv" "$jv"; then
		ok "reuse/endpoint/$k"
	else
		fail "reuse/endpoint/$k" "HTML '$hv' is not the JSON's $jv to one decimal"
	fi
done
lid=hm-$cpid-lifetime
lm="$c | .heatmaps.lifetime"
map_equals_json "$lid" "$lm" lifetime
map_equals_json "hm-$cpid-requests_per_conn" "$c | .heatmaps.requests_per_conn" \
	requests_per_conn
# The lifetime map's busiest cell: the one we hover.
lrow=$(jqn "[$lm | .cells[] | max] | index(max)" "$J")
lcol=$(jqn "$lm | .cells[$lrow] | index(max)" "$J")
lwant=$(jqn "$lm | .cells[$lrow][$lcol]" "$J")
assert_eq "$((lwant >= 1))" 1 lifetime/has_closed_connections

# ---- a run of a set duration: its maps end where it does ----
# -d 2 -i 0.5: four intervals, four columns, the axis ending at 2 s (the
# last readings, a few ms past the deadline, made a fifth column, and the
# axis ran to 2.5).
H2=$TMP/short.html
J2=$TMP/short.json
"$CONNSCOPE" attach -p "$cpid" -d 2 -i 0.5 -j --report "$H2" >"$J2" 2>"$TMP/short.err"
assert_eq "$?" 0 short/exit_status
assert_eq "$(jqn "[.processes[] | select(.pid == $cpid) | .fds.heatmaps.fd_type.cells[] | length] |
	unique" "$J2" | tr -d ' \n')" "[4]" short/json_four_columns
assert_eq "$(jqn '.run.elapsed_s >= 2' "$J2")" true short/traced_two_seconds
assert_eq "$(grep -o 'data-cols="[0-9]*"' "$H2" | sort -u | tr '\n' ' ')" 'data-cols="4" ' \
	short/html_four_columns
assert_eq "$(sed -n '/<g class="xaxis">/,/<\/g>/p' "$H2" | grep -o 'text-anchor="middle">[0-9.]*<' |
	tail -n 1 | grep -o '[0-9.]*')" 2 short/axis_ends_at_2s

# ---- a run ended by Ctrl-C: its maps end where it did ----
# -i 0.5, SIGINT a quarter of an interval past the second row's time: the
# axis ends at that moment, not at the next interval's end (the last,
# partial column is drawn as long as it lasted). The live rows' labels
# (tenths: the schedule's times) tell when the run's clock began.
H3=$TMP/int.html
O3=$TMP/int.out
"$CONNSCOPE" attach -p "$cpid" -i 0.5 --report "$H3" >"$O3" 2>"$TMP/int.err" &
ipid=$!
# The agent's start is given 90 s as cs_attach gives it (a loaded machine):
# its two rows follow within a second of it.
wait_for "[ \$(grep -Ec '^[0-9]{2}:[0-9]{2}\.[0-9] +$cpid ' '$O3') -ge 2 ]" 90 ||
	fail int/rows "$(cat "$TMP/int.err")"
sleep 0.2
# Tenths within the hour, and the moment of the signal in ms.
sent=$(date +%M:%S.%N)
kill -INT "$ipid"
wait "$ipid"
assert_eq "$?" 0 int/exit_status
second=$(grep -Eo "^[0-9]{2}:[0-9]{2}\.[0-9] +$cpid " "$O3" | sed -n 2p | cut -c1-7)
# ms within the hour: the second row is due 1 s after the clock began.
ms_of() { echo $(( (10#${1:0:2} * 60 + 10#${1:3:2}) * 1000 + 10#${1:6:1} * 100 + 10#${1:7:2} )); }
began=$(( $(ms_of "${second}00") - 1000 ))
end_ms=$(( ($(ms_of "${sent:0:9}") - began + 3600000) % 3600000 ))
last=$(sed -n '/<g class="xaxis">/,/<\/g>/p' "$H3" | grep -o 'text-anchor="middle">[0-9.]*<' |
	tail -n 1 | grep -o '[0-9.]*')
last_ms=$(awk -v s="$last" 'BEGIN { printf "%d", s * 1000 + 0.5 }')
# Labels are rounded to tenths (50 ms), the signal is seen in a few ms.
if (( last_ms >= end_ms - 80 && last_ms <= end_ms + 80 )); then
	ok int/axis_ends_at_the_signal
else
	fail int/axis_ends_at_the_signal "axis ends at $last s, the signal came at $end_ms ms"
fi
assert_eq "$(grep -o 'data-cols="[0-9]*"' "$H3" | sort -u | tr '\n' ' ')" \
	"data-cols=\"$(( (end_ms + 499) / 500 ))\" " int/columns_up_to_the_signal

# ---- in a browser ----
CHROME_UDD=
chromium_reap() {
	local p

	[[ -n $CHROME_UDD ]] || return 0
	# Its helpers (zygote, utility processes) carry the profile path: the
	# ones of this run and no other.
	for p in $(pgrep -f -- "--user-data-dir=$CHROME_UDD"); do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$CHROME_UDD"
	CHROME_UDD=
}
on_exit chromium_reap

# chromium NAME OUT ARGS... URL: headless, offline, a fresh profile each
# time, the browser's stdout to OUT (ours carries the results). Checks that
# it left no process behind.
chromium() {
	local name=$1 out=$2 rc left
	shift 2

	CHROME_UDD=$(mktemp -d "$TMP/chromium.XXXXXX") || return 1
	# timeout runs it in a process group of its own and signals the whole
	# group; -k: KILL if TERM is not enough.
	timeout -k 5 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --hide-scrollbars \
		--host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$CHROME_UDD" "$@" \
		>"$out" 2>>"$TMP/chromium.err"
	rc=$?
	# Helpers may still be on their way out when the browser returns.
	wait_for "! pgrep -f -- '--user-data-dir=$CHROME_UDD' >/dev/null" 5
	left=$(pgrep -a -f -- "--user-data-dir=$CHROME_UDD")
	chromium_reap
	assert_eq "$left" "" "browser/$name/no_processes_left"
	assert_eq "$rc" 0 "browser/$name/exit_status"
	return $rc
}

# layout_check HTML NAME: the page at 1280 px wide in the browser, measured
# by a script added to a copy of it: no element of a section reaches past
# the section's right edge (a table in a scrolling box may), the page does
# not scroll sideways, the Processes table needs no scrolling of its own
# there (it did by 13 px for `connscope demo`'s two processes), and the Run
# panel ends within the page. Sets PAGE_H, the page's height.
layout_check() {
	local html=$1 name=$2 copy=$TMP/layout.html m

	sed 's#</body>#<script>(function(){var o=[],w=0;\
document.querySelectorAll("main>section,main>header").forEach(function(s){\
var r=s.getBoundingClientRect();s.querySelectorAll("*").forEach(function(e){\
var b=e.parentElement.closest(".scroll");if(b\&\&s.contains(b))return;\
var x=e.getBoundingClientRect();if(x.width\&\&x.right-r.right>1)o.push((s.id||"?")+":"+e.tagName);});});\
var run=document.getElementById("run").getBoundingClientRect(),d=document.documentElement;\
var t=document.getElementById("summary").querySelector(".scroll");\
var p=document.createElement("pre");p.id="layout";p.textContent="over="+o.slice(0,3).join(",")+\
" sideways="+(d.scrollWidth>window.innerWidth)+" run_bottom="+Math.ceil(run.bottom+window.scrollY)+\
" procs_scroll="+(t\&\&t.scrollWidth>t.clientWidth)+\
" height="+d.scrollHeight;document.body.appendChild(p);})();</script></body>#' "$html" >"$copy"
	chromium "$name" "$TMP/layout.dom" --window-size=1280,2000 --dump-dom "file://$copy"
	m=$(grep -o '<pre id="layout">[^<]*' "$TMP/layout.dom")
	assert_eq "$(grep -o 'over=[^ ]*' <<<"$m")" "over=" "$name/no_section_overflows_1280"
	assert_eq "$(grep -o 'sideways=[a-z]*' <<<"$m")" "sideways=false" "$name/no_sideways_scroll"
	assert_eq "$(grep -o 'procs_scroll=[a-z]*' <<<"$m")" "procs_scroll=false" "$name/processes_fit_1280"
	PAGE_H=$(grep -o 'height=[0-9]*' <<<"$m" | cut -d= -f2)
	RUN_BOTTOM=$(grep -o 'run_bottom=[0-9]*' <<<"$m" | cut -d= -f2)
}

# png_height FILE: the height in the PNG's IHDR.
png_height() {
	od -An -tu1 -j20 -N4 "$1" 2>/dev/null | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }'
}

if [[ ! -x $CHROMIUM ]]; then
	skip browser "no $CHROMIUM (Debian package chromium)"
else
	url="file://$H#hover=$id:0:$col"
	chromium dump_dom "$TMP/dom.html" --dump-dom "$url"
	readout=$(grep -o "<div id=\"readout-$id\"[^>]*>.*" "$TMP/dom.html" |
		sed 's,</div>.*,,')
	assert_eq "$(grep -o 'data-row="[0-9]*" data-col="[0-9]*" data-value="[0-9]*"' \
		<<<"$readout")" "data-row=\"0\" data-col=\"$col\" data-value=\"$want\"" \
		browser/readout_cell
	# What a person reads: label, time range, value, unit.
	text=$(sed 's/<[^>]*>/ /g; s/  */ /g; s/^ //; s/ $//' <<<"$readout")
	from=$(jqn "$col * ($hm | .bucket_seconds)" "$J")
	to=$(jqn "($col + 1) * ($hm | .bucket_seconds)" "$J")
	assert_eq "$text" "$label $from–$to s $want sockets" browser/readout_text
	assert_eq "$(grep -c "class=\"c sel\" data-row=\"0\" data-col=\"$col\"" \
		"$TMP/dom.html")" 1 browser/cell_highlighted
	# The page as drawn: same rect count as in the file (nothing lost or
	# added by the script).
	assert_eq "$(sed -n "/<svg class=\"hm\" id=\"$id\"/,/<\/svg>/p" "$TMP/dom.html" |
		grep -o '<rect class="c[ "]' | wc -l)" "$((rows * cols))" browser/cells_drawn

	# The fd map: drawn cell for cell, and the same hover code on it.
	chromium dump_dom_fd "$TMP/dom_fd.html" --dump-dom "file://$H#hover=$fid:$frow:$fcol"
	assert_eq "$(sed -n "/<svg class=\"hm\" id=\"$fid\"/,/<\/svg>/p" "$TMP/dom_fd.html" |
		grep -o '<rect class="c[ "]' | wc -l)" "$((frows * fcols))" browser/fd_cells_drawn
	readout=$(grep -o "<div id=\"readout-$fid\"[^>]*>.*" "$TMP/dom_fd.html" |
		sed 's,</div>.*,,')
	assert_eq "$(grep -o 'data-row="[0-9]*" data-col="[0-9]*" data-value="[0-9]*"' \
		<<<"$readout")" "data-row=\"$frow\" data-col=\"$fcol\" data-value=\"$fwant\"" \
		browser/fd_readout_cell
	text=$(sed 's/<[^>]*>/ /g; s/  */ /g; s/^ //; s/ $//' <<<"$readout")
	from=$(jqn "$fcol * ($fm | .bucket_seconds)" "$J")
	to=$(jqn "($fcol + 1) * ($fm | .bucket_seconds)" "$J")
	assert_eq "$text" "tcp $from–$to s $fwant fds" browser/fd_readout_text
	assert_eq "$(grep -c "class=\"c sel\" data-row=\"$frow\" data-col=\"$fcol\"" \
		"$TMP/dom_fd.html")" 1 browser/fd_cell_highlighted

	# The lifetime map: the same hover code, on a map of counts.
	lurl="file://$H#hover=$lid:$lrow:$lcol"
	chromium dump_dom_lifetime "$TMP/dom_lt.html" --dump-dom "$lurl"
	readout=$(grep -o "<div id=\"readout-$lid\"[^>]*>.*" "$TMP/dom_lt.html" |
		sed 's,</div>.*,,')
	assert_eq "$(grep -o 'data-row="[0-9]*" data-col="[0-9]*" data-value="[0-9]*"' \
		<<<"$readout")" "data-row=\"$lrow\" data-col=\"$lcol\" data-value=\"$lwant\"" \
		browser/lifetime_readout_cell
	text=$(sed 's/<[^>]*>/ /g; s/  */ /g; s/^ //; s/ $//' <<<"$readout")
	from=$(jqn "$lcol * ($lm | .bucket_seconds)" "$J")
	to=$(jqn "($lcol + 1) * ($lm | .bucket_seconds)" "$J")
	assert_eq "$text" "$(jqn "$lm | .rows[$lrow]" "$J") $from–$to s $lwant conns" \
		browser/lifetime_readout_text
	assert_eq "$(grep -c "class=\"c sel\" data-row=\"$lrow\" data-col=\"$lcol\"" \
		"$TMP/dom_lt.html")" 1 browser/lifetime_cell_highlighted
	# The finding box is drawn: the browser kept it, text and all.
	assert_eq "$(grep -c "^$box\$" "$TMP/dom_lt.html")" 1 browser/finding_box

	# The page laid out at 1280 px: no section wider than the page, and
	# the page's height, so that the screenshot holds all of it (at a
	# fixed 4600 px the Run panel at the bottom was cut off).
	layout_check "$H" layout
	mkdir -p "$ARTIFACT_DIR"
	rm -f "$ARTIFACT_DIR/report.png"
	chromium screenshot /dev/null --screenshot="$ARTIFACT_DIR/report.png" \
		--window-size=1280,"${PAGE_H:-4600}" "$lurl"
	assert_eq "$(head -c 8 "$ARTIFACT_DIR/report.png" 2>/dev/null | od -An -tx1 |
		tr -d ' \n')" 89504e470d0a1a0a browser/screenshot_png
	h=$(png_height "$ARTIFACT_DIR/report.png")
	assert_eq "$((${h:-0} >= ${RUN_BOTTOM:-999999}))" 1 browser/screenshot_holds_run_panel
	cp "$H" "$ARTIFACT_DIR/report.html" 2>/dev/null
	cp "$J" "$ARTIFACT_DIR/report.json" 2>/dev/null
	echo "artifacts: $ARTIFACT_DIR/report.png $ARTIFACT_DIR/report.html" \
		"$ARTIFACT_DIR/report.json" >&2
fi
fx_stop cli
fx_stop srv
