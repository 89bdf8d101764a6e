# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# connscope-specific test helpers on top of tests/lib.sh (source it first).

FX_WRAP=()

# fx_start NAME ARGS...: a tcpfix process driven over pipes (lib.sh's
# fix_start); waits for its first line ("listening PORT PID" / "ready PID")
# and sets FX_PID_NAME.
fx_start() {
	local name=$1 pidvar
	shift
	# FX_WRAP: a prefix such as (ip netns exec NS), which execs in place.
	fix_start "$name" "${FX_WRAP[@]}" "$FIXTURES/tcpfix" "$@" || return 1
	pidvar=${name}_PID
	printf -v "FX_PID_$name" %s "${!pidvar}"
	fix_expect "$name" "*" 10 || { echo "fixture $name did not start" >&2; return 1; }
}

# fx_cmd NAME LINE [TIMEOUT]: send a command, print its reply line.
fx_cmd() {
	fix_send "$1" "$2" && fix_expect "$1" "*" "${3:-60}" && echo "$FIX_LINE"
}

fx_stop() {
	fix_send "$1" exit 2>/dev/null
	local pidvar=${1}_PID
	wait "${!pidvar}" 2>/dev/null
	return 0
}

# The number of TIME_WAIT sockets with PORT at either end (kernel truth),
# in the fixtures' namespace (FX_WRAP).
tw_on_port() {
	"${FX_WRAP[@]}" ss -Htan state time-wait "( sport = :$1 or dport = :$1 )" | wc -l
}

# closes_done PORT: no socket with PORT at either end is still closing
# (only listeners and TIME_WAIT left), in the fixtures' namespace: every
# close the kernel began is over, so the books have every end record.
closes_done() {
	[ -z "$("${FX_WRAP[@]}" ss -Htan exclude listening exclude time-wait \
		"( sport = :$1 or dport = :$1 )")" ]
}

# lost_paragraph FILE: the report's LOST paragraph (wrapped at 80 columns,
# its last word "losses)", the exporter's "losses_total)") as one line,
# indents dropped; attach's warning on stderr too. Nothing when there is
# none.
lost_paragraph() {
	awk '/LOST: / {p = 1} p {sub(/^ +/, ""); s = s (s == "" ? "" : " ") $0}
		p && /losses(_total)?\)$/ {print s; exit}' "$1"
}

# err_notes FILE: the agent's stderr with each note whole on one line (a
# note wrapped at 80 columns goes on in lines that begin with spaces).
err_notes() {
	awk '/^ / {sub(/^ +/, ""); s = s " " $0; next} s != "" {print s} {s = $0}
		END {if (s != "") print s}' "$1"
}

# cs_attach OUT ERR ARGS...: connscope attach in the background; returns
# once it printed "tracing" (attached and seeded), or failed. Sets CS_PID.
CS_WRAP=()
cs_attach() {
	local out=$1 err=$2
	shift 2
	# CS_WRAP: e.g. (ip netns exec NS): sock_diag and /proc/sys are per netns.
	spawn_bg "${CS_WRAP[@]}" "$CONNSCOPE" attach "$@" >"$out" 2>"$err"
	CS_PID=$BG_PID
	# A bound, not a wait: loading and attaching takes ~1.5 s on a quiet
	# machine, over 30 s while other work loads its 2 cores.
	wait_for "grep -q '^connscope: tracing' '$err' || ! kill -0 $CS_PID 2>/dev/null" 90
	grep -q '^connscope: tracing' "$err"
}

# need_fixture NAME: a test without the built fixture fails (NAME_built)
# and ends. Not in a $(...): the failure must reach the test's own output.
need_fixture() {
	if [[ ! -x $FIXTURES/$1 ]]; then
		fail "$1_built" "$FIXTURES/$1 missing (make .output/fixtures/$1)"
		exit 1
	fi
}

# agent_map_id PID NAME: the id of the BPF map NAME that process PID holds
# (found by its fds); nothing and nonzero if it holds none.
agent_map_id() {
	local id
	for id in $(awk '/^map_id:/ {print $2}' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un); do
		if [ "$(bpftool map show id "$id" -j 2>/dev/null | jq -r .name)" = "$2" ]; then
			echo "$id"
			return 0
		fi
	done
	return 1
}

