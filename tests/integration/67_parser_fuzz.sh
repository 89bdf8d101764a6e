#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The parsers of outside data under libFuzzer (ASan + UBSan), each for a
# bounded number of runs, seeded from tests/fuzz/corpus/<target> (real
# replies and files recorded on a 6.x kernel, plus every input that once
# crashed one): netlink sock_diag replies (fuzz_sockdiag), the /proc and
# /proc/sys files (fuzz_procfs), a /proc/PID fd table with its fdinfo and
# net tables (fuzz_fdinv). A crash, a bad read or a broken invariant fails
# it. `make fuzz` runs each for FUZZ_SECONDS (default 600).
set -u
source "$TESTS_DIR/lib.sh"

TMP=$(lib_tmpdir)
SECONDS_EACH=${FUZZ_SECONDS:-20}
# Runs each, unless FUZZ_RUNS says. The /proc targets write each input out
# as files, far slower than sock_diag's: 10,000 is more than CI ran of
# them in their 20 s on disk (7,397 and 8,934), and takes ~6 s on tmpfs.
declare -A RUNS_OF=([fuzz_sockdiag]=200000 [fuzz_procfs]=10000 [fuzz_fdinv]=10000)
# The fake /proc trees on tmpfs where there is one: on a disk file system
# the files' writes are most of a run (fuzz_procfs did 372 runs in 5 s with
# its tree under /tmp, 1,732 under /dev/shm; fuzz_fdinv 182 and 672, the
# same loaded machine).
FAKE=$TMP
if [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] &&
	shm=$(mktemp -d /dev/shm/connscope-fuzz.XXXXXX 2>/dev/null); then
	FAKE=$shm
	on_exit "rm -rf '$shm'"
fi

for target in fuzz_sockdiag fuzz_procfs fuzz_fdinv; do
	bin=$REPO_ROOT/.output/fuzz/$target
	if [[ ! -x $bin ]]; then
		fail "$target/built" "$bin missing (make $bin; needs libclang-rt-14-dev)"
		continue
	fi
	seeds=$REPO_ROOT/tests/fuzz/corpus/$target
	n=$(find "$seeds" -type f | wc -l)
	if ((n < 1)); then
		fail "$target/seeds" "no seeds in $seeds"
		continue
	fi
	# A working copy: libFuzzer adds what it finds to its first corpus
	# directory, and the checked-in one stays as it is.
	mkdir -p "$TMP/$target"
	cp "$seeds"/* "$TMP/$target/"
	# The fake /proc trees go under TMPDIR, removed at exit.
	TMPDIR=$FAKE "$bin" -runs="${FUZZ_RUNS:-${RUNS_OF[$target]}}" -max_total_time="$SECONDS_EACH" -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$TMP/$target-" "$TMP/$target" \
		>"$TMP/$target.log" 2>&1
	rc=$?
	if ((rc == 0)) && grep -q '^Done [0-9]* runs' "$TMP/$target.log"; then
		ok "$target/$(grep -o '^Done [0-9]* runs' "$TMP/$target.log" | tr ' ' _)"
	else
		crash=$(ls "$TMP/$target-"* 2>/dev/null | head -1)
		[[ -n $crash ]] && cp "$crash" "$REPO_ROOT/.output/fuzz/" 2>/dev/null
		fail "$target" "libFuzzer exit $rc (input kept in .output/fuzz/): $(grep -m3 -E 'ERROR|SUMMARY|abort|Done' "$TMP/$target.log" | tr '\n' ' ')"
	fi
done
