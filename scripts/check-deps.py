#!/usr/bin/env python3
"""Checks every #include of forgek's src/ and include/ against the module dependency rule.

The rule (which module may include which) is read from scripts/module-deps.txt. A module's public
headers are include/forgek/<module>/, its private ones src/<module>/ (the build keeps those private:
they are on no other module's include path). Each violation is one line `file:line: ...`:
an include of a module the rule does not allow, an include that climbs out of its folder ("../"),
and an edge of the rule that no include uses (the rule lists the edges used, no more).
Exit 0: none, 1: violations, 2: usage or an unreadable rule file.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def load_rules(path):
    """Returns (edges, lines): module -> allowed modules, module -> its line number in the rule file."""
    edges, lines = {}, {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"edge\s+([a-z_]+)\s*:\s*(.*)", line)
            if not m:
                raise ValueError(f"{path}:{number}: expected 'edge M: A B ...'")
            module = m.group(1)
            if module in edges:
                raise ValueError(f"{path}:{number}: module {module} has two edge lines")
            edges[module], lines[module] = set(m.group(2).split()), number
    for module in {d for ds in edges.values() for d in ds}:
        if module not in edges:
            raise ValueError(f"{path}: module {module} is used but has no edge line")
    return edges, lines


def module_of_include(include, including_module):
    """The module an include names: forgek/<m>/x.h is m's public header, x.h is beside the file,
    <m>/x.h is m's private header (which only m's own tests may spell so)."""
    parts = include.split("/")
    if len(parts) == 1:
        return including_module
    if parts[0] == "forgek" and len(parts) == 3:
        return parts[1]
    if parts[0] == "forgek":
        return "?" + include
    return parts[0]


def sources(root):
    """(path relative to root, module) for every C++/CUDA file of src/ and include/forgek/."""
    out = []
    for top, depth in (("src", 0), (os.path.join("include", "forgek"), 0)):
        base = os.path.join(root, top)
        for dirpath, _, files in os.walk(base):
            rel_dir = os.path.relpath(dirpath, base)
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".cu", ".cuh")):
                    continue
                if rel_dir == ".":
                    module = "main" if top == "src" else None
                else:
                    module = rel_dir.split(os.sep)[0]
                out.append((os.path.relpath(os.path.join(dirpath, name), root), module))
    return sorted(out)


def check(root, rules_path):
    edges, rule_lines = load_rules(rules_path)
    rule_text = lambda m: f"{m} -> {' '.join(sorted(edges[m])) or '(nothing)'}"
    violations, used = [], set()
    for rel, module in sources(root):
        if module is None:
            violations.append(f"{rel}:1: a public header belongs in include/forgek/<module>/")
            continue
        if module not in edges:
            violations.append(f"{rel}:1: module {module} is not in the rule (add an 'edge {module}:' line)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                include = m.group(1)
                if ".." in include.split("/"):
                    violations.append(f"{rel}:{number}: {include} climbs out of its folder "
                                      "(include a public header as forgek/<module>/x.h)")
                    continue
                target = module_of_include(include, module)
                if target == module:
                    continue
                if target.startswith("?"):
                    violations.append(f"{rel}:{number}: {include} is not under include/forgek/<module>/")
                elif not include.startswith("forgek/"):
                    violations.append(f"{rel}:{number}: {include} is a private header of module {target}")
                elif target in edges[module]:
                    used.add((module, target))
                else:
                    violations.append(f"{rel}:{number}: module {module} may not include {target} "
                                      f"(rule: {rule_text(module)})")
    for module in sorted(edges):
        for target in sorted(edges[module] - {t for m, t in used if m == module}):
            violations.append(f"{rules_path}:{rule_lines[module]}: module {module} includes nothing of "
                              f"{target}: remove the edge")
    return violations


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(here), help="the tree to check (default: this repository)")
    parser.add_argument("--rules", help="the rule file (default: ROOT/scripts/module-deps.txt)")
    args = parser.parse_args()
    rules = args.rules or os.path.join(args.root, "scripts", "module-deps.txt")
    try:
        violations = check(args.root, rules)
    except (OSError, ValueError) as e:
        print(f"check-deps: {e}", file=sys.stderr)
        return 2
    for v in violations:
        print(v)
    if violations:
        print(f"check-deps: {len(violations)} violation(s) of the dependency rule ({rules})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
