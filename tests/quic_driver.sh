#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# QUIC client driver for tests/integration/65_quic.sh: a long-lived process
# that connscope traces with --children, running Debian's ngtcp2 example
# client (gtlsclient) on command, so every client is a traced child.
# Prints "ready PID", then answers each command line with one line:
#	seq N PORT [CLIENT_ARGS...]   N clients one after another -> "done FAILED"
#	par N P PORT [CLIENT_ARGS...] N clients, P at a time     -> "done FAILED"
#	quit
# Clients talk to 127.0.0.1:PORT; a client that exits nonzero is FAILED.
set -u
client() {
	local port=$1
	shift
	exec gtlsclient -q --exit-on-all-streams-close "$@" 127.0.0.1 "$port" \
		"https://127.0.0.1:$port/index.html" >/dev/null 2>&1 </dev/null
}
export -f client
echo "ready $$"
while read -r cmd n rest; do
	case $cmd in
	seq)
		failed=0
		for ((i = 0; i < n; i++)); do
			# shellcheck disable=SC2086
			(client $rest) || failed=$((failed + 1))
		done
		echo "done $failed"
		;;
	par)
		read -r p rest <<<"$rest"
		failed=$(seq "$n" | xargs -P "$p" -I{} bash -c "client $rest || echo x" | wc -l)
		echo "done $failed"
		;;
	quit) exit 0 ;;
	*) echo "error unknown command $cmd" ;;
	esac
done
