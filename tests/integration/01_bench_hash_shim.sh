#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# `make bench` links the books against tests/bench/hashmap_uthash.c in
# place of user/lib/hashmap.c (aggbench-uthash, comparison 8): every hmap_
# function the built books objects call must be defined there, or the
# bench fails to build on a fresh clone (it did once the books first
# called hmap_upsert_hint). Needs no uthash: reads the objects with nm.
source "$TESTS_DIR/lib.sh"
cd "$REPO_ROOT" || exit 1

objs=(.output/user/books/*.o)
if [[ ! -e ${objs[0]} ]]; then
	fail books_built "no .output/user/books/*.o (make all)"
	exit 1
fi
called=$(nm -u "${objs[@]}" 2>/dev/null | awk '$2 ~ /^hmap_/ {print $2}' | sort -u)
defined=$(grep -oE '^[a-z].*\bhmap_[a-z_]+\(' tests/bench/hashmap_uthash.c | grep -oE 'hmap_[a-z_]+' | sort -u)
assert_eq "$([[ -n $called ]] && echo yes)" yes books_call_the_table
assert_eq "$(comm -23 <(echo "$called") <(echo "$defined") | tr '\n' ' ')" "" every_call_in_the_uthash_shim
