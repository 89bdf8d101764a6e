#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The architecture as the linker sees it (docs/how-it-works.md, "Architecture").

    tests/layers.py OBJDIR

reads every object under OBJDIR/user (nm), links each undefined symbol to
the object that defines it, and prints one test line per rule:

- no circle: no two objects need each other, directly or through others
  (a strongly connected component of more than one object is a circle);
- one way: an object uses only objects of its own layer and the layers
  below it: lib <- books <- {sources, render} <- cmd;
- sources stay behind cmd: no file of lib, books or render includes a
  header of user/sources/ (or a BPF skeleton), so cmd is the one layer
  that joins the kernel's readers to the books and the renderers;
- no include circle: a file and its header (x.c, x.h) are one unit, and
  no two units include each other's headers, directly or through others
  (x.c includes y.h while y.c or y.h includes x.h); the objects can be
  free of circles while the declarations still go round, which is how
  the next split of a big file turns into an object circle;
- internal headers stay inside: an x_internal.h is included only by the
  files of its own folder.

The Makefile's per-layer include paths stop a wrong-way #include at
compile time; this catches what an include cannot show: a function
declared in one layer's header and defined in another, or two files of
one layer calling each other.
"""
import os
import subprocess
import sys

# What each layer may use besides itself.
ALLOWED = {
    "lib": {"lib"},
    "books": {"books", "lib"},
    "sources": {"sources", "books", "lib"},
    "render": {"render", "books", "lib"},
    "cmd": {"cmd", "sources", "render", "books", "lib"},
}


def layer_of(rel):
    """user/render/html/x.o -> render; user/books/x.o -> books."""
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 else "?"


def symbols(path):
    out = subprocess.run(["nm", "--defined-only", "-g", path], capture_output=True, text=True,
                         check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "--undefined-only", "-g", path], capture_output=True, text=True,
                         check=True).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, undefined


def components(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def include_check(repo):
    """Every quoted #include of a lib, books or render file names a header
    of an allowed layer (or include/abi), and no .c sits in user/ itself.
    Also returns those of the includes that name a sources header (one that
    only user/sources/ has, or a BPF skeleton), and how many were read."""
    headers = {}
    for d, _, files in os.walk(os.path.join(repo, "user")):
        for f in files:
            if f.endswith(".h"):
                headers.setdefault(f, []).append(layer_of(os.path.relpath(os.path.join(d, f), repo)))
    abi = set(os.listdir(os.path.join(repo, "include", "abi")))
    wrong, loose, to_sources, seen = [], [], [], 0
    for d, _, files in os.walk(os.path.join(repo, "user")):
        for f in files:
            path = os.path.relpath(os.path.join(d, f), repo)
            ln = layer_of(path)
            if ln == "?" and f.endswith((".c", ".h")):
                loose.append(path)
            if ln == "cmd" or not f.endswith((".c", ".h")):
                continue
            with open(os.path.join(repo, path)) as fh:
                for line in fh:
                    line = line.strip()
                    if not line.startswith('#include "'):
                        continue
                    h = line.split('"')[1]
                    seen += ln != "sources"
                    if ln != "sources" and (h.endswith(".skel.h") or
                                            headers.get(h) == ["sources"]):
                        to_sources.append(f"{path}: {h}")
                    if h in abi or h.endswith(".skel.h") and ln == "sources":
                        continue
                    if not any(l in ALLOWED[ln] for l in headers.get(h, [])):
                        wrong.append(f"{path}: {h}")
    return wrong, loose, to_sources, seen


def include_graph(repo):
    """Units (a path without .c/.h: a file and its header are one) and, for
    each, the units whose headers it includes, with the #include lines that
    make each edge. Headers are found by name, as the build's -I folders
    find them; system and include/abi headers are no unit of user/."""
    headers = {}
    for d, _, files in os.walk(os.path.join(repo, "user")):
        for f in files:
            if f.endswith(".h"):
                headers.setdefault(f, []).append(os.path.relpath(os.path.join(d, f), repo))
    edges, why, internal = {}, {}, []
    for d, _, files in os.walk(os.path.join(repo, "user")):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.relpath(os.path.join(d, f), repo)
            unit = path[:-2]
            edges.setdefault(unit, set())
            with open(os.path.join(repo, path)) as fh:
                for line in fh:
                    line = line.strip()
                    if not line.startswith('#include "'):
                        continue
                    h = os.path.basename(line.split('"')[1])
                    for hp in headers.get(h, []):
                        if h.endswith("_internal.h") and os.path.dirname(hp) != os.path.relpath(d, repo):
                            internal.append(f"{path}: {h}")
                        if hp[:-2] == unit:
                            continue
                        edges[unit].add(hp[:-2])
                        edges.setdefault(hp[:-2], set())
                        why.setdefault((unit, hp[:-2]), f"{path} includes {h}")
    return edges, why, internal


def include_circles(repo):
    """The include circles, each as the #include lines that close it."""
    edges, why, internal = include_graph(repo)
    out = []
    for comp in components(edges.keys(), edges):
        if len(comp) < 2:
            continue
        inside = set(comp)
        out.append(", ".join(why[(u, v)] for u in comp for v in sorted(edges[u]) if v in inside))
    return out, len(edges), internal


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else ".output"
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    wrong, loose, to_sources, seen = include_check(repo)
    print(("not ok - layers/includes: " + "; ".join(wrong)) if wrong else "ok - layers/includes")
    print(("not ok - layers/sources_only_via_cmd: lib/books/render include a sources header: " +
           "; ".join(to_sources)) if to_sources else
          f"ok - layers/sources_only_via_cmd (books, render, lib: {seen} includes, "
          "none of a sources header)")
    print(("not ok - layers/no_loose_files: " + ", ".join(loose)) if loose
          else "ok - layers/no_loose_files")
    inc_circles, nunits, internal = include_circles(repo)
    print(("not ok - layers/no_include_circle: " + "; ".join(inc_circles)) if inc_circles
          else f"ok - layers/no_include_circle ({nunits} units)")
    print(("not ok - layers/internal_headers_inside: included from another folder: " +
           "; ".join(internal)) if internal else "ok - layers/internal_headers_inside")
    objs = []
    for d, _, files in os.walk(os.path.join(root, "user")):
        objs += [os.path.join(d, f) for f in files if f.endswith(".o")]
    # Only objects of sources that exist: a stale object of a moved file is not the tree.
    objs = [o for o in objs
            if os.path.exists(os.path.join(repo, os.path.relpath(o, root)[:-2] + ".c"))]
    if not objs:
        print(f"not ok - layers/objects: no objects under {root}/user (build first)")
        return 1
    rel = {o: os.path.relpath(o, root)[:-2] for o in objs}
    definer, needs = {}, {}
    for o in objs:
        defined, undefined = symbols(o)
        for s in defined:
            definer[s] = rel[o]
        needs[rel[o]] = undefined
    edges = {n: set() for n in needs}
    for n, und in needs.items():
        for s in und:
            d = definer.get(s)
            if d and d != n:
                edges[n].add(d)
    failed = bool(wrong) + bool(loose) + bool(to_sources) + bool(inc_circles) + bool(internal)
    circles = [c for c in components(edges.keys(), edges) if len(c) > 1]
    if circles:
        failed += 1
        print("not ok - layers/no_circle: " +
              "; ".join(" <-> ".join(c) for c in circles))
    else:
        print(f"ok - layers/no_circle ({len(edges)} objects)")
    wrong = []
    for n in sorted(edges):
        ln = layer_of(n)
        for d in sorted(edges[n]):
            if layer_of(d) not in ALLOWED.get(ln, set()):
                wrong.append(f"{n} -> {d}")
    if wrong:
        failed += 1
        print("not ok - layers/one_way: " + "; ".join(wrong))
    else:
        print("ok - layers/one_way")
    unknown = sorted(n for n in edges if layer_of(n) not in ALLOWED)
    if unknown:
        failed += 1
        print("not ok - layers/known_layer: objects outside the layers: " + ", ".join(unknown))
    else:
        print("ok - layers/known_layer")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
