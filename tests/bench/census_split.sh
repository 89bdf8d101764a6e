#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Where a census interval's time goes (issue #23 item 6): the agent's
# samples over S seconds of intervals, while its books hold a churn's
# TIME_WAIT (census_ab.sh's steady state), split into the sock_diag
# dump's kernel side (the recvmsg that walks the table), its user-space
# parse and collect, the iter/tcp birth pass, the reconcile and the rest.
#
#	tests/bench/census_split.sh BIN	a connscope binary
#	ROUNDS=N (default 5) N=CONNS (default 20000; 0: an empty namespace)
#	SECONDS_MEASURED=S (default 8)
#
# perf record -g (DWARF stacks) of the agent at 999 Hz; a sample counts
# under every part whose function is on its stack (perf report
# --children), so the parts are inclusive: dump = kernel + parse.
# Prints one line a round with each part's ms an interval (the agent's
# task-clock an interval times the part's share of the samples). A
# measurement: nothing is asserted.
set -u
export LC_ALL=C

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$REPO_ROOT/.output/bench
ROUNDS=${ROUNDS:-5} N=${N:-20000} S=${SECONDS_MEASURED:-8}
if (($# != 1)) || [[ ! -x $1 ]]; then
	echo "usage: census_split.sh BIN (a connscope binary)" >&2
	exit 2
fi
# shellcheck source=tests/bench/lib.sh
source "$REPO_ROOT/tests/bench/lib.sh"
ab_setup census_split split

# The parts: a name and the function whose inclusive share is its own.
PARTS="dump:sd_dump dump_kernel:netlink_dump birth:tracer_birth_pass walk:tracer_walk pass_kernel:bpf_seq_read reconcile:agg_reconcile limits:limits_observe procfs:procfs_scan_pid_sockets"

one() {
	local cs=$1 tool tw ms

	ns_new || return 1
	# N=0: the agent traces a sleep in an empty namespace.
	if ((N)); then
		lg_start "$NS" "$WORK/lg.out" run -n "$N" -c 32 -r 1 || { ns_del "$NS"; return 1; }
	fi
	# The last round's att.err says "connscope: tracing" until this
	# agent's redirection truncates it: not a sign of this one.
	rm -f "$WORK/att.err"
	ip netns exec "$NS" "$cs" attach --comm loadgen -d $((S + 8)) -i 1 -j \
		>"$WORK/att.json" 2>"$WORK/att.err" &
	tool=$!
	BG+=("$tool")
	wait_for "grep -qs 'connscope: tracing' '$WORK/att.err'" 30 ||
		say "connscope did not attach: $(head -n 3 "$WORK/att.err")"
	if ((N)); then
		lg_go
		lg_end || say "loadgen: $(tail -n 2 "$WORK/loadgen.err" 2>/dev/null)"
	fi
	perf record -q -F 999 -g --call-graph dwarf,16384 -p "$tool" -o "$WORK/perf.data" \
		-- sleep "$S" 2>/dev/null &
	local rec=$!
	perf stat -x, -e task-clock -p "$tool" -o "$WORK/perf.out" -- sleep "$S"
	wait "$rec"
	tw=$(ip netns exec "$NS" ss -tanH state time-wait | wc -l)
	wait_for "! kill -0 $tool 2>/dev/null" 30 || kill -INT "$tool" 2>/dev/null
	wait "$tool"
	bg_forget "$tool"
	ns_del "$NS"
	ms=$(awk -F, -v s="$S" '$3 == "task-clock" { printf "%.2f", $1 / s }' "$WORK/perf.out")
	perf report -i "$WORK/perf.data" --children --stdio -g none --percent-limit 0 \
		--sort sym 2>/dev/null >"$WORK/report.txt"
	# KEEP=DIR: each round's report kept there, to see what else ran.
	[[ -n ${KEEP:-} ]] && cp "$WORK/report.txt" "$KEEP/report.$(date +%s).txt"
	printf 'ms_per_interval=%s time_wait=%s' "$ms" "$tw"
	for p in $PARTS; do
		awk -v f="${p#*:}" -v name="${p%%:*}" -v ms="$ms" '
			$1 ~ /%$/ && $NF == f { pct = $1; sub(/%/, "", pct) }
			END { printf " %s=%.2f", name, ms * pct / 100 }' "$WORK/report.txt"
	done
	echo
}
# dump - dump_kernel is the dump's user side (the parse and collect, which
# the compiler inlines into sd_dump).

for ((r = 0; r < ROUNDS; r++)); do
	one "$1"
done
