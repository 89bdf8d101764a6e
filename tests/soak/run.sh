#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# make soak (not part of make test): does connscope stay flat when left
# running? Two phases of SOAK_MINUTES each (default 60), on loopback:
#   1. attach -p to a client that churns connections without pause;
#   2. exporter --all while short-lived processes come and go (each one
#      connects a few times and exits) on top of the same churn.
# Every SOAK_SAMPLE_S seconds (default 60) the agent's RSS, the entries of
# its BPF hash maps (map occupancy, counted by dumping them) and, for the
# exporter, the series in its snapshot and the processes it keeps books
# for; beside them the kernel's TIME_WAIT sockets that the agent traces.
# After the warm-up (the first SOAK_WARMUP_PCT %, default 25) no figure
# may grow: the median of the last third of the samples within 5% of the
# first third's. Map entries follow the TIME_WAIT population, which
# follows the load generator's rate (slower while anything else loads the
# machine): shown, not judged; judged is what the maps hold beyond the
# kernel's TIME_WAIT (map_excess, within 64 entries). SOAK_PHASES (default
# "attach exporter") runs one phase alone. Writes .output/soak.json and
# prints a table; exits 1 if anything grew.
set -u
export LC_ALL=C
REPO_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
C=$REPO_ROOT/.output/connscope
MIN=${SOAK_MINUTES:-60}
EVERY=${SOAK_SAMPLE_S:-60}
WARM=${SOAK_WARMUP_PCT:-25}
OUT=$REPO_ROOT/.output/soak.json
TMP=$(mktemp -d "${TMPDIR:-/tmp}/connscope-soak.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ $EUID -eq 0 ]] || { echo "soak: needs root" >&2; exit 1; }
[[ -x $C ]] || { echo "soak: build first (make)" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The workload: a server, a client churning RATE connections a second,
# and (phase 2) a spawner of short-lived clients.
cat >"$TMP/load.py" <<'PY'
import os, socket, sys, threading, time
mode, port = sys.argv[1], int(sys.argv[2])
if mode == "server":
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(512)
    print("ready", flush=True)
    while True:
        c, _ = srv.accept()
        c.recv(16)
        c.close()
elif mode == "churn":
    rate = float(sys.argv[3])
    while True:
        t = time.time()
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"x")
            s.close()
        except OSError:
            pass
        time.sleep(max(0, 1 / rate - (time.time() - t)))
elif mode == "spawn":
    # A new process every 1/rate s: a few connections, then it exits.
    rate = float(sys.argv[3])
    while True:
        pid = os.fork()
        if pid == 0:
            for i in range(3):
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=2)
                    s.sendall(b"y")
                    s.close()
                except OSError:
                    pass
            os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(1 / rate)
PY

