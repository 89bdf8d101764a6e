#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The exporter under abuse, all on loopback: 20 concurrent scrapers x 1,000
# scrapes without an error; malformed request lines, oversized headers,
# slow clients (a byte a second), 1,000 idle connections and scrapers that
# hang up mid-response, while another scraper (from 127.0.0.2: the limit
# per address keeps one host from taking every slot) is still answered.
# Outcomes, not timings: each request has its own generous timeout. Then
# what it serves (two paths, GET/HEAD), a process named "\xff" (valid
# UTF-8 for Prometheus), and the HTTP thread's credentials (nobody, no
# capabilities).
set -u
source "$TESTS_DIR/lib.sh"
source "$TESTS_DIR/fixture.sh"
require_root

TMP=$(lib_tmpdir)
PY=python3

port=$(free_port)
fx_start srv server -p "$port" && fx_start cli client -p "$port"
eport=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "$FX_PID_cli" --listen "127.0.0.1:$eport" -i 0.2 \
	>"$TMP/exp.out" 2>"$TMP/exp.err"
EXP=$BG_PID
wait_for "grep -q 'exporter serving' '$TMP/exp.err' || ! kill -0 $EXP 2>/dev/null" 30 ||
	fail start "$(cat "$TMP/exp.err")"
URL=http://127.0.0.1:$eport
fx_cmd cli "churn 5" >/dev/null

# code [CURL ARGS...] URL: the HTTP status, from 127.0.0.2 (another
# address than the abusers below), 000 when there was none.
code() {
	curl -s -o /dev/null --interface 127.0.0.2 --max-time 20 -w '%{http_code}' "$@"
}
# A scrape from 127.0.0.2 that must work whatever else is going on.
still_served() {
	local c
	c=$(code "$URL/metrics")
	assert_eq "$c" 200 "$1/other_scrape_answered"
}

# ---- 20 scrapers x 1,000 scrapes, concurrently ----
# One curl per scraper, 1,000 URLs on one keep-alive connection.
urls=()
for ((i = 0; i < 1000; i++)); do urls+=("$URL/metrics"); done
scrapers=()
for ((s = 0; s < 20; s++)); do
	curl -s --max-time 200 -o /dev/null -w '%{http_code} %{size_download}\n' "${urls[@]}" \
		>"$TMP/scraper.$s" 2>&1 &
	scrapers+=($!)
done
wait "${scrapers[@]}"
good=$(cat "$TMP"/scraper.* | awk '$1 == 200 && $2 > 1000' | wc -l)
assert_eq "$good" 20000 concurrent/20x1000_scrapes_ok
scrapes=$(curl -s --max-time 20 "$URL/metrics" | awk '$1 == "connscope_scrapes_total" {print $2}')
if [[ $scrapes =~ ^[0-9]+$ ]] && ((scrapes >= 20000)); then
	ok concurrent/counted
else
	fail concurrent/counted "connscope_scrapes_total '$scrapes', want >= 20000"
fi

# ---- malformed and oversized requests ----
raw() {	# raw HOST_BYTES: what the exporter answers to these bytes (status line)
	$PY - "$eport" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
try:
    data = s.recv(200)
except socket.timeout:
    data = b"timeout"
print((data.split(b"\r\n")[0] or b"closed").decode("latin-1"))
PY
}
# No version at all: refused (400) or hung up on, never served.
st=$(raw 'GARBAGE\r\n\r\n')
if [[ $st == "HTTP/1.1 400 Bad Request" || $st == closed ]]; then
	ok malformed/no_version
else
	fail malformed/no_version "got '$st'"
fi
assert_eq "$(raw 'GET /metrics HTTP/9.9\r\n\r\n')" "HTTP/1.1 505 HTTP Version Not Supported" malformed/bad_version
assert_eq "$(raw 'GET\x00 /metrics HTTP/1.1\r\n\r\n')" "HTTP/1.1 400 Bad Request" malformed/nul_byte
big=$(head -c 65536 /dev/zero | tr '\0' a)
st=$(raw "GET /metrics HTTP/1.1\\r\\nHost: x\\r\\nX-Big: $big\\r\\n\\r\\n")
assert_eq "$st" "HTTP/1.1 431 Request Header Fields Too Large" oversized_header/refused
still_served malformed

# ---- slow clients, idle connections, hang-ups mid-response ----
# 1,000 idle connections and 5 clients sending a byte a second, all from
# 127.0.0.1; 50 scrapers that read 100 bytes and reset. Meanwhile scrapes
# from 127.0.0.2 go on.
$PY - "$eport" >"$TMP/abuse.log" 2>&1 <<'PY' &
import resource, socket, struct, sys, time
port = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
idle, slow = [], []
# Hang-ups first, while 127.0.0.1 still has slots: a small receive buffer
# keeps the response from fitting, so the reset comes mid-response.
hung = 0
for i in range(50):
    try:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        if s.recv(100):
            hung += 1
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    except OSError:
        pass
