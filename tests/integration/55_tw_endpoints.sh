#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# TIME_WAIT per endpoint (remote and local listening port), top-N with an
# "other" row, the JSON heatmaps, and the port-exhaustion warning with a
# narrowed ip_local_port_range in a network namespace of our own.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)

# The fixtures in a namespace of the test's own (fx_twns): the live
# TIME_WAIT per endpoint and the heatmap's peak count them, and resets can
# end them early in ours.
fx_twns twep

# Two destinations for one client: 6 and 4 TIME_WAIT.
pa=$(fx_port); pb=$(fx_port)
fx_start sa server -p "$pa" && fx_start sb server -p "$pb"
fx_start ca client -p "$pa" && fx_start cb client -p "$pb"
cs_attach "$TMP/ep.json" "$TMP/ep.err" -p "$FX_PID_ca,$FX_PID_cb" -j -i 0.3 ||
	fail attach "$(cat "$TMP/ep.err")"
assert_eq "$(fx_cmd ca "churn 6")" "churned 6" churn_a
assert_eq "$(fx_cmd cb "churn 4")" "churned 4" churn_b
wait_for "[ \$(tw_on_port $pa) -ge 6 ] && [ \$(tw_on_port $pb) -ge 4 ] && closes_done $pa && closes_done $pb" 20 ||
	fail kernel_closed "kernel: $(tw_on_port "$pa") and $(tw_on_port "$pb") TIME_WAIT"
# (the final reconcile at stop samples the last heatmap column)
cs_stop
A=".processes[] | select(.pid == $FX_PID_ca)"
B=".processes[] | select(.pid == $FX_PID_cb)"
assert_eq "$(jqn "$A | .time_wait_endpoints[0] | [.endpoint, .side, .entered, .live] | @tsv" "$TMP/ep.json")" \
	"$(printf '127.0.0.1:%s\tremote\t6\t6' "$pa")" endpoint_a
assert_eq "$(jqn "$B | .time_wait_endpoints[0] | [.endpoint, .entered, .live] | @tsv" "$TMP/ep.json")" \
	"$(printf '127.0.0.1:%s\t4\t4' "$pb")" endpoint_b
assert_eq "$(jqn "$A | .heatmaps.time_wait.rows | join(\",\")" "$TMP/ep.json")" "127.0.0.1:$pa" heatmap_rows
assert_eq "$(jqn "$A | .heatmaps.time_wait.cells[0] | max" "$TMP/ep.json")" 6 heatmap_peak_cell
assert_eq "$(jqn "$A | .heatmaps.time_wait.bucket_seconds" "$TMP/ep.json")" 0.3 heatmap_bucket
# The columns cover the run: the last interval ends in the last column
# (t is printed to the millisecond).
assert_eq "$(jqn "$A | (.heatmaps.time_wait.cells[0] | length) as \$n | .heatmaps.time_wait.bucket_seconds as \$b | (.intervals[-1].t) as \$t | (\$n * \$b >= \$t - 0.001) and ((\$n - 1) * \$b < \$t + 0.001)" "$TMP/ep.json")" true heatmap_columns_cover_the_run
assert_eq "$(jqn "$A | .heatmaps.orphan.rows | join(\",\")" "$TMP/ep.json")" "fin_wait1,fin_wait2,closing,last_ack" orphan_heatmap_rows
assert_eq "$(jqn "$A | .totals.closed_by_this_side" "$TMP/ep.json")" 6 closed_by_this_side
assert_eq "$(tw_unbalanced "$TMP/ep.json")" "" tw_books_balance
fx_stop ca; fx_stop cb

# The text report: endpoint table and heatmap, ASCII when not a terminal.
# (top-N and the "other" row are covered by the unit tests)
fx_start cc client -p "$pa"
cs_attach "$TMP/top.txt" "$TMP/top.err" -p "$FX_PID_cc" -i 0.3 ||
	fail top_attach "$(cat "$TMP/top.err")"
