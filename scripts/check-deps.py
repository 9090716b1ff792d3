#!/usr/bin/env python3
"""Checks every #include of forgek's src/ and include/ against the module dependency rule.

The rule (which module may include which) is read from scripts/module-deps.txt; each violation is
one line `file:line: module X may not include Y (rule: X -> A B)`. Exit 0: none, 1: violations,
2: usage or an unreadable rule file.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def load_rules(path):
    """Returns (edges, owners): module -> allowed modules, public header stem -> module."""
    edges, owners = {}, {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(edge|owns)\s+([a-z_]+)\s*:\s*(.*)", line)
            if not m:
                raise ValueError(f"{path}:{number}: expected 'edge M: ...' or 'owns M: ...'")
            kind, module, rest = m.group(1), m.group(2), m.group(3).split()
            if kind == "edge":
                if module in edges:
                    raise ValueError(f"{path}:{number}: module {module} has two edge lines")
                edges[module] = set(rest)
            else:
                for stem in rest:
                    if stem in owners:
                        raise ValueError(f"{path}:{number}: header {stem}.h has two owners")
                    owners[stem] = module
    for module in set(owners.values()) | {d for ds in edges.values() for d in ds}:
        if module not in edges:
            raise ValueError(f"{path}: module {module} is used but has no edge line")
    return edges, owners


def module_of_header(include, including_module, owners):
    """The module an include names, or None for a header that is not forgek's."""
    parts = include.split("/")
    if len(parts) == 1:
        return including_module  # a header beside the including file
    if parts[0] == "forgek" and len(parts) == 2:
        stem = parts[1][:-2] if parts[1].endswith(".h") else parts[1]
        return owners.get(stem, "?" + include)
    return parts[0]


def sources(root):
    """(path relative to root, module) for every C++/CUDA file of src/ and include/forgek/."""
    out = []
    src = os.path.join(root, "src")
    for dirpath, _, files in os.walk(src):
        rel_dir = os.path.relpath(dirpath, src)
        for name in sorted(files):
            if not name.endswith((".h", ".cc", ".cu", ".cuh")):
                continue
            module = "main" if rel_dir == "." else rel_dir.split(os.sep)[0]
            out.append((os.path.relpath(os.path.join(dirpath, name), root), module))
    pub = os.path.join(root, "include", "forgek")
    if os.path.isdir(pub):
        for name in sorted(os.listdir(pub)):
            if name.endswith(".h"):
                out.append((os.path.join("include", "forgek", name), None))
    return sorted(out)


def check(root, rules_path):
    edges, owners = load_rules(rules_path)
    rule_text = lambda m: f"{m} -> {' '.join(sorted(edges[m])) or '(nothing)'}"
    violations = []
    for rel, module in sources(root):
        if module is None:  # a public header belongs to the module that owns it
            stem = os.path.basename(rel)[:-2]
            module = owners.get(stem)
            if module is None:
                violations.append(f"{rel}:1: public header {stem}.h has no owner (add it to an 'owns' line)")
                continue
        if module not in edges:
            violations.append(f"{rel}:1: module {module} is not in the rule (add an 'edge {module}:' line)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = module_of_header(m.group(1), module, owners)
                if target is None or target == module or target in edges[module]:
                    continue
                if target.startswith("?"):
                    violations.append(f"{rel}:{number}: {m.group(1)} has no owning module")
                else:
                    violations.append(f"{rel}:{number}: module {module} may not include {target} "
                                      f"(rule: {rule_text(module)})")
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
        print(f"check-deps: {len(violations)} include(s) against the dependency rule ({rules})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
