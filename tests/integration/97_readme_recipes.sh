#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The README's recipes run as written. Every `$ connscope ...` and
# `$ curl ...` line of its console blocks is taken from README.md itself
# and run, in a network namespace of the test's own, against fixtures on
# loopback: `pgrep` is a shell function there that answers with the
# fixtures' pids (nginx: the pool fixture's server and client; leakfix_nofp:
# the leak fixture), so the command runs byte for byte as a reader would
# paste it. Each output's shape is checked (the lines the README shows,
# with the fixtures' pids and names), never timings.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

README=$REPO_ROOT/README.md
for f in poolfix leakfix_nofp; do
	if [[ ! -x $FIXTURES/$f ]]; then
		fail "${f}_built" "$FIXTURES/$f missing (make .output/fixtures/$f)"
		exit 1
	fi
done
TMP=$(lib_tmpdir)
fx_netns readme

# Each recipe is found in the first screenful (40 lines): its heading's
# GitHub anchor is linked there.
while read -r h; do
	a=$(sed -E 's/^## //; s/[^A-Za-z0-9 -]//g; s/ /-/g' <<<"$h" | tr 'A-Z' 'a-z')
	assert_eq "$(head -n 40 "$README" | grep -c "](#$a)")" 1 "first_screen/$a"
done < <(grep -E '^## [0-9]+\. ' "$README")
# The recipes' command lines, in README order: "$ " at the start of a line
# inside a ```console block.
mapfile -t CMDS < <(awk '/^```console$/ {c = 1; next} /^```/ {c = 0} c && /^\$ / {print substr($0, 3)}' "$README")
# recipe WORD: the one command line whose second word (or first, for
# curl) is WORD; fails when the README has none or several.
recipe() {
	local c hits=() w
	for c in "${CMDS[@]}"; do
		read -r -a w <<<"$c"
		if [[ ${w[0]} == connscope && ${w[1]} == "$1" ]] || [[ ${w[0]} == "$1" ]]; then
			hits+=("$c")
		fi
	done
	if ((${#hits[@]} != 1)); then
		fail "recipe/$1" "README has ${#hits[@]} '\$ ... $1' lines in console blocks, want 1"
		return 1
	fi
	RECIPE=${hits[0]}
}
for w in summary attach doctor diff exporter curl fdleak run; do
	recipe "$w" >/dev/null || fail "recipe/$w" "not in README.md"
done
assert_eq "${#CMDS[@]}" 8 recipes_in_readme

# run CMDLINE: the line as a reader pastes it, in the namespace, in $TMP,
# `connscope` being the built binary and pgrep answering with fixtures.
PRELUDE='connscope() { "$CONNSCOPE" "$@"; }
pgrep() { local v=PIDS_${*: -1}; echo "${!v}"; }'
run_recipe() {
	(cd "$TMP" && CONNSCOPE=$CONNSCOPE PIDS_nginx=${PIDS_nginx:-} \
		PIDS_leakfix_nofp=${PIDS_leakfix_nofp:-} PATH=${SHIM_PATH:-$PATH} \
		ip netns exec "$NS" bash -c "$PRELUDE"$'\n'"$1")
}

# A workload: the pool fixture's server, and a client of 8 workers whose
# pool keeps POOL idle connections (2: it churns; 8: it does not).
fix_start srv ip netns exec "$NS" "$FIXTURES/poolfix" server && fix_expect srv "listening *" 10 ||
	{ fail start server; exit 1; }
read -r _ PORT SPID <<<"$FIX_LINE"
client() {
	fix_start "$1" ip netns exec "$NS" "$FIXTURES/poolfix" client -p "$PORT" -w 8 -n 800 -P "$2" -b &&
		fix_expect "$1" "ready *" 10 || { fail "$1/start" client; return 1; }
	CPID=${FIX_LINE#ready }
	PIDS_nginx=$SPID,$CPID
}
# bg_recipe NAME CMDLINE: run it in the background, stdout NAME.out,
# stderr NAME.err; returns once it said it is tracing (or ended).
bg_recipe() {
	spawn_bg run_recipe "$2" >"$TMP/$1.out" 2>"$TMP/$1.err"
	RPID=$BG_PID
	wait_for "grep -q '^connscope: tracing' '$TMP/$1.err' || ! kill -0 $RPID 2>/dev/null" 30
}
# go NAME: the client's requests, while a recipe traces.
go() {
	fix_cmd "$1" go '@(done|error) *' 120 || fail "$1/client" "$FIX_LINE"
}

# ---- 1. summary ----
client c0 8 || exit 0
recipe summary && run_recipe "$RECIPE" >"$TMP/summary.out" 2>"$TMP/summary.err"
assert_eq "$?" 0 summary/exit_status
O=$TMP/summary.out
assert_eq "$(head -1 "$O" | grep -c '^Total: [0-9]*$')" 1 summary/ss_s_first_line
assert_eq "$(grep -c '^TCP sockets by process and state' "$O")" 1 summary/table_title
assert_eq "$(grep -cE "^$SPID +poolfix +[0-9]+ " "$O")" 1 summary/server_row
assert_eq "$(grep -cE "^$CPID +poolfix +[0-9]+ " "$O")" 1 summary/client_row

# ---- 5. fdleak ----
# Started first and run beside the attach recipe (the leak fixture is a
# process of its own, which neither of the others traces): its 12 s then
# pass while attach runs its 10.
fix_start leak ip netns exec "$NS" "$FIXTURES/leakfix_nofp" && fix_expect leak "ready *" 10 ||
	{ fail leak/start leakfix; exit 1; }
read -r _ LPID LINE <<<"$FIX_LINE"
PIDS_leakfix_nofp=$LPID
FDL=
if recipe fdleak; then
	bg_recipe fdleak "$RECIPE"
	FDL=$RPID
fi
fix_cmd leak "leak 40" 'leaked *' 10 || fail leak/leak "$FIX_LINE"

# ---- 2. attach under load ----
recipe attach && bg_recipe attach "$RECIPE"
go c0
wait "$RPID"
assert_eq "$?" 0 attach/exit_status
O=$TMP/attach.out
assert_eq "$(head -1 "$O" | awk '{print $1, $2, $3, $4, $5}')" "TIME PID COMM OPEN ACPT" attach/live_header
ROWS=$(grep -cE "^[0-9]{2}:[0-9]{2}:[0-9]{2} +($SPID|$CPID) +poolfix( +[0-9]+){8}$" "$O")
[[ $ROWS -ge 2 ]] && ok attach/live_rows || fail attach/live_rows "$ROWS rows of the fixtures' pids: $(head -3 "$O")"
OPENED=$(awk -v p="$CPID" '$1 == "PID" && $2 == p {f = 1} f && $1 == "connections" {print $3; exit}' "$O")
assert_eq "$OPENED" 8 attach/client_opened_its_pool
assert_eq "$(grep -cE '^agent: [0-9]+ events, 0 lost' "$O")" 1 attach/agent_line
fix_send c0 exit
[[ -n $FDL ]] && wait "$FDL"
assert_eq "$?" 0 fdleak/exit_status
O=$TMP/fdleak.out
assert_eq "$(head -1 "$O" | awk '{print $1, $2, $3, $4}')" "TIME PID COMM FDS" fdleak/live_header
assert_eq "$(grep -c '^  leak suspects: fds open longer than' "$O")" 1 fdleak/suspects
assert_eq "$(grep -cE "^   1 +40 +40 +0 +[0-9.]+ +leak_sockets \(leakfix.c:$LINE\)$" "$O")" 1 fdleak/site

# ---- 3. doctor -> fix -> diff ----
recipe doctor
DOCTOR=$RECIPE
client small 2 || exit 0
bg_recipe before "$DOCTOR"
go small
wait "$RPID"
assert_eq "$?" 0 doctor/exit_status
assert_eq "$(jqn '[.findings[] | select(.rule == "churn")] | length' "$TMP/before.json")" 1 doctor/before_finds_churn
fix_send small exit
# The fix: a pool as large as the concurrency; the README's "again".
client sized 8 || exit 0
bg_recipe after "${DOCTOR//before.json/after.json}"
go sized
wait "$RPID"
assert_eq "$(jqn '.findings | length' "$TMP/after.json")" 0 doctor/after_is_healthy
fix_send sized exit
recipe diff && run_recipe "$RECIPE" >"$TMP/diff.out" 2>"$TMP/diff.err"
assert_eq "$?" 0 diff/exit_status
O=$TMP/diff.out
assert_eq "$(grep -c '^connscope diff: before.json (doctor, [0-9.]* s) -> after.json (doctor, [0-9.]* s)$' "$O")" 1 diff/title
assert_eq "$(grep -c '^Findings: 1 cleared, 0 raised, 0 still there$' "$O")" 1 diff/findings_line
assert_eq "$(grep -cE '^  cleared  \[warning\] churn  poolfix ' "$O")" 1 diff/churn_cleared
# The pool's own ratio: 8 connections for 800 requests, as 96_diff has it.
assert_eq "$(grep -cE '^  connections_per_request +[0-9.]+ -> 0\.01 +x' "$O")" 2 diff/ratio_rows

# ---- 4. exporter + curl ----
client c4 8 || exit 0
recipe exporter && bg_recipe exporter "$RECIPE"
wait_for "grep -q 'exporter serving' '$TMP/exporter.err' || ! kill -0 $RPID 2>/dev/null" 30
go c4
# The exporter renders once an interval: wait for the accepts to be in it.
recipe curl
wait_for "run_recipe '$RECIPE' 2>/dev/null | grep -q 'accepted_total{pid=\"$SPID\",comm=\"poolfix\"} 8$'" 30
run_recipe "$RECIPE" >"$TMP/curl.out" 2>"$TMP/curl.err"
O=$TMP/curl.out
assert_eq "$(grep -c '^# TYPE connscope_process_connections_accepted_total counter$' "$O")" 1 curl/type_line
assert_eq "$(grep -c "^connscope_process_connections_accepted_total{pid=\"$SPID\",comm=\"poolfix\"} 8$" "$O")" 1 curl/server_accepted
# Only the lines the README shows: its grep matched
# connscope_process_connections_never_accepted_total too (three more
# lines and a HELP and TYPE the README did not show).
assert_eq "$(grep -vc '^# \(HELP\|TYPE\) connscope_process_connections_accepted_total \|^connscope_process_connections_accepted_total{' "$O")" 0 \
	curl/only_the_lines_shown
# Ctrl-C as a reader stops it: SIGINT to the connscope below the shells.
for p in $(_lib_descendants "$RPID"); do
	[[ $(cat "/proc/$p/comm" 2>/dev/null) == connscope ]] && kill -INT "$p"
done
wait "$RPID"
assert_eq "$?" 0 exporter/exit_status
fix_send c4 exit

# ---- 6. run: a load test gated ----
# The README's load generator is ab; here `ab` on PATH is the pool
# fixture's client, churning (a pool of 2 for 8 workers), whatever its
# arguments: run starts it, traces it beside the server, and gates.
SHIM=$TMP/shim
mkdir -p "$SHIM"
printf '#!/bin/sh\nprintf "go\\nexit\\n" | exec "%s" client -p "%s" -w 8 -n 800 -P 2 -b >/dev/null\n' \
	"$FIXTURES/poolfix" "$PORT" >"$SHIM/ab"
chmod +x "$SHIM/ab"
PIDS_nginx=$SPID
recipe run && SHIM_PATH=$SHIM:$PATH run_recipe "$RECIPE" >"$TMP/run.out" 2>"$TMP/run.err"
assert_eq "$?" 4 run/exit_4_a_warning_fired
O=$TMP/run.out
# The targets in pid order, the command's own (ab) too: after the pids
# wrap (pid_max 32768 here), ab's may come first: a fresh-clone run failed so.
assert_eq "$(grep -A1 '^connscope run: ' "$O" | tr '\n' ' ' |
	grep -cE "^connscope run: [0-9.]+ s \(command exited\);.* PID $SPID \(poolfix\)")" 1 run/title
assert_eq "$(grep -cE "^  [0-9]+\. \[warning\] churn PID [0-9]+ \(poolfix\) 127\.0\.0\.1:$PORT$" "$O")" 1 \
	run/churn_on_the_load_generator
assert_eq "$(grep -c '^  [0-9]*\. \[critical\]' "$O")" 0 run/no_critical
assert_eq "$(grep -c '^connscope run: a warning finding fired (--fail-on warning): exit 4$' "$TMP/run.err")" 1 \
	run/said_why