assert_eq "$(fx_cmd cc "churn 3")" "churned 3" churn_text
cs_stop
fx_stop cc
assert_eq "$(grep -cE "^    127\.0\.0\.1:$pa +3 +[0-9]+ +[0-9]+$" "$TMP/top.txt")" 1 text_endpoint_row
assert_eq "$(grep -c 'TIME_WAIT sockets by endpoint' "$TMP/top.txt")" 1 text_heatmap_title
assert_eq "$(awk 'length > 80' "$TMP/top.txt" | wc -l)" 0 text_fits_80
assert_eq "$(LC_ALL=C grep -c $'\033' "$TMP/top.txt")" 0 no_color_when_not_a_tty

# The server closes first: TIME_WAIT on the server, by its listening port.
ps_=$(fx_port)
fx_start ss server -p "$ps_" --close-first && fx_start cs client -p "$ps_"
cs_attach "$TMP/srv.json" "$TMP/srv.err" -p "$FX_PID_ss" -j -i 0.3 || fail srv_attach "$(cat "$TMP/srv.err")"
assert_eq "$(fx_cmd cs "churn-passive 5")" "churned 5" churn_passive
wait_for "[ \$(tw_on_port $ps_) -ge 5 ] && closes_done $ps_" 20 ||
	fail server/kernel_closed "kernel: $(tw_on_port "$ps_") TIME_WAIT"
cs_stop
S=".processes[] | select(.pid == $FX_PID_ss)"
assert_eq "$(jqn "$S | .time_wait_endpoints[0] | [.endpoint, .side, .entered, .live] | @tsv" "$TMP/srv.json")" \
	"$(printf 'listen 127.0.0.1:%s\tlisten\t5\t5' "$ps_")" server_endpoint_is_listen_port
assert_eq "$(jqn "$S | .totals.closed_by_this_side" "$TMP/srv.json")" 5 server_closed_first
assert_eq "$(tw_unbalanced "$TMP/srv.json")" "" server/tw_books_balance
fx_stop cs; fx_stop ss

# Port exhaustion: 45 TIME_WAIT to one destination out of 50 ephemeral
# ports, live (fx_twns) in a namespace of the case's own.
exhaust_case() {
	local name=$1 range=$2 want=$3 ns
	fx_twns "ports$name"
	ns=$NS
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="$range"
	CS_WRAP=(ip netns exec "$ns")
	fx_start "s_$name" server -p 8080 && fx_start "c_$name" client -p 8080
	local cpid_var=FX_PID_c_$name
	cs_attach "$TMP/$name.json" "$TMP/$name.err" -p "${!cpid_var}" -j -i 0.3 ||
		fail "$name/attach" "$(cat "$TMP/$name.err")"
	assert_eq "$(fx_cmd "c_$name" "churn 45")" "churned 45" "$name/churned"
	wait_for "[ \$(tw_on_port 8080) -ge 45 ] && closes_done 8080" 20 ||
		fail "$name/kernel_closed" "kernel: $(tw_on_port 8080) TIME_WAIT"
	cs_stop
	assert_eq "$(jqn '.limits.port_exhaustion_warning' "$TMP/$name.json")" "$want" "$name/warning_in_json"
	if [ "$want" = true ]; then
		# Wrapped at 80 columns: read with its lines run together.
		assert_eq "$(tr -s '\n ' '  ' <"$TMP/$name.err" | grep -o 'WARNING: port exhaustion: 127.0.0.1 -> 127.0.0.1:8080 used 4[5-9] of 50 ephemeral ports' | wc -l)" 1 "$name/warning_said"
		assert_eq "$(awk 'length > 80' "$TMP/$name.err")" "" "$name/warning_fits_80_columns"
		assert_eq "$(jqn '.limits.ephemeral_ports' "$TMP/$name.json")" 50 "$name/range_read_from_netns"
	else
		assert_eq "$(grep -c 'WARNING: port exhaustion' "$TMP/$name.err")" 0 "$name/no_warning"
	fi
	FX_WRAP=(); CS_WRAP=()
	fx_stop "c_$name"; fx_stop "s_$name"
}
exhaust_case narrow "40000 40049" true
exhaust_case wide "32768 60999" false