# agent_map_entries PID NAME: entries of the BPF hash map NAME that process
# PID holds, by dumping it with bpftool.
agent_map_entries() {
	local id
	if id=$(agent_map_id "$1" "$2"); then
		bpftool map dump id "$id" -j | jq length
	else
		echo "no map $2"
	fi
}

# Stop it as a user would (Ctrl-C) and return its exit status.
cs_stop() {
	kill -INT "$CS_PID" 2>/dev/null
	wait "$CS_PID"
}

# run_until_told OUT ERR CMD...: CMD, a `connscope run` command line
# without its "-- COMMAND", in the background (RUN_PID), its COMMAND a
# shell that waits for the test's word (run_tell) on a FIFO: `run` for its
# interval lines, ending when the test says. Returns once COMMAND started
# (the agent attached and seeded), nonzero when the run ended first (ERR
# says why). The test holds the FIFO's only writer from then on: however
# it ends (a failure, a signal, a SIGKILL) the fd closes, COMMAND reads
# EOF and the run ends; the FIFO is in the scratch directory.
run_until_told() {
	local out=$1 err=$2 dir
	shift 2
	# A run the test left untold (a case that returned early) ends now,
	# not at the test's exit: its fd is not inherited by what follows.
	_run_told_close
	dir=$(lib_tmpdir)
	rm -f "$dir/run.told" "$dir/run.started"
	mkfifo "$dir/run.told" || return 1
	# The FIFO opened before "started": the word cannot come too early.
	spawn_bg "$@" -- sh -c 'exec <"$2"; touch "$1"; read -r _' sh \
		"$dir/run.started" "$dir/run.told" >"$out" 2>"$err"
	RUN_PID=$BG_PID
	# After spawn_bg, so the run does not inherit it. Read-write: the open
	# waits for no reader, and a word to a COMMAND gone gets no SIGPIPE.
	exec {RUN_TOLD_FD}<>"$dir/run.told"
	on_exit _run_told_close
	wait_for "[ -e '$dir/run.started' ] || ! kill -0 $RUN_PID 2>/dev/null" 90
	[ -e "$dir/run.started" ]
}

# run_tell: run_until_told's COMMAND ends, and the run with it; returns
# the run's exit status.
run_tell() {
	echo go >&"$RUN_TOLD_FD"
	_run_told_close
	wait "$RUN_PID"
}

_run_told_close() {
	[[ -n ${RUN_TOLD_FD:-} ]] && exec {RUN_TOLD_FD}>&-
	RUN_TOLD_FD=
}

# tw_now_shown STREAM PID...: the TIME_WAIT the last interval's census
# showed for processes PID... (their time_wait_now summed), from the last
# line of a --json-stream file.
tw_now_shown() {
	local stream=$1 sel
	shift
	sel=$(printf ' or .pid == %s' "$@")
	tail -n 1 "$stream" | jq "[.processes[] | select(${sel# or }) | .time_wait_now] | add"
}

# fx_netns TAG: the test's own network namespace, NS=connscope-TAG-PID (lo
# up, deleted at exit; lib.sh's new_netns); failing to make it ends the
# script. inns CMD...: CMD inside it.
fx_netns() {
	NS=connscope-$1-$$
	new_netns "$NS" || { fail netns "ip netns add $NS failed"; exit 1; }
}

inns() {
	ip netns exec "$NS" "$@"
}

# netstat_field NAME: fx_netns's namespace's own TcpExt counter NAME, as
# /proc/net/netstat names it without "TcpExt" (TW: TcpExtTW, the TIME_WAIT
# sockets made; TCPTimeWaitOverflow: those not made, the table full).
netstat_field() {
	inns awk -v f="$1" '/^TcpExt:/ { if (!n) { for (i = 2; i <= NF; i++) k[i] = $i; n = 1 }
		else for (i = 2; i <= NF; i++) if (k[i] == f) print $i }' /proc/net/netstat
}

# tw_made: the TIME_WAIT sockets the namespace's kernel made, both ends'
# (TcpExt TW + TWKilled, each counted when its timer is scheduled: in
# TWKilled where that timer is short).
tw_made() {
	echo $(($(netstat_field TW) + $(netstat_field TWKilled)))
}

