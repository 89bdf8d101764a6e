#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Never silent: a run that loses records says so in the first line of its
# report, in JSON (agent.losses, equal to what the kernel side counted) and
# in the exporter's self-metrics. Losses are made for real: a 4 KiB ring
# buffer and a stopped reader while the client churns.
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
jqn() { jq -r "$1" "$2" 2>/dev/null; }

# lose CHURN: attach (extra args after), stop the agent, churn, let it go.
lose() {
	local name=$1 out=$2
	shift 2
	cs_attach "$out" "$TMP/$name.err" -p "$FX_PID_cli" -i 0.5 --ringbuf-size 4096 "$@" ||
		fail "$name/attach" "$(cat "$TMP/$name.err")"
	kill -STOP "$CS_PID"
	assert_eq "$(fx_cmd cli "churn 200")" "churned 200" "$name/churned"
	kill -CONT "$CS_PID"
	cs_stop >/dev/null
}

port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"

# Text: the report's first line (after the live rows' blank line) is LOST.
lose text "$TMP/lost.txt"
first=$(awk 'prev == "" && /^(LOST: |connscope attach: )/ {print; exit} {prev = $0}' "$TMP/lost.txt")
para=$(lost_paragraph "$TMP/lost.txt")
if [[ $first =~ ^LOST:\ [0-9]+\ TCP\ events\ \(ring\ buffer\ full\) &&
	$para =~ counts\ below\ are\ low ]]; then
	ok text/first_line_says_lost
else
	fail text/first_line_says_lost "first report line: '$first', its paragraph '$para'"
fi
# The paragraph (continuations indented), then the header.
assert_eq "$(awk '/^LOST: / {p = 1; next} p && !/^  / {print substr($0, 1, 17); exit}' "$TMP/lost.txt")" \
	"connscope attach:" text/then_the_header
assert_eq "$(awk 'length > 80' "$TMP/lost.txt")" "" text/fits_80_columns
if grep -Eq '^  tcp_events +[1-9][0-9]* +TCP events' "$TMP/lost.txt"; then
	ok text/agent_block
else
	fail text/agent_block "$(grep -A5 '^losses' "$TMP/lost.txt")"
fi

# JSON: agent.losses, its total the sum, tcp_events what BPF counted.
lose json "$TMP/lost.json" -j
assert_eq "$(jqn '.agent.losses.tcp_events == .agent.events_lost and .agent.losses.tcp_events > 0' "$TMP/lost.json")" \
	true json/tcp_events_equal_kernel_count
assert_eq "$(jqn '.agent.losses as $l | ([$l | to_entries[] | select(.key != "total") | .value] | add) == $l.total' "$TMP/lost.json")" \
	true json/total_is_the_sum

# A clean run: "losses: none", and no LOST line anywhere.
cs_attach "$TMP/clean.txt" "$TMP/clean.err" -p "$FX_PID_cli" -i 0.5 ||
	fail clean/attach "$(cat "$TMP/clean.err")"
fx_cmd cli "churn 5" >/dev/null
cs_stop >/dev/null
assert_eq "$(grep -c '^LOST: ' "$TMP/clean.txt")" 0 clean/no_lost_line
assert_eq "$(grep -c '^losses: none' "$TMP/clean.txt")" 1 clean/losses_none

# Exporter: connscope_agent_losses_total{what="tcp_events"} counts them.
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$eport" -i 0.3 \
	--ringbuf-size 4096 >"$TMP/exp.out" 2>"$TMP/exp.err"
EXP=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/exp.err' || ! kill -0 $EXP 2>/dev/null" 30 ||
	fail exporter/start "$(cat "$TMP/exp.err")"
scrape() { curl -s --max-time 5 "http://127.0.0.1:$eport/metrics"; }
kill -STOP "$EXP"
fx_cmd cli "churn 200" >/dev/null
kill -CONT "$EXP"
lost_metric() { scrape | awk '$1 == "connscope_agent_losses_total{what=\"tcp_events\"}" {print $2}'; }
if wait_for '[ "$(lost_metric)" -gt 0 ] 2>/dev/null' 20; then
	ok exporter/losses_metric
else
	fail exporter/losses_metric "$(scrape | grep agent_losses)"
fi
assert_eq "$(scrape | awk '$1 == "connscope_events_lost_total" {print $2}')" "$(lost_metric)" \
	exporter/equals_kernel_count
# Every kind the JSON names (its keys but total), each once.
kinds=$(jq -r '.agent.losses | keys[] | select(. != "total")' "$TMP/lost.json" | sort | paste -sd' ')
assert_eq "$(scrape | sed -n 's/^connscope_agent_losses_total{what="\([a-z0-9_]*\)"}.*/\1/p' | sort | paste -sd' ')" \
	"$kinds" exporter/every_kind_shown

# Seeds that do not fit: a process holding more sockets at attach than
# --max-sockets lets the seed map take. Each one left out is counted
# (tcp_seeds), and the report's first line says so. Before, the map
# update's result was ignored: those sockets were silently unowned.
python3 - >"$TMP/holder.log" 2>&1 <<'PY' &
import resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1024)
keep = []
for i in range(600):
    c = socket.create_connection(srv.getsockname())
    a, _ = srv.accept()
    keep += [c, a]
print("holding", len(keep) + 1, flush=True)
time.sleep(60)
PY
HOLDER=$!
on_exit "kill $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null"
wait_for "grep -q holding '$TMP/holder.log'" 30 || fail seeds/holder "$(cat "$TMP/holder.log")"
"$CONNSCOPE" attach -p "$HOLDER" -d 0.5 --max-sockets 1024 --no-fd --no-quic >"$TMP/seeds.txt" 2>"$TMP/seeds.err"
assert_eq "$?" 0 seeds/exit_status
held=$(awk '$1 == "held" && $3 == "start" {print $4}' "$TMP/seeds.txt")
lost=$(awk '$1 == "tcp_seeds" {print $2}' "$TMP/seeds.txt")
# 1,201 sockets (600 connections, both ends, and the listener), a seed
# map of 1,024: 177 do not fit.
assert_eq "$held" 1201 seeds/held_at_start
assert_eq "$lost" 177 seeds/counted_exactly
first=$(awk 'prev == "" && /^(LOST: |connscope attach: )/ {print; exit} {prev = $0}' "$TMP/seeds.txt")
if [[ $first == "LOST: 177 sockets held at start not seeded (map full)"* ]]; then
	ok seeds/first_line
else
	fail seeds/first_line "first report line: '$first'"
fi
