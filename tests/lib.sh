# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# shellcheck shell=bash
# Helpers for tests/integration/*.sh; source it first:
#	. "$(dirname "$0")/../lib.sh"
#
# Results go to stdout, one line each, in the format tests/run.sh counts:
#	ok - <script>/<name>
#	not ok - <script>/<name>: <message>
#	skip - <script>/<name>: <reason>
# where <script> is the script's file name without .sh. Anything else a
# test wants to say belongs on stderr.
#
# Cleanup: everything registered with on_exit (directly, or through
# spawn_bg, fix_start, new_netns) is undone in reverse order when the
# script exits, fails or is interrupted, so a test leaves no processes,
# namespaces or BPF objects behind.

# Run alone (not from run.sh), still find the binaries.
REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TESTS_DIR=${TESTS_DIR:-$REPO_ROOT/tests}
CONNSCOPE=${CONNSCOPE:-$REPO_ROOT/.output/connscope}
FIXTURES=${FIXTURES:-$REPO_ROOT/.output/fixtures}

LIB_SCRIPT=$(basename "$0" .sh)

# fix_expect patterns may use @(a|b) alternatives.
shopt -s extglob

# Messages are one line: a newline would split a result in two.
_lib_line() {
	local s=$*

	s=${s//$'\n'/\\n}
	printf '%s\n' "${s//$'\r'/\\r}"
}

ok() {
	_lib_line "ok - $LIB_SCRIPT/$1"
}

# fail NAME MSG: returns 1, so `check || fail ...` chains (mind set -e).
fail() {
	_lib_line "not ok - $LIB_SCRIPT/$1: ${2:-failed}"
	return 1
}

skip() {
	_lib_line "skip - $LIB_SCRIPT/$1: ${2:-skipped}"
}

# assert_eq GOT WANT NAME: returns nonzero on mismatch, so `|| return` works.
assert_eq() {
	if [[ "$1" == "$2" ]]; then
		ok "$3"
	else
		fail "$3" "got '$1', want '$2'"
	fi
}

# msg_join FILE: FILE (a command's stderr) with each continuation line
# (indented two spaces: the agent wraps its messages so) joined to the line
# before by one space; one message prints one line.
msg_join() {
	awk 'NR > 1 && /^  / { sub(/^ +/, ""); printf " %s", $0; next }
		NR > 1 { print "" } { printf "%s", $0 } END { if (NR) print "" }' "$1"
}

# msg_width FILE [LONG]: the widest line of FILE in columns, LONG (a test's
# own long directory, which no user types) counted as the 6 of "/tmp/t".
msg_width() {
	if [[ -n ${2:-} ]]; then
		sed "s|$2|/tmp/t|g" "$1"
	else
		cat "$1"
	fi | awk '{ if (length > m) m = length } END { print m + 0 }'
}

# fits80 NAME FILE [LONG]: every line of FILE (a message on stderr) within
# the 80 columns of a terminal, LONG counted as msg_width counts it.
fits80() {
	local w
	w=$(msg_width "$2" "${3:-}")
	if [[ $w -le 80 ]]; then
		ok "$1/fits_80_columns ($w)"
	else
		fail "$1/fits_80_columns" "$w columns: $(cat "$2")"
	fi
}

# Skips the whole script. Under CI=true run.sh counts the skip as a failure:
# CI runs as root, so getting here there means the test setup is broken.
require_root() {
	if [[ $EUID -ne 0 ]]; then
		_lib_line "skip - $LIB_SCRIPT: needs root (running as uid $EUID)"
		exit 0
	fi
}

# Microseconds since the epoch; EPOCHREALTIME's separator follows the
# locale, so strip whatever it is (there are always 6 decimals).
_lib_now_us() {
	local t=$EPOCHREALTIME

	echo $((10#${t//[!0-9]/}))
}

# "2", "0.5", "1.25" -> microseconds.
_lib_us() {
	local s=$1 int frac

	int=${s%%.*}
	frac=
	[[ $s == *.* ]] && frac=${s#*.}
	frac=${frac}000000
	echo $((10#${int:-0} * 1000000 + 10#${frac:0:6}))
}

# wait_for CMD TIMEOUT_S: poll the shell condition CMD every 20 ms
# (WAIT_FOR_POLL_S) until it is true (returns 0) or TIMEOUT_S seconds have
# passed (returns 1). This is how tests wait for events: a fixed sleep is
# either too short on a loaded machine or wasted time on an idle one.
wait_for() {
	local cmd=$1 end

	end=$(($(_lib_now_us) + $(_lib_us "${2:-5}")))
	while :; do
		eval "$cmd" && return 0
		(($(_lib_now_us) >= end)) && return 1
		sleep "${WAIT_FOR_POLL_S:-0.02}"
	done
}

# ---- cleanup ----

_lib_exit_cmds=()

_lib_run_exit() {
	local rc=$? i

	# Each step once, whatever it does: pop before running, and let no
	# failure (or set -e) stop the rest. Cleanup output is not a result.
	set +eu
	for ((i = ${#_lib_exit_cmds[@]} - 1; i >= 0; i--)); do
		local cmd=${_lib_exit_cmds[i]}

		unset '_lib_exit_cmds[i]'
		eval "$cmd" >&2
	done
	[[ -n $_lib_tmp && -z $_lib_forked ]] && rm -rf "$_lib_tmp"
	_lib_tmp=
	exit "$rc"
}
_lib_forked=

trap _lib_run_exit EXIT
# Signals leave through exit, so the EXIT trap does the cleanup once.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# on_exit CMD: run the shell command CMD at exit (last registered, first run).
on_exit() {
	_lib_exit_cmds+=("$1")
}

# lib_fork CMD ARGS...: CMD (a shell function) in a background subshell
# that undoes what it registers with on_exit when it ends, however it
# ends (the script's own registrations stay the script's, and the scratch
# directory is shared); its pid in BG_PID, for wait, whose status the
# caller must judge: a crash in it ends only the subshell. For independent cases
# (namespaces, fixtures and agents of their own) that are mostly an agent
# loading its BPF programs, one core each: two at once on 2 cores.
lib_fork() {
	(
		_lib_exit_cmds=() _lib_forked=1
		trap _lib_run_exit EXIT
		trap 'exit 129' HUP
		trap 'exit 130' INT
		trap 'exit 143' TERM
		"$@"
	) &
	BG_PID=$!
	# The script ending first (a failure, a signal) stops it before the
	# shared scratch directory goes.
	on_exit "kill $BG_PID 2>/dev/null; wait $BG_PID 2>/dev/null"
}

# A private scratch directory, removed at exit. Made right here, in the
# script's own shell: lib_tmpdir is mostly called as $(lib_tmpdir), in a
# subshell, where making it would leave the exit trap unaware of it.
_lib_tmp=$(mktemp -d "${TMPDIR:-/tmp}/connscope-test.XXXXXX") || {
	echo "lib.sh: cannot make a scratch directory" >&2
	exit 1
}
lib_tmpdir() {
	echo "$_lib_tmp"
}

# jqn FILTER [FILE...]: jq -r, or "unparsable" when jq fails (a missing or
# broken report), so an assert_eq names the problem instead of comparing ''.
jqn() {
	jq -r "$@" 2>/dev/null || echo "unparsable"
}

# The state letter of a process (R, S, Z, ...); fails once it is gone. The
# comm field before it may hold spaces and parentheses: cut at the last ')'.
_lib_pstate() {
	local stat

	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	echo "${stat%% *}"
}

# All processes below pid, deepest last.
_lib_descendants() {
	local c

	for c in $(pgrep -P "$1"); do
		echo "$c"
		_lib_descendants "$c"
	done
}

# Stops pid and whatever it started (a shell function run by spawn_bg is a
# subshell whose children a TERM to it alone would orphan): TERM, up to 2 s
# to go, then KILL; then reaps pid. Only while pid is a running job of ours:
# once bash has collected it, the number may already belong to an unrelated
# process. kill -0 is no test for "gone" (a zombie still answers), hence the
# state from /proc.
_lib_reap() {
	local pid=$1 i state='' p
	local -a kids

	if ! jobs -rp | grep -qx "$pid"; then
		wait "$pid" 2>/dev/null
		return 0
	fi
	mapfile -t kids < <(_lib_descendants "$pid")
	kill -TERM "$pid" "${kids[@]}" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		state=$(_lib_pstate "$pid") ||
			{ state=''; break; }
		[[ $state == Z ]] && break
		sleep 0.02
	done
	[[ -n $state && $state != Z ]] && kill -KILL "$pid" 2>/dev/null
	# The orphans are not ours to reap; make sure they die, and give them
	# the same 2 s (shared) before the KILL.
	for p in "${kids[@]}"; do
		while ((i++ < 100)); do
			state=$(_lib_pstate "$p") ||
				{ state=''; break; }
			[[ $state == Z ]] && break
			sleep 0.02
		done
		[[ -n $state && $state != Z ]] && kill -KILL "$p" 2>/dev/null
	done
	wait "$pid" 2>/dev/null
	return 0
}

# Fds of the fixture pipes, which no child should inherit: a client holding
# the write end of the server's stdin would keep the server from ever seeing
# EOF there.
_lib_fix_fds=()

# Runs in the forked child: drop those fds, then become CMD (so $! is CMD's
# pid); a shell function runs in the subshell instead.
_lib_child() {
	local fd

	for fd in "${_lib_fix_fds[@]}"; do
		exec {fd}>&-
	done
	if declare -F "$1" >/dev/null; then
		"$@"
		exit
	fi
	exec "$@"
}

# spawn_bg CMD ARGS...: start CMD (a program or a shell function) in the
# background; at exit it gets SIGTERM, then SIGKILL after 2 s, and is
# reaped. Its pid is in BG_PID (and $!). Only that pid is signalled, so a
# CMD that forks must pass the signal on.
spawn_bg() {
	_lib_child "$@" &
	BG_PID=$!
	on_exit "_lib_reap $BG_PID"
}

# ---- line-driven fixtures (tcpfix) ----
#
# fix_start NAME CMD ARGS...: start CMD with its stdin and stdout on pipes
# to this shell (like a coproc, of which bash allows only one at a time).
# Then: fix_send NAME LINE writes a line, fix_expect NAME PATTERN [TIMEOUT_S]
# reads lines until one matches the glob PATTERN (extglob, so '@(ok*|error*)'
# works) and leaves it in FIX_LINE
# (nonzero on timeout or EOF; lines skipped on the way go to stderr).
# ${NAME}_PID is the pid; the process is stopped at exit.
fix_start() {
	local name=$1 dir in out fd_in fd_out pid
	shift

	dir=$(lib_tmpdir) || return 1
	in=$dir/$name.in
	out=$dir/$name.out
	rm -f "$in" "$out"
	mkfifo "$in" "$out" || return 1
	# Opening a FIFO blocks until the other side opens it too; the child
	# opens stdin then stdout, and so do we, so neither waits forever.
	# Plain one-way opens, so a dead fixture reads as EOF here at once.
	_lib_child "$@" <"$in" >"$out" &
	pid=$!
	exec {fd_in}>"$in" {fd_out}<"$out"
	_lib_fix_fds+=("$fd_in" "$fd_out")
	printf -v "${name}_PID" %s "$pid"
	printf -v "_fix_in_$name" %s "$fd_in"
	printf -v "_fix_out_$name" %s "$fd_out"
	# EOF on its stdin first: tcpfix then exits by itself.
	on_exit "_lib_fix_close $name; _lib_reap $pid"
}

_lib_fix_close() {
	local in=_fix_in_$1 out=_fix_out_$1 fd

	fd=${!in}
	[[ -n $fd ]] && exec {fd}>&-
	fd=${!out}
	[[ -n $fd ]] && exec {fd}<&-
	printf -v "$in" %s ""
	printf -v "$out" %s ""
}

fix_send() {
	local var=_fix_in_$1

	printf '%s\n' "$2" >&"${!var}"
}

# Closing stdin: for tcpfix, the same as `exit`.
fix_eof() {
	local var=_fix_in_$1 fd

	fd=${!var}
	[[ -n $fd ]] && exec {fd}>&-
	printf -v "$var" %s ""
}

fix_expect() {
	local var=_fix_out_$1 pat=$2 end now line

	end=$(($(_lib_now_us) + $(_lib_us "${3:-10}")))
	FIX_LINE=
	while :; do
		now=$(_lib_now_us)
		((now < end)) || return 1
		# read -t takes seconds with a fraction.
		if ! read -r -t "$(printf '%d.%06d' $(((end - now) / 1000000)) $(((end - now) % 1000000)))" \
				-u "${!var}" line; then
			return 1
		fi
		# shellcheck disable=SC2053 # PATTERN is a glob on purpose
		if [[ $line == $pat ]]; then
			# shellcheck disable=SC2034 # the result, for the caller
			FIX_LINE=$line
			return 0
		fi
		echo "$1: $line" >&2
	done
}

# fix_cmd NAME LINE PATTERN [TIMEOUT_S]: send a command, wait for its reply.
fix_cmd() {
	fix_send "$1" "$2" && fix_expect "$1" "$3" "${4:-10}"
}

# ---- system ----

# new_netns NAME: a network namespace with lo up, deleted at exit.
new_netns() {
	ip netns add "$1" || return 1
	on_exit "ip netns delete '$1' 2>/dev/null"
	ip -n "$1" link set lo up
}

# http_get PORT PATH: the response body (headers dropped), HTTP/1.0, from
# a server on 127.0.0.1.
http_get() {
	local fd
	exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&"$fd"
	timeout 5 cat <&"$fd" | tr -d '\r' | sed '1,/^$/d'
	exec {fd}>&-
}

# free_port [-6]: a loopback TCP port that is free right now. Racy as any
# such scheme; where the server can bind port 0 itself (tcpfix server
# without -p), prefer that.
free_port() {
	"$FIXTURES/tcpfix" freeport "$@"
}
