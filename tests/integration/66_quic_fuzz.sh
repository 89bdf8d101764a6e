#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The QUIC parser's user-space twin under libFuzzer (ASan + UBSan), for a
# bounded time, seeded with the datagrams recorded from ngtcp2 (each with
# the short-header DCID hints of that capture, 17 and 18). A crash, a bad
# read or a broken invariant (tests/fuzz/fuzz_quic_parse.c) fails it.
set -u
source "$TESTS_DIR/lib.sh"

FUZZ=$REPO_ROOT/.output/fuzz/fuzz_quic_parse
if [[ ! -x $FUZZ ]]; then
	fail built "$FUZZ missing (make .output/fuzz/fuzz_quic_parse; needs libclang-rt-14-dev)"
	exit 1
fi
TMP=$(lib_tmpdir)
mkdir -p "$TMP/corpus"
n=0
for f in "$REPO_ROOT"/tests/data/quic/*.bin; do
	for hint in '\x11' '\x12'; do
		{ printf "$hint"; cat "$f"; } >"$TMP/corpus/$((n++))"
	done
done
assert_eq "$n" 22 seeds
# -runs bounds the work; -max_total_time bounds the time on a slow machine.
"$FUZZ" -runs="${FUZZ_RUNS:-300000}" -max_total_time="${FUZZ_SECONDS:-30}" -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$TMP/" "$TMP/corpus" >"$TMP/log" 2>&1
rc=$?
if ((rc == 0)) && grep -q '^Done [0-9]* runs' "$TMP/log"; then
	ok "fuzz/$(grep -o '^Done [0-9]* runs' "$TMP/log" | tr ' ' _)"
else
	fail fuzz "libFuzzer exit $rc: $(grep -m3 -E 'ERROR|SUMMARY|abort|Done' "$TMP/log" | tr '\n' ' ')"
fi