# snmp_tcp NAME: the namespace's own Tcp counter NAME of /proc/net/snmp
# (PassiveOpens: the connections its listeners took).
snmp_tcp() {
	inns awk -v f="$1" '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++)
		if ($i == f) c = i; h = 1 } else print $c }' /proc/net/snmp
}

# fx_twns TAG: fx_netns TAG (NS: lo up, deleted at exit however the test
# ends) with net.ipv4.tcp_rfc1337=1 inside it, and FX_WRAP=(ip netns exec
# NS): fx_start, fx_port, tw_on_port and closes_done then work there, and
# inns runs anything else there. The agent may stay in ours: it reads its
# targets' namespace through them. For fixtures whose TIME_WAIT must live
# their 60 s. Under load loopback can hold a client's last ACK past the
# server's FIN resend (~200 ms); the server's socket is gone by the time
# the resent FIN meets the client's TIME_WAIT, so the ACK that answers it
# gets a reset, and with tcp_rfc1337=0 (Linux's default) the reset ends the
# TIME_WAIT (RFC 1337's "TIME_WAIT assassination"). The agent says so (ended
# early), but a test that wants them live finds fewer (10_attach in CI: got
# 0, want 7). Sysctls are changed only in a namespace the test made.
# Test-only knobs, to show it: FX_TWNS_QDISC (tc qdisc arguments, e.g. "tbf
# rate 3kbit burst 1600 latency 10s") slows the namespace's lo, and
# FX_TWNS_RFC1337=0 keeps Linux's default.
fx_twns() {
	fx_netns "$1"
	inns sysctl -qw net.ipv4.tcp_rfc1337="${FX_TWNS_RFC1337:-1}" ||
		{ fail netns/rfc1337 "sysctl net.ipv4.tcp_rfc1337 in $NS failed"; exit 1; }
	if [[ -n ${FX_TWNS_QDISC:-} ]]; then
		# shellcheck disable=SC2086 # tc's arguments, split on purpose
		inns tc qdisc add dev lo root $FX_TWNS_QDISC ||
			{ fail netns/qdisc "tc qdisc add dev lo root $FX_TWNS_QDISC in $NS failed"; exit 1; }
		echo "fx_twns: $NS lo slowed: $FX_TWNS_QDISC, tcp_rfc1337=${FX_TWNS_RFC1337:-1}" >&2
	fi
	FX_WRAP=(ip netns exec "$NS")
}

# fx_port [-6]: a free loopback TCP port in the fixtures' namespace (FX_WRAP).
fx_port() {
	"${FX_WRAP[@]}" "$FIXTURES/tcpfix" freeport "$@"
}

# ---- what an agent holds in the kernel ----

# bpf_owned PID: "prog 12", "link 13", "map 14" lines for every BPF object
# an fd of PID holds (its fdinfo says which).
bpf_owned() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_id:/ {print "prog", $2} /^link_id:/ {print "link", $2} /^map_id:/ {print "map", $2}' "$f" 2>/dev/null
	done | sort -u
}

# agent_hooks PID: "TP SYS FEXIT": the agent's classic tracepoint programs
# (prog_type 5), its links on sys_enter or sys_exit (raw_tp, tp_btf) and
# its fexit links (attach_type 25, BPF_TRACE_FEXIT), as the kernel lists
# them in the agent's fdinfo. A syscall tracepoint of any kind puts every
# syscall of every task of the machine on the tracing path
# (SYSCALL_WORK_SYSCALL_TRACEPOINT). 6.1 shows no perf link's tracepoint
# in fdinfo, so every classic tracepoint program counts: the default
# loads none other (its state hook is tp_btf). The kernel guests' test
# (tests/kernels/guest.sh) and their getpid bench
# (tests/bench/getpid_kernels_guest.sh) read it.
agent_hooks() {
	awk '/^prog_type:/ && $2 == 5 {tp++} /^tp_name:/ && $2 ~ /^sys_(enter|exit)$/ {sys++}
		/^attach_type:/ && $2 == 25 {fexit++}
		END {print tp + 0, sys + 0, fexit + 0}' /proc/"$1"/fdinfo/* 2>/dev/null
}

