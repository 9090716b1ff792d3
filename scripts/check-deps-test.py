#!/usr/bin/env python3
"""Tests scripts/check-deps.py: a tree with planted bad includes (a forbidden module, another
module's private header, a climb out with "../") or an unused edge fails with one line naming the
file, the line and the rule; the same tree without them passes; and docs/ARCHITECTURE.md shows the
rule file's edges exactly as the check reads them."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHECK = os.path.join(HERE, "check-deps.py")
RULES = os.path.join(HERE, "module-deps.txt")


def run(root):
    p = subprocess.run([sys.executable, CHECK, "--root", root, "--rules", RULES], capture_output=True, text=True)
    return p.returncode, p.stdout


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as root:
        # A clean tree that uses every edge of the rule once (the check reports unused edges).
        with open(RULES, encoding="utf-8") as f:
            for line in f:
                m = re.fullmatch(r"edge ([a-z_]+):([^#]*)", line.split("#", 1)[0].strip())
                if not m:
                    continue
                module, deps = m.group(1), m.group(2).split()
                write(root, f"include/forgek/{module}/{module}_api.h", "#pragma once\n")
                body = "".join(f'#include "forgek/{d}/{d}_api.h"\n' for d in deps)
                write(root, f"src/{module}/{module}_uses.cc" if module != "main" else "src/main.cc", body)
        write(root, "src/knowledge/sql.h", "#pragma once\n")
        write(root, "src/knowledge/store.cc", '#include "forgek/knowledge/knowledge_api.h"\n#include "sql.h"\n#include <vector>\n')
        rc, out = run(root)
        expect(rc == 0 and out == "", f"a clean tree must pass: rc {rc}, output {out!r}")

        # The planted bad includes: knowledge may not know the run loop, core may not know the store,
        # run may not open knowledge's private header, nobody climbs out with "../".
        write(root, "src/knowledge/distill.cc", '// distil\n#include "sql.h"\n#include "forgek/run/run_api.h"\n')
        write(root, "src/core/expr.cc", '#include "forgek/core/core_api.h"\n  #  include "forgek/knowledge/knowledge_api.h"\n')
        write(root, "src/run/run_loop.cc", '#include "knowledge/sql.h"\n#include "../knowledge/sql.h"\n')
        rc, out = run(root)
        lines = out.splitlines()
        expect(rc == 1, f"a planted bad include must fail: rc {rc}")
        expect(len(lines) == 4, f"one line per violation, got {lines}")
        expect(any(re.fullmatch(r"src/knowledge/distill\.cc:3: module knowledge may not include run \(rule: knowledge -> .*\)", l)
                   for l in lines), f"the knowledge -> run violation with file and line: {lines}")
        expect(any(l.startswith("src/core/expr.cc:2: module core may not include knowledge") for l in lines),
               f"the core -> knowledge violation with file and line: {lines}")
        expect("src/run/run_loop.cc:1: knowledge/sql.h is a private header of module knowledge" in lines,
               f"a private header of another module: {lines}")
        expect(any(l.startswith("src/run/run_loop.cc:2: ../knowledge/sql.h climbs out") for l in lines),
               f"an include that climbs out of its folder: {lines}")

        # A module the rule does not know, a public header outside a module folder and an edge no
        # include uses are violations too.
        for rel in ("src/knowledge/distill.cc", "src/core/expr.cc", "src/run/run_loop.cc", "src/eval/eval_uses.cc"):
            os.remove(os.path.join(root, rel))
        write(root, "src/plugin/plugin.cc", '#include "forgek/knowledge/knowledge_api.h"\n')
        write(root, "include/forgek/orphan.h", "#pragma once\n")
        rc, out = run(root)
        expect(rc == 1 and "module plugin is not in the rule" in out
               and "include/forgek/orphan.h:1: a public header belongs in include/forgek/<module>/" in out
               and re.search(r"module-deps\.txt:\d+: module eval includes nothing of protocol: remove the edge", out),
               f"unknown module, header outside a module, unused edge: rc {rc}, output {out!r}")

    # The real tree passes.
    p = subprocess.run([sys.executable, CHECK, "--root", ROOT], capture_output=True, text=True)
    expect(p.returncode == 0, f"the repository must pass the check:\n{p.stdout}{p.stderr}")

    # docs/ARCHITECTURE.md shows the same edges as the rule file.
    def edges(text):
        return sorted(re.sub(r"\s+", " ", m.group(0)).strip()
                      for m in re.finditer(r"^edge [a-z_]+:[^\n#]*", text, re.M))
    with open(RULES, encoding="utf-8") as f:
        rule_edges = edges(f.read())
    with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        doc_edges = edges(f.read())
    expect(rule_edges and rule_edges == doc_edges,
           f"docs/ARCHITECTURE.md must show the edges of scripts/module-deps.txt:\n{rule_edges}\n!=\n{doc_edges}")

    for f in failures:
        print("FAIL: " + f)
    print(f"check-deps-test: {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
