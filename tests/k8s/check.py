#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""check.py NODE_DIR MANIFEST...: an offline schema check of Kubernetes
manifests against the Kubernetes API's own types (npm kubernetes-models,
generated from the API's OpenAPI; installed in NODE_DIR from this folder's
package.json and package-lock.json).

Each YAML document becomes a TypeScript constant typed by its kind, which
tsc --strict checks: a field the API does not have (a typo such as hostPid
is an error: TypeScript's excess-property check), a value of the wrong
type, a required field missing. The compiled file then runs each
document through kubernetes-models' validators (formats and patterns, e.g.
int32 ports). One line per problem, named by file, document and kind;
exit 1 if any."""
import json
import re
import subprocess
import sys

import yaml

# apiVersion, kind -> module, interface, class: the kinds deploy/ uses.
KINDS = {
    ("v1", "Namespace"): ("kubernetes-models/v1/Namespace", "INamespace", "Namespace"),
    ("v1", "Pod"): ("kubernetes-models/v1/Pod", "IPod", "Pod"),
    ("v1", "Service"): ("kubernetes-models/v1/Service", "IService", "Service"),
    ("apps/v1", "DaemonSet"): ("kubernetes-models/apps/v1/DaemonSet", "IDaemonSet", "DaemonSet"),
}


def main():
    node_dir, files = sys.argv[1], sys.argv[2:]
    imports, body, bad = set(), [], []
    for f in files:
        with open(f) as fh:
            docs = [d for d in yaml.safe_load_all(fh) if d is not None]
        for i, d in enumerate(docs, 1):
            name = f"{f} document {i} ({d.get('kind')} {d.get('metadata', {}).get('name')})"
            k = KINDS.get((d.get("apiVersion"), d.get("kind")))
            if not k:
                bad.append(f"{name}: apiVersion/kind not known to this check (add it to KINDS)")
                continue
            mod, iface, cls = k
            imports.add(f'import {{ {cls}, type {iface} }} from "{mod}";')
            n = len(body)
            body.append((name, f"const d{n}: {iface} = {json.dumps(d)};\n"
                               f"check({json.dumps(name)}, () => new {cls}(d{n}).validate());"))
    src = sorted(imports) + [
        "declare const process: { exit(code: number): never };",
        "let failed = 0;",
        "function check(name: string, f: () => void) {",
        "  try { f(); } catch (e) { failed++; console.log(`${name}: ${(e as Error).message}`); }",
        "}",
    ]
    line_name = {}
    for name, code in body:
        line_name[len(src) + 1] = name  # the const's line (1-based)
        src += code.split("\n")
    src.append("process.exit(failed ? 1 : 0);")
    with open(f"{node_dir}/check.mts", "w") as fh:
        fh.write("\n".join(src) + "\n")
    tsc = subprocess.run(
        [f"{node_dir}/node_modules/.bin/tsc", "--strict", "--noEmitOnError",
         "--module", "node16", "--moduleResolution", "node16", "--target", "es2020",
         "--skipLibCheck", "--outDir", f"{node_dir}/out", f"{node_dir}/check.mts"],
        capture_output=True, text=True)
    for ln in (tsc.stdout + tsc.stderr).splitlines():
        m = re.match(r".*check\.mts\((\d+),(\d+)\): error (TS\d+: .*)", ln)
        if m:
            bad.append(f"{line_name.get(int(m.group(1)), 'line ' + m.group(1))}: {m.group(3)}")
        elif ln.strip() and not ln.startswith(" "):
            bad.append(f"tsc: {ln}")
    if tsc.returncode == 0:
        run = subprocess.run(["node", f"{node_dir}/out/check.mjs"], capture_output=True, text=True)
        bad += [ln for ln in (run.stdout + run.stderr).splitlines() if ln.strip()]
        if run.returncode and not (run.stdout + run.stderr).strip():
            bad.append(f"node: exit {run.returncode}")
    elif not bad:
        bad.append(f"tsc: exit {tsc.returncode}")
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
