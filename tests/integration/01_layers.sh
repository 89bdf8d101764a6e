#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The architecture holds (docs/how-it-works.md, "Architecture"): no circle between the
# objects of user/, every object uses only its own and lower layers, every
# lib/books/render #include names a header of an allowed layer, and none of
# them a sources header (cmd alone joins sources to books and renderers), no
# source file outside the layer folders, no two files (a .c with its .h) that
# include each other's headers (directly or round others), no x_internal.h
# included from outside its folder. Reads the built objects with nm.
cd "$REPO_ROOT" || exit 1
exec python3 tests/layers.py .output