port=$(free_port)
python3 "$TMP/load.py" server "$port" >"$TMP/server.log" 2>&1 &
pids+=($!)
for ((i = 0; i < 100; i++)); do grep -q ready "$TMP/server.log" 2>/dev/null && break; sleep 0.1; done
python3 "$TMP/load.py" churn "$port" "${SOAK_RATE:-100}" &
CHURN=$!
pids+=($CHURN)

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# Entries in the agent's hash maps (its own, by fdinfo), summed.
map_entries() {
	local id n=0 t
	for id in $(grep -h '^map_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		t=$(bpftool map show id "$id" -j 2>/dev/null | jq -r .type)
		case $t in
		hash | lru_hash) n=$((n + $(bpftool map dump id "$id" -j 2>/dev/null | jq length))) ;;
		esac
	done
	echo "$n"
}
# The kernel's TIME_WAIT sockets the agent traces, so what its TIME_WAIT
# map must hold and no more: attach, the churning client's (it closes
# first: each is toward the server's port); exporter --all, every one in
# this namespace (others it traces in other namespaces count as excess:
# run the soak on a machine with nothing else churning connections).
tw_kernel() {
	if [[ -n ${EPORT:-} ]]; then
		ss -Htan state time-wait | wc -l
	else
		ss -Htan state time-wait "( dport = :$port )" | wc -l
	fi
}
metric() { curl -s --max-time 10 "http://127.0.0.1:$2/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# phase NAME CMD...: run the agent, sample, judge. Fills $TMP/NAME.tsv.
phase() {
	local name=$1 agent end next t0 n=0 eport=${EPORT:-}
	shift
	"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	agent=$!
	pids+=($agent)
	for ((i = 0; i < 300; i++)); do grep -q 'tracing' "$TMP/$name.err" 2>/dev/null && break; sleep 0.1; done
	t0=$SECONDS
	end=$((SECONDS + MIN * 60))
	printf 't_s\trss_kb\tmap_entries\tseries\tprocs_other\ttw_kernel\n' >"$TMP/$name.tsv"
	while ((SECONDS < end)) && kill -0 "$agent" 2>/dev/null; do
		next=$((SECONDS + EVERY))
		if [[ -n $eport ]]; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' $((SECONDS - t0)) "$(rss_kb "$agent")" "$(map_entries "$agent")" \
				"$(metric connscope_snapshot_series "$eport")" "$(metric connscope_processes_other "$eport")" \
				"$(tw_kernel)" >>"$TMP/$name.tsv"
		else
			printf '%s\t%s\t%s\t-\t-\t%s\n' $((SECONDS - t0)) "$(rss_kb "$agent")" "$(map_entries "$agent")" \
				"$(tw_kernel)" >>"$TMP/$name.tsv"
		fi
		n=$((n + 1))
		while ((SECONDS < next && SECONDS < end)); do sleep 1; done
	done
	kill -INT "$agent" 2>/dev/null
	wait "$agent" 2>/dev/null
	echo "$name: $n samples" >&2
}

echo "soak: ${MIN} min attached to a churning client, then ${MIN} min exporter --all with processes coming and going; a sample every ${EVERY} s" >&2
PHASES=" ${SOAK_PHASES:-attach exporter} "
[[ $PHASES == *" attach "* ]] && phase attach "$C" attach -p "$CHURN" -H -i 1 --no-color
if [[ $PHASES == *" exporter "* ]]; then
	python3 "$TMP/load.py" spawn "$port" "${SOAK_SPAWN_RATE:-5}" &
	pids+=($!)
	EPORT=$(free_port)
	EPORT=$EPORT phase exporter "$C" exporter --all --listen "127.0.0.1:$EPORT" -i 1
fi

# judge: per phase and column, the post-warm-up samples against their
# median. Prints the table, writes the JSON, exit status.
python3 - "$TMP" "$WARM" "$OUT" "$MIN" "$EVERY" <<'PY'
import json, statistics, sys
tmp, warm, out, minutes, every = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
res, bad = {"minutes_per_phase": float(minutes), "sample_s": float(every), "warmup_pct": warm, "phases": {}}, False
print(f"{'phase':9} {'figure':12} {'samples':>7} {'min':>9} {'median':>9} {'max':>9} {'spread':>7} {'growth':>7}  flat")
for ph in ("attach", "exporter"):
    try:
        rows = [l.rstrip("\n").split("\t") for l in open(f"{tmp}/{ph}.tsv")][1:]
    except FileNotFoundError:
        continue    # not run (SOAK_PHASES)
    # map_excess: map entries beyond the kernel's TIME_WAIT of the
    # workload. The entries themselves follow that population, which
    # follows the load generator's rate (it slows while anything else
    # loads the machine): shown, not judged; what they hold beyond it is.
    for r in rows:
        r.append(str(float(r[2]) - float(r[5])) if len(r) > 5 and r[2] and r[5] else "")
    cols = ["rss_kb", "map_entries", "series", "procs_other", "tw_kernel", "map_excess"]
    judged = {"rss_kb", "series", "procs_other", "map_excess"}
    res["phases"][ph] = {}
    for ci, col in enumerate(cols, start=1):
        vals = [float(r[ci]) for r in rows if len(r) > ci and r[ci] not in ("", "-")]
        if not vals:
            continue
        post = vals[int(len(vals) * warm / 100):] or vals
        med = statistics.median(post)
        lo, hi = min(post), max(post)
        spread = (hi - lo) / med * 100 if med else 0.0
        # Growth, not jitter: the last third of the post-warm-up samples
        # against the first third, medians (map entries and processes
        # in "other" follow the churn's TIME_WAIT population, which
        # jitters with the load generator's rate on a shared machine).
        k = max(1, len(post) // 3)
        first, last = statistics.median(post[:k]), statistics.median(post[-k:])
        slack = max(0.05 * first, 64 if col == "map_excess" else 0, 2 if col == "procs_other" else 0)
        growth = (last - first) / first * 100 if first else 0.0
        flat = last - first <= slack if col in judged else None
        bad |= flat is False
        res["phases"][ph][col] = {"samples": vals, "post_warmup_min": lo, "median": med,
                                  "max": hi, "spread_pct": round(spread, 2),
                                  "growth_pct": round(growth, 2), "flat": flat}
        verdict = "-" if flat is None else "yes" if flat else "NO"
        print(f"{ph:9} {col:12} {len(vals):7d} {lo:9.0f} {med:9.0f} {hi:9.0f} {spread:6.1f}% {growth:+6.1f}%  {verdict}")
json.dump(res, open(out, "w"), indent=1)
print(f"written {out}")
sys.exit(1 if bad else 0)
PY