# syscall_hooks PID: agent_hooks's first two, "0 0" when nothing of the
# agent runs for every syscall.
syscall_hooks() {
	local h

	h=$(agent_hooks "$1")
	echo "${h% *}"
}

# fexit_links PID: agent_hooks's third, the accept hook's fexit link where
# it attached.
fexit_links() {
	local h

	h=$(agent_hooks "$1")
	echo "${h##* }"
}

# bpf_alive LIST: the objects of LIST (bpf_owned's output) the kernel still has.
bpf_alive() {
	local kind id
	while read -r kind id; do
		[[ -n $kind ]] || continue
		bpftool "$kind" show id "$id" >/dev/null 2>&1 && echo "$kind $id"
	done <<<"$1"
}

# ---- QUIC peers: Debian's ngtcp2 example server and client ----

# quic_tools: the QUIC tests' peers and certificate maker are installed;
# otherwise a failure naming the package, and the script ends.
quic_tools() {
	local b

	for b in gtlsserver gtlsclient openssl; do
		if ! command -v "$b" >/dev/null; then
			fail "tools/$b" "$b missing (apt-get install ngtcp2-server ngtcp2-client openssl)"
			exit 1
		fi
	done
}

# quic_setup [www]: the QUIC tests' start: their peers installed
# (quic_tools), TMP the scratch directory, and with www a certificate and
# page in it for gtlsserver (quic_www). What fails ends the script.
quic_setup() {
	quic_tools
	TMP=$(lib_tmpdir)
	[[ ${1:-} == www ]] || return 0
	quic_www "$TMP" || { fail setup/cert "openssl could not make a certificate"; exit 1; }
}

# A UDP port nothing is bound to (ss: the kernel's own list).
udp_free_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 20000))
		[[ -z $(ss -Hlun "sport = :$p") ]] && { echo "$p"; return 0; }
	done
	return 1
}

# quic_www DIR: a self-signed EC certificate (DIR/key.pem, DIR/cert.pem)
# and DIR/www/index.html for gtlsserver.
quic_www() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$1/key.pem" -out "$1/cert.pem" -days 2 -subj /CN=localhost \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1 || return 1
	mkdir -p "$1/www" && echo hello >"$1/www/index.html"
}

# quic_server DIR PORT [GTLSSERVER_ARGS...]: gtlsserver on 127.0.0.1:PORT
# serving DIR/www (quic_www first), logging to DIR/gtls.PORT.log (-q still
# writes to stderr); exec keeps the pid. Returns once the port is bound;
# sets QS_PID.
quic_server() {
	local dir=$1 port=$2
	shift 2
	spawn_bg bash -c 'exec "${@:2}" >"$1" 2>&1' quic_server "$dir/gtls.$port.log" \
		gtlsserver -q "$@" -d "$dir/www" 127.0.0.1 "$port" "$dir/key.pem" "$dir/cert.pem"
	QS_PID=$BG_PID
	wait_for "[[ -n \$(ss -Hlun 'sport = :$port') ]]" 10
}

# quic_fetch PORT [N]: N (1) gtlsclient runs fetching index.html, one after another.
quic_fetch() {
	local i
	for ((i = 0; i < ${2:-1}; i++)); do
		gtlsclient -q --exit-on-all-streams-close 127.0.0.1 "$1" \
			"https://127.0.0.1:$1/index.html" >/dev/null 2>&1 </dev/null
	done
}

# tw_unbalanced JSON: the processes of an attach report whose TIME_WAIT
# books do not balance (entered = expired + ended early + end unseen +
# still in the books), as "pid:gap" words; empty when every one does.
# TW_UNBALANCED_JQ: its jq filter (the kernel guests run it beside others).
TW_UNBALANCED_JQ='[.processes[] | {pid, gap: (.totals.time_wait_entered - .totals.time_wait_expired
	- .totals.time_wait_ended_early - .totals.time_wait_end_unseen - .time_wait_in_books)}
	| select(.gap != 0) | "\(.pid):\(.gap)"] | join(" ")'
