#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Other kernels than this one: Debian 12's own 6.1 (no sock_send_length)
# and its newest 6.12, booted in QEMU from Debian's packages with the
# initramfs make builds; inside, attach, summary and fdleak smoke tests
# with exact counts (tests/kernels/guest.sh). Their results are relayed
# here; a guest that cannot be fetched, boot or finish is a failure.
# CONNSCOPE_KERNELS="6.1 6.12" chooses the series.
# test-timeout: 660
# The guests take both cores (TCG): tests/run.sh runs nothing in the
# background beside them.
# quiet: yes
set -u
source "$TESTS_DIR/lib.sh"

initramfs=$REPO_ROOT/.output/initramfs.cpio.gz
[[ -s $initramfs ]] || { fail initramfs "missing $initramfs (make test builds it)"; exit 0; }
# shellcheck disable=SC2086
LIB_SCRIPT=$LIB_SCRIPT "$TESTS_DIR/kernels/run.sh" "$initramfs" ${CONNSCOPE_KERNELS:-6.1 6.12}
rc=$?
# run.sh reports its own failures as "not ok" lines, then exits 1.
exit "$rc"