for i in range(1000):
    try:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        idle.append(s)
    except OSError:
        pass
for i in range(5):
    try:
        slow.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError:
        pass
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
for b in range(12):
    for s in slow:
        try:
            s.send(req[b:b + 1])
        except OSError:
            pass
    time.sleep(1)
print("opened", len(idle), "hung", hung, flush=True)
time.sleep(2)
PY
ABUSE=$!
# Scrapes while the abuse runs (the loop ends when the abuser is done).
served=0 tried=0
while kill -0 "$ABUSE" 2>/dev/null && ((tried < 200)); do
	[[ $(code "$URL/metrics") == 200 ]] && served=$((served + 1))
	tried=$((tried + 1))
done
wait "$ABUSE"
assert_eq "$served" "$tried" abuse/every_other_scrape_answered
if ((tried >= 5)); then ok abuse/scraped_during; else fail abuse/scraped_during "only $tried scrapes"; fi
opened=$(awk '/^opened/ {print $2}' "$TMP/abuse.log")
hung=$(awk '/^opened/ {print $4}' "$TMP/abuse.log")
assert_eq "$hung" 50 abuse/50_hung_up_mid_response
if [[ $opened =~ ^[0-9]+$ ]] && ((opened >= 1000)); then
	ok abuse/1000_idle_connections_made
else
	fail abuse/1000_idle_connections_made "$(cat "$TMP/abuse.log")"
fi
still_served abuse
kill -0 "$EXP" 2>/dev/null && ok abuse/exporter_alive || fail abuse/exporter_alive "exporter died"

# ---- what it serves ----
assert_eq "$(code "$URL/")" 200 paths/index
assert_eq "$(code "$URL/metrics")" 200 paths/metrics
assert_eq "$(code -I "$URL/metrics")" 200 paths/head
assert_eq "$(code "$URL/metrics/")" 404 paths/trailing_slash
assert_eq "$(code "$URL/../etc/passwd" --path-as-is)" 404 paths/dotdot
assert_eq "$(code "$URL/debug")" 404 paths/other
assert_eq "$(code -X POST -d x "$URL/metrics")" 405 paths/post
assert_eq "$(code -X DELETE "$URL/metrics")" 405 paths/delete

# ---- the HTTP thread: nobody, no capabilities ----
http_tasks=$(for t in /proc/"$EXP"/task/*; do
	uid=$(awk '/^Uid:/ {print $2}' "$t/status")
	cap=$(awk '/^CapEff:/ {print $2}' "$t/status")
	[[ $uid == 65534 && $cap == 0000000000000000 ]] && echo "$t"
done | wc -l)
assert_eq "$http_tasks" 1 privileges/http_thread_nobody_no_caps
main_uid=$(awk '/^Uid:/ {print $2}' "/proc/$EXP/status")
assert_eq "$main_uid" 0 privileges/tracing_thread_keeps_root

# ---- a process named "\xff": the scrape stays valid ----
$PY - "$port" >"$TMP/ff.log" 2>&1 <<'PY' &
import ctypes, socket, sys, time
libc = ctypes.CDLL(None)
libc.prctl(15, b"\xff\xfebad", 0, 0, 0)   # PR_SET_NAME
print("named", flush=True)
end = time.time() + 30
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    except OSError:
        pass
    time.sleep(0.05)
PY
FF=$!
on_exit "kill $FF 2>/dev/null; wait $FF 2>/dev/null"
wait_for "grep -q named '$TMP/ff.log'" 10
eport2=$(free_port)
spawn_bg "$CONNSCOPE" exporter -p "$FF" --listen "127.0.0.1:$eport2" -i 0.2 \
	>"$TMP/exp2.out" 2>"$TMP/exp2.err"
wait_for "grep -q 'exporter serving' '$TMP/exp2.err'" 30 || fail utf8/start "$(cat "$TMP/exp2.err")"
ffcomm() { curl -s --max-time 10 "http://127.0.0.1:$eport2/metrics" >"$TMP/ff.prom"; grep -c "comm=\"$(printf '\xef\xbf\xbd\xef\xbf\xbd')bad\"" "$TMP/ff.prom"; }
if wait_for '[ "$(ffcomm)" -gt 0 ]' 20; then
	ok utf8/replacement_in_label
else
	fail utf8/replacement_in_label "$(grep -a 'comm=' "$TMP/ff.prom" | head -2)"
fi
promtool check metrics <"$TMP/ff.prom" >"$TMP/lint.txt" 2>&1
assert_eq "$?" 0 "utf8/promtool_clean $(head -c 300 "$TMP/lint.txt")"