tw_unbalanced() {
	jq -r "$TW_UNBALANCED_JQ" "$1" 2>&1
}

# ---- nginx: Debian's, private to a test ----

# nginx_start DIR PORT [close] [log] [status]: nginx with one worker on
# 127.0.0.1:PORT answering "ok" on /, everything under DIR (config, pid,
# logs, temp paths: the packaged config stays untouched, nothing is left
# behind). Keep-alive (100,000 requests, 60 s) unless close (keepalive_timeout
# 0: nginx closes every connection first). log: DIR/access.log, a line a
# request, "$connection $connection_requests $status" (the connection's
# serial number, the request's number on it), else no access log. status:
# stub_status on /status. NGX_WRAP: a prefix such as (ip netns exec NS).
# Returns once the port listens and the worker runs; sets NGX_MASTER and
# NGX_WORKER. On failure the caller says so (DIR/error.log says why).
NGX_WRAP=()
nginx_start() {
	local dir=$1 port=$2 opt keep log=$'\taccess_log off;' status=''
	shift 2
	keep=$'\tkeepalive_requests 100000;\n\tkeepalive_timeout 60s;'
	for opt; do
		case $opt in
		close) keep=$'\tkeepalive_timeout 0;' ;;
		log) log=$'\tlog_format conn \'$connection $connection_requests $status\';\n'"	access_log $dir/access.log conn;" ;;
		status) status=$'\t\tlocation = /status {\n\t\t\tstub_status;\n\t\t\taccess_log off;\n\t\t}' ;;
		*) echo "nginx_start: unknown option $opt" >&2; return 1 ;;
		esac
	done
	mkdir -p "$dir" || return 1
	cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log notice;
events {
	worker_connections 1024;
}
http {
$log
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
$keep
	server {
		listen 127.0.0.1:$port;
		location / {
			return 200 "ok\n";
		}
$status
	}
}
CONF
	# -e: the error log before the config is read, else the compiled-in one.
	spawn_bg "${NGX_WRAP[@]}" nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
	NGX_MASTER=$BG_PID
	wait_for "_nginx_listens $port" 10 && wait_for "[ -n \"\$(pgrep -P $NGX_MASTER)\" ]" 10 || return 1
	NGX_WORKER=$(pgrep -P "$NGX_MASTER")
}

_nginx_listens() {
	"${NGX_WRAP[@]}" ss -Htln "sport = :$1" | grep -q .
}

# ---- Caddy: an HTTP/3 gateway on quic-go ----

# caddy_start DIR PORT: Debian's Caddy on 127.0.0.1:PORT (TCP for h1/h2,
# UDP for h3, the same number), `tls internal` for the site "localhost"
# (gtlsclient names 127.0.0.1 so in its SNI), admin off, its state in
# DIR/home, answering "hello". CADDY_WRAP: a prefix such as (ip netns exec
# NS). Returns once both ports are bound and an HTTP/3 client got through
# (Caddy issues its certificate at start); sets CADDY_PID (the owner of
# the UDP socket, as the kernel says). On failure: a "setup/..." failure
# and status 1.
CADDY_WRAP=()
caddy_start() {
	local dir=$1 port=$2
	command -v caddy >/dev/null || { fail tools/caddy "caddy missing (apt-get install caddy)"; return 1; }
	CADDY_PORT=$port
	mkdir -p "$dir/home" || return 1
	cat >"$dir/Caddyfile" <<CADDY
{
	admin off
	skip_install_trust
	auto_https disable_redirects
	servers {
		protocols h1 h2 h3
	}
}
https://localhost:$port {
	bind 127.0.0.1
	tls internal
	respond "hello"
}
CADDY
	spawn_bg "${CADDY_WRAP[@]}" env HOME="$dir/home" XDG_DATA_HOME="$dir/home/data" \
		XDG_CONFIG_HOME="$dir/home/config" caddy run --config "$dir/Caddyfile" --adapter caddyfile \
		>"$dir/caddy.log" 2>&1
	if ! wait_for "[[ -n \$(${CADDY_WRAP[*]} ss -Hlun 'sport = :$port') && -n \$(${CADDY_WRAP[*]} ss -Hltn 'sport = :$port') ]]" 30; then
		fail setup/caddy "caddy did not bind $port: $(tail -3 "$dir/caddy.log")"
		return 1
	fi
	CADDY_PID=$("${CADDY_WRAP[@]}" ss -Hlunp "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
	wait_for caddy_fetch 30 || { fail setup/first_fetch "no HTTP/3 answer: $(tail -3 "$dir/caddy.log")"; return 1; }
}

