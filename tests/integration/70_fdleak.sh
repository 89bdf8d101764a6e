#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# fdleak on a process that leaks K sockets from one known function among
# many fds it opens and closes: the leaking function and line ranked first,
# built with and without frame pointers; fd counts equal /proc and lsof;
# dup2, close_range, SCM_RIGHTS and exec leave no phantom fds; a process
# near its RLIMIT_NOFILE is warned about.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
K=7

# fdleak in the background, like cs_attach: returns once it traces.
fl_start() {
	local out=$1 err=$2
	shift 2
	spawn_bg "$CONNSCOPE" fdleak "$@" >"$out" 2>"$err"
	FL_PID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$err' || ! kill -0 $FL_PID 2>/dev/null" 30
	grep -q '^connscope: tracing' "$err"
}

leak_case() {
	local name=$1 bin=$2 pid line
	fix_start "$name" "$FIXTURES/$bin"
	fix_expect "$name" "ready *" 10 || { fail "$name/start" "no ready line"; return; }
	read -r _ pid line <<<"$FIX_LINE"
	# --leak-age 0: every fd made during the run and still open at its end
	# is a suspect, so no waiting for fds to age.
	fl_start "$TMP/$name.json" "$TMP/$name.err" -p "$pid" -j -i 0.3 --leak-age 0 ||
		{ fail "$name/fdleak" "$(cat "$TMP/$name.err")"; return; }
	assert_eq "$(fx_cmd "$name" "churn 50")" "churned 50" "$name/churned"
	assert_eq "$(fx_cmd "$name" "leak $K")" "leaked $K" "$name/leaked"
	assert_eq "$(fx_cmd "$name" "churn 50")" "churned 50" "$name/churned_again"
	local d2; d2=$(fx_cmd "$name" dup2)
	assert_eq "${d2%% *}" dup2 "$name/dup2"
	assert_eq "$(fx_cmd "$name" "closerange 5")" "closerange 5" "$name/closerange"
	local rcv; rcv=$(fx_cmd "$name" scm)
	assert_eq "${rcv%% *}" received "$name/scm_rights"
	local nproc; nproc=$(ls /proc/"$pid"/fd | wc -l)
	kill -INT "$FL_PID"; wait "$FL_PID"
	assert_eq "$?" 0 "$name/exit_status"
	local J=$TMP/$name.json P=".processes[0]"
	assert_eq "$(jqn "$P | .leak_sites[0] | [.func, .line, .old, .made_by] | @tsv" "$J")" \
		"$(printf 'leak_sockets\t%s\t%s\tsocket' "$line" "$K")" "$name/leak_site_first"
	assert_eq "$(jqn "$P | .leak_sites[0].file | endswith(\"leakfix.c\")" "$J")" true "$name/file"
	assert_eq "$(jqn "[$P | .leak_sites[] | select(.func == \"churn_fds\")] | length" "$J")" 0 "$name/closed_not_reported"
	assert_eq "$(jqn "$P | .fds.total" "$J")" "$nproc" "$name/total_eq_proc"
	assert_eq "$(jqn "$P | .books.open_in_books == .fds.total" "$J")" true "$name/books_eq_proc"
	assert_eq "$(jqn "$P | .books.made_unseen" "$J")" 1 "$name/scm_rights_counted_unseen"
	assert_eq "$(jqn "$P | .books.closed_unseen" "$J")" 0 "$name/no_phantoms"
	assert_eq "$(jqn "$P | .fds.by_type.tcp" "$J")" "$K" "$name/tcp_fds"
	assert_eq "$(jqn "$P | .events.created_by.socket >= 100 + $K" "$J")" true "$name/socket_events"
	assert_eq "$(jqn '.agent.events_lost' "$J")" 0 "$name/no_events_lost"
	assert_eq "$(jqn "$P | .heatmaps.fd_type.rows | index([\"tcp\"]) != null" "$J")" true "$name/type_heatmap"
	echo "$name: $(jqn "$P | .leak_sites[0] | .stack_method" "$J")" >&2
	fix_send "$name" exit
}

leak_case nofp leakfix_nofp
leak_case fp leakfix_fp

# exec: the O_CLOEXEC fds are gone without a close; the books follow /proc.
fix_start ex "$FIXTURES/leakfix_nofp"
fix_expect ex "ready *" 10 || fail ex/start "no ready"
read -r _ expid _ <<<"$FIX_LINE"
fl_start "$TMP/ex.json" "$TMP/ex.err" -p "$expid" -j -i 0.3 --leak-age 0 || fail ex/fdleak "$(cat "$TMP/ex.err")"
assert_eq "$(fx_cmd ex "cloexec 4")" "cloexec 4" ex/cloexec
assert_eq "$(fx_cmd ex "leak 3")" "leaked 3" ex/leaked
fix_send ex exec
fix_expect ex "ready *" 10 || fail ex/re_exec "no ready after exec"
nproc=$(ls /proc/"$expid"/fd | wc -l)
kill -INT "$FL_PID"; wait "$FL_PID"
assert_eq "$(jqn '.processes[0].books.closed_unseen' "$TMP/ex.json")" 4 ex/cloexec_fds_counted
assert_eq "$(jqn '.processes[0].fds.total' "$TMP/ex.json")" "$nproc" ex/total_eq_proc
assert_eq "$(jqn '.processes[0].books.open_in_books == .processes[0].fds.total' "$TMP/ex.json")" true ex/books_eq_proc
assert_eq "$(jqn '.processes[0].fds.by_type.tcp' "$TMP/ex.json")" 3 ex/leaked_survive_exec
# Sites made before the exec are named with the image they were made in.
assert_eq "$(jqn '.processes[0].leak_sites[] | select(.made_by == "socket") | .func' "$TMP/ex.json")" leak_sockets ex/site_named_across_exec
fix_send ex exit

# Counts by type equal /proc and lsof for a process with many kinds of fds.
fix_start mix "$FIXTURES/fdfix" -s 3 -u 2 -x 2 -p 3 -e 4 -E 2 -f 5
fix_expect mix "ready *" 10 || fail mix/start "no ready"
mixpid=${FIX_LINE#ready }
"$CONNSCOPE" fdleak -p "$mixpid" -j -d 0.3 -i 0.1 >"$TMP/mix.json" 2>"$TMP/mix.err"
assert_eq "$?" 0 mix/exit_status
lsof -n -P -l -w -p "$mixpid" -a -d 0-999999 -F tn >"$TMP/lsof.txt" 2>/dev/null
lsof_count() { awk -v t="$1" '/^t/ {type = substr($0, 2)} /^n/ {if (type == t) n++} END {print n + 0}' "$TMP/lsof.txt"; }
lsof_name() { awk -v p="$1" '/^t/ {type = substr($0, 2)} /^n/ {if (index($0, p) == 2) n++} END {print n + 0}' "$TMP/lsof.txt"; }
assert_eq "$(jqn '.processes[0].fds.total' "$TMP/mix.json")" "$(ls /proc/"$mixpid"/fd | wc -l)" mix/total_eq_proc
assert_eq "$(jqn '.processes[0].fds.total' "$TMP/mix.json")" "$(grep -c '^f' <(lsof -n -P -l -w -p "$mixpid" -a -d 0-999999 -F f))" mix/total_eq_lsof
assert_eq "$(jqn '.processes[0].fds.by_type.eventfd' "$TMP/mix.json")" "$(lsof_name '[eventfd')" mix/eventfd_eq_lsof
assert_eq "$(jqn '.processes[0].fds.by_type.epoll' "$TMP/mix.json")" "$(lsof_name '[eventpoll')" mix/epoll_eq_lsof
assert_eq "$(jqn '.processes[0].fds.by_type.unix' "$TMP/mix.json")" "$(lsof_count unix)" mix/unix_eq_lsof
# lsof: pipes and FIFOs are both TYPE FIFO (the fixture's stdio are FIFOs)
assert_eq "$(jqn '.processes[0].fds.by_type.pipe' "$TMP/mix.json")" "$(lsof_count FIFO)" mix/pipe_eq_lsof
assert_eq "$(jqn '.processes[0].fds.by_type.eventfd' "$TMP/mix.json")" 4 mix/eventfd_exact
assert_eq "$(jqn '.processes[0].fds.by_type.epoll' "$TMP/mix.json")" 2 mix/epoll_exact
fix_eof mix 2>/dev/null

# Near RLIMIT_NOFILE: a low soft limit set for the test process only.
fix_start lim bash -c 'ulimit -Sn 64 && exec "$1"' _ "$FIXTURES/leakfix_nofp"
fix_expect lim "ready *" 10 || fail lim/start "no ready"
read -r _ limpid _ <<<"$FIX_LINE"
assert_eq "$(fx_cmd lim "leak 55")" "leaked 55" lim/leaked
"$CONNSCOPE" fdleak -p "$limpid" -j -d 0.3 -i 0.1 >"$TMP/lim.json" 2>"$TMP/lim.err"
assert_eq "$(jqn '.processes[0].limits.rlimit_nofile_soft' "$TMP/lim.json")" 64 lim/soft_limit_read
assert_eq "$(grep -cE "^WARNING: pid $limpid \(leakfix_nofp\) holds [0-9]+ fds, (8[0-9]|9[0-9]|100)% of its RLIMIT_NOFILE 64" "$TMP/lim.err")" 1 lim/warned
"$CONNSCOPE" fdleak -p "$limpid" -j -d 0.3 -i 0.1 --warn-pct 99 >/dev/null 2>"$TMP/lim2.err"
assert_eq "$(grep -c WARNING "$TMP/lim2.err")" 0 lim/not_below_threshold
fix_send lim exit

# Bad input.
"$CONNSCOPE" fdleak -p 1 --leak-age abc >/dev/null 2>"$TMP/bad.err"
assert_eq "$?" 2 bad/leak_age_status
assert_eq "$(grep -c "leak-age 'abc': expected seconds" "$TMP/bad.err")" 1 bad/leak_age_message

# The process exits during the window: exit status 3, a message, and a
# complete report of what it held at its last listing (no crash, no guess).
fix_start gone "$FIXTURES/leakfix_nofp"
fix_expect gone "ready *" 10 || fail gone/start "no ready"
read -r _ gonepid _ <<<"$FIX_LINE"
fl_start "$TMP/gone.json" "$TMP/gone.err" -p "$gonepid" -j -i 0.2 --leak-age 0 || fail gone/fdleak "$(cat "$TMP/gone.err")"
assert_eq "$(fx_cmd gone "leak 3")" "leaked 3" gone/leaked
# one listing after the leak, seen as the live growth (the event to wait for)
wait_for "[ \$(ls /proc/$gonepid/fd 2>/dev/null | wc -l) -ge 3 ]" 5
fix_eof gone  # EOF on stdin: leakfix exits
wait "$FL_PID"
assert_eq "$?" 3 gone/exit_status
assert_eq "$(grep -c "process $gonepid (leakfix_nofp) exited after" "$TMP/gone.err")" 1 gone/message
assert_eq "$(jqn '.processes[0].exited' "$TMP/gone.json")" true gone/exited_in_report
assert_eq "$(jqn '.run.end_reason' "$TMP/gone.json")" "target exited" gone/end_reason
