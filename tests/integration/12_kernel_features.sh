#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A kernel without a hook: attach --btf FILE with this kernel's BTF minus
# the sock_send_length / sock_recv_length tracepoints (as Debian 12's 6.1,
# they came in 6.3) still loads, counts connections exactly, and every
# output names the figure that is off and what it needs; with the
# kernel's own BTF nothing is off here. tests/kernels/ boots real older
# kernels for the same.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
POOLFIX=$FIXTURES/poolfix
W=3 R=30
# The fixtures in a namespace of the test's own (fx_twns): each case waits
# for its W TIME_WAIT, which resets could end early in ours.
fx_twns kfeat

HIDDEN=$TMP/vmlinux-no-sock-length.btf
"$FIXTURES/btfhide" /sys/kernel/btf/vmlinux "$HIDDEN" sock_send_length sock_recv_length ||
	{ fail btf_file "btfhide failed"; exit 0; }
# bpftool, not our code, says what the file holds.
assert_eq "$(bpftool btf dump file "$HIDDEN" | grep -c "'btf_trace_sock_send_length'")" 0 btf_file/send_length_gone
assert_eq "$(bpftool btf dump file "$HIDDEN" | grep -c "'btf_trace_sock_recv_length'")" 0 btf_file/recv_length_gone
assert_eq "$(bpftool btf dump file "$HIDDEN" | grep -c "'btf_trace_inet_sock_set_state'")" 1 btf_file/set_state_kept

# run NAME [ATTACH_ARGS...]: W pooled connections carry R requests
# (poolfix: "GET\n" one way, "OK\n" back), both sides traced.
run_case() {
	local name=$1 r c
	shift
	fix_start "${name}_srv" "${FX_WRAP[@]}" "$POOLFIX" server && fix_expect "${name}_srv" 'listening *' 10 ||
		{ fail "$name/start" server; return 1; }
	read -r _ port SPID <<<"$FIX_LINE"
	fix_start "${name}_cli" "${FX_WRAP[@]}" "$POOLFIX" client -p "$port" -w $W -n $R -P $W &&
		fix_expect "${name}_cli" 'ready *' 10 || { fail "$name/start" client; return 1; }
	CPID=${FIX_LINE#ready }
	cs_attach "$TMP/$name.json" "$TMP/$name.err" -p "$CPID,$SPID" -j -i 0.5 \
		--report "$TMP/$name.html" --prom "$TMP/$name.prom" "$@" ||
		{ fail "$name/attach" "$(cat "$TMP/$name.err")"; return 1; }
	ok "$name/attach_loaded"
	fix_cmd "${name}_cli" go 'done *' 60 || { fail "$name/client" "$FIX_LINE"; cs_stop; return 1; }
	read -r _ _ r _ c _ <<<"$FIX_LINE"
	assert_eq "$r $c" "$R $W" "$name/fixture_requests_connections"
	fix_cmd "${name}_cli" close 'closed *' 10
	wait_for "fix_cmd ${name}_srv stats 'stats *' 5 && [[ \$FIX_LINE == 'stats accepted $W requests $R open 0' ]]" 20 ||
		fail "$name/server_closed_all" "$FIX_LINE"
	wait_for "[ \$(tw_on_port $port) -ge $W ] && closes_done $port" 20 ||
		fail "$name/kernel_closed" "kernel: $(tw_on_port "$port") TIME_WAIT"
	cs_stop
	assert_eq "$?" 0 "$name/exit_status"
	local J=$TMP/$name.json c=".processes[] | select(.pid == $CPID)" s=".processes[] | select(.pid == $SPID)"
	assert_eq "$(jqn "$c | .totals.connections_opened" "$J")" $W "$name/client_opened"
	assert_eq "$(jqn "$c | .totals.time_wait_entered" "$J")" $W "$name/client_time_wait_entered"
	assert_eq "$(jqn "$s | .totals.connections_accepted" "$J")" $W "$name/server_accepted"
	assert_eq "$(jqn "$s | .totals.connections_closed" "$J")" $W "$name/server_closed"
	assert_eq "$(jqn .agent.books_mismatch_last "$J")" 0 "$name/books_agree"
	fix_send "${name}_cli" exit; fix_send "${name}_srv" exit
}

NEEDS='tracepoints sock:sock_send_length and sock:sock_recv_length (Linux 6.3)'
if run_case hidden --btf "$HIDDEN"; then
	J=$TMP/hidden.json
	assert_eq "$(jqn '[.run.unavailable[].figure] | join(",")' "$J")" connection_io hidden/json_names_figure
	assert_eq "$(jqn '.run.unavailable[0].needs' "$J")" "$NEEDS" hidden/json_names_need
	# The figure is off, not wrong: no bytes, no requests counted.
	assert_eq "$(jqn ".processes[] | select(.pid == $CPID) | .reuse | [.requests, .bytes_sent] | @tsv" "$J")" \
		"$(printf '0\t0')" hidden/no_io_counted
	assert_eq "$(grep -c 'data-figure="connection_io"' "$TMP/hidden.html")" 1 hidden/html_names_figure
	# A short token as the label value; the prose is in the JSON and text.
	assert_eq "$(grep -c '^connscope_figure_available{figure="connection_io",needs="linux-6.3"} 0$' "$TMP/hidden.prom")" 1 hidden/prom_figure_off
	assert_eq "$(grep -c '^connscope_figure_available{.*} 1$' "$TMP/hidden.prom")" 8 hidden/prom_other_figures_on
	assert_eq "$(grep -c '^connscope_program_attached{program="handle_send_btf"} 0$' "$TMP/hidden.prom")" 1 hidden/send_program_not_loaded
	# The text report says it near the top: after the run's header (its
	# hooks: state, accept since 130b493, TIME_WAIT, records) and the
	# one finding, line 13 here.
	"$CONNSCOPE" attach --btf "$HIDDEN" -p $$ -d 0.2 -H >"$TMP/hidden.txt" 2>"$TMP/hidden_txt.err"
	assert_eq "$(head -n 14 "$TMP/hidden.txt" | grep -c '^unavailable on this kernel: connection_io$')" 1 hidden/text_names_figure
	assert_eq "$(grep -A4 '^unavailable on this kernel:' "$TMP/hidden.txt" | tr -s ' \n' '  ' | grep -c "needs: $NEEDS")" 1 hidden/text_says_need
	assert_eq "$(awk 'length > 80' "$TMP/hidden.txt" | wc -l)" 0 hidden/text_fits_80_columns
fi

if run_case own; then
	J=$TMP/own.json
	assert_eq "$(jqn '.run.unavailable | length' "$J")" 0 own/nothing_unavailable
	# 4 bytes each way per request: the figure is on and exact.
	assert_eq "$(jqn ".processes[] | select(.pid == $CPID) | .reuse | [.requests, .bytes_sent, .bytes_received] | @tsv" "$J")" \
		"$(printf '%s\t%s\t%s' $R $((R * 4)) $((R * 3)))" own/io_counted
	assert_eq "$(grep -c 'data-figure=' "$TMP/own.html")" 0 own/html_names_nothing
	assert_eq "$(grep -c '^connscope_figure_available{.*} 1$' "$TMP/own.prom")" 9 own/prom_all_figures_on
fi