# caddy_fetch [GTLSCLIENT_ARGS...]: one HTTP/3 client of caddy_start's
# Caddy; 0 when its handshake completed and it got a 200.
caddy_fetch() {
	"${CADDY_WRAP[@]}" gtlsclient "$@" --exit-on-all-streams-close --handshake-timeout=5s 127.0.0.1 \
		"$CADDY_PORT" "https://127.0.0.1:$CADDY_PORT/" </dev/null 2>&1 >/dev/null |
		grep -E -c 'QUIC handshake has completed|:status: 200' | grep -qx 2
}

# apache_start DIR NS PORT: Debian's apache2 with mpm_prefork on
# 127.0.0.1:PORT in network namespace NS, in a session of its own
# (prefork's shutdown signals its process group); the lines on stdin are
# appended to its configuration (KeepAlive, logs, mod_status, the
# servers' counts). DIR holds its configuration, pid file, error.log and
# htdocs/index.html ("ok"). APID: its parent, once it has 4 children and
# listens. Stop it with apache_stop.
apache_start() {
	local dir=$1 ns=$2 port=$3
	mkdir -p "$dir/htdocs" && echo ok >"$dir/htdocs/index.html" && chmod 755 "$dir" || return 1
	{
		cat <<CONF
LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
ServerName 127.0.0.1
Listen 127.0.0.1:$port
User www-data
Group www-data
PidFile $dir/httpd.pid
ErrorLog $dir/error.log
DefaultRuntimeDir $dir
Mutex file:$dir default
DocumentRoot $dir/htdocs
CONF
		cat
	} >"$dir/httpd.conf" || return 1
	spawn_bg ip netns exec "$ns" setsid apache2 -f "$dir/httpd.conf" -DFOREGROUND
	APID=$BG_PID
	wait_for "[[ \$(pgrep -c -P $APID) -ge 4 ]] && ip netns exec $ns ss -Hltn '( sport = :$port )' | grep -q ." 20
}

# apache_stop: the Apache of apache_start, and its children, gone.
apache_stop() {
	kill -TERM "$APID" 2>/dev/null
	wait_for "! kill -0 $APID 2>/dev/null" 10
	wait "$APID" 2>/dev/null
}

# ---- cgroup v2 directories a test makes ----

# cg_make TAG: a cgroup v2 directory CG=MOUNT/connscope-TAG-PID (CG_MNT:
# the cgroup2 mount), removed at exit. Registered before the processes put
# in it, so it runs after they are reaped (last registered, first run);
# whatever is still in it then is killed first. No mount, or a mkdir that
# fails: a failure, and the script ends.
CG_MNT=
cg_make() {
	CG_MNT=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
	[[ -n $CG_MNT ]] || { fail cgroup/mount "no cgroup2 mount in /proc/self/mountinfo"; exit 1; }
	CG=$CG_MNT/connscope-$1-$$
	mkdir "$CG" || { fail cgroup/mkdir "cannot make $CG"; exit 1; }
	on_exit "cg_remove '$CG'"
}

# cg_remove DIR: what is left in it killed (bounded wait), then rmdir.
cg_remove() {
	local i p
	for ((i = 0; i < 100; i++)); do
		p=$(cat "$1/cgroup.procs" 2>/dev/null)
		[[ -z $p ]] && break
		# shellcheck disable=SC2086
		kill -KILL $p 2>/dev/null
		sleep 0.02
	done
	rmdir "$1"
}

# "${CG_EXEC[@]}" DIR CMD...: CMD in cgroup DIR (the shell moves itself in,
# then becomes CMD: same pid), for spawn_bg, fix_start or FX_WRAP.
# shellcheck disable=SC2016
CG_EXEC=(bash -c 'echo $$ >"$1/cgroup.procs" && exec "${@:2}"' cg_exec)
