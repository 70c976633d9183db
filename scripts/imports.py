#!/usr/bin/env python3
"""Which files of a crate import which: circles of imports, and files that are too long.

Reads every .rs file under each crate's src/ (crates/*/src by default, or the crate folders
given), maps each file to its module (lib.rs or main.rs: the root; a/mod.rs: a; a/b.rs: a::b),
and finds every path into the crate in code outside comments and strings: `crate::a::b`,
`super::x` and `self::x` (in `use` lines and inline), resolved to the longest module prefix that
is a file of the crate. A file that names another file's module depends on it.

It prints, per crate: the circles (strongly connected components) of more than --max-circle
files (default 2: a module and its parent may name each other), each with its files and the
imports that close it, and the files over --max-lines lines (default 800) whose first doc lines
do not say why in a sentence that begins "This file is long" (e.g. "//! This file is long
because ...").

A hub is a file whose first doc lines say why every file around it names it and it names them,
in a sentence that begins "This file is a hub" (a trait whose methods return the adapters that
implement it: a trait cannot name a type it does not see, and an impl cannot name a trait it
does not see). A circle through hubs is accepted only if, without the hubs, none of its files
are left in a circle of more than --max-circle files; those that are left are reported as a
circle.

Layers: if the crate's src/README.md has a section "## Map, by layer" whose numbered items name
files and folders in backquotes (`deque.rs`, `sleep/`), each item is a layer, the first the
lowest, and an import from a file of one layer into a file of a later layer is reported as an
import running up.

Exit status: 0 when no crate has such a circle or file, 1 otherwise, 2 for bad usage.

Usage: scripts/imports.py [--max-circle N] [--max-lines N] [--edges] [CRATE_DIR ...]
  --edges   also print every import edge between files (file -> file: the paths)
"""

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def strip_comments_and_strings(text):
    """The code of a Rust file with comments, string and char literals blanked out."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:i + 12])
            i += len(m.group(0)) if m else 1
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(src, path):
    """The module path (a tuple of names) of a file under src/."""
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


USE = re.compile(r"\buse\s+([^;]*);", re.S)
INLINE = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")


def expand_use(tree):
    """Every path of a use tree `a::b::{c, d::{e as f}}` as a list of names."""
    tree = re.sub(r"\s+", " ", tree)
    tree = re.sub(r"\s*(::|\{|\}|,)\s*", r"\1", tree).strip()
    paths = []

    def walk(prefix, t):
        if t.endswith("}") and "{" in t:
            head, body = t.split("{", 1)
            pre = prefix + [p for p in head.split("::") if p]
            depth, start = 0, 0
            body = body[:-1]
            for i, ch in enumerate(body + ","):
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                elif ch == "," and depth == 0:
                    if body[start:i]:
                        walk(pre, body[start:i])
                    start = i + 1
            return
        t = t.split(" as ")[0]
        paths.append(prefix + [p for p in t.split("::") if p and p != "*"])

    walk([], tree)
    return paths


def absolute_path(parts, here, at):
    """The absolute module path of a `crate::`, `super::` or `self::` path written in module
    `at` (the file's module `here`, or an inline module inside it); None for other paths."""
    if not parts:
        return None
    if parts[0] == "crate":
        return tuple(parts[1:])
    if parts[0] in ("super", "self"):
        cur = list(at)
        rest = list(parts)
        if rest[0] == "self":
            rest = rest[1:]
        while rest and rest[0] == "super":
            cur = cur[:-1]
            rest = rest[1:]
        return tuple(cur + rest)
    return None


def inline_modules(code):
    """The spans of inline `mod name { ... }` blocks in a file's code, with their names."""
    spans = []
    for m in re.finditer(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{", code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        spans.append((m.start(), i, m.group(1)))
    return spans


def imports_of(code, here):
    """Absolute module paths (tuples) that a file's code names; `here` is the file's module."""
    found = []
    spans = inline_modules(code)

    def module_at(pos):
        return tuple(list(here) + [name for start, end, name in spans if start < pos < end])

    def absolute(parts, pos):
        return absolute_path(parts, here, module_at(pos))

    for m in USE.finditer(code):
        for p in expand_use(m.group(1)):
            a = absolute(p, m.start())
            if a is not None:
                found.append(a)
    for m in INLINE.finditer(code):
        parts = [m.group(1)] + [p.strip() for p in m.group(2).split("::") if p.strip()]
        a = absolute(parts, m.start())
        if a is not None:
            found.append(a)
    return found


def reexports_of(src, files):
    """What each module re-exports (`pub use`, `pub(crate) use`): module -> {name: the path it
    stands for}, so that a path through a re-export counts as an import of the module that
    defines the item, not of the module that only names it again."""
    out = {}
    for f in files:
        here = module_of(src, f)
        code = strip_comments_and_strings(f.read_text(encoding="utf-8"))
        spans = inline_modules(code)
        names = {}
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);", code, re.S):
            if any(start < m.start() < end for start, end, _ in spans):
                continue
            for p in expand_use(m.group(1)):
                a = absolute_path(p, here, here)
                if a is not None and len(a) >= 1 and len(p) >= 1:
                    names[p[-1]] = a
                elif p and p[0] not in ("crate", "super", "self") and len(p) >= 2:
                    # `pub use child::Name;` (edition 2018 paths relative to the module).
                    names[p[-1]] = tuple(list(here) + p)
        out[here] = names
    return out


def resolve(path, modules, reexports):
    """`path` with every re-export on it replaced by what it stands for."""
    for _ in range(16):
        for k in range(len(path) - 1, -1, -1):
            prefix, rest = path[:k], path[k:]
            # A segment followed by more names a module if there is one by that name: a
            # module and a re-exported function may share a name (`mod broadcast` beside
            # `pub use thread_pool::broadcast`), and only the module has items.
            if len(rest) > 1 and path[: k + 1] in modules:
                continue
            if prefix in modules and rest and rest[0] in reexports.get(prefix, {}):
                target = reexports[prefix][rest[0]]
                if target != path[: k + 1]:
                    path = target + rest[1:]
                    break
        else:
            return path
    return path


def crate_graph(src):
    files = sorted(p for p in src.rglob("*.rs"))
    modules = {}
    for f in files:
        modules.setdefault(module_of(src, f), f)
    reexports = reexports_of(src, files)
    edges = {}
    for f in files:
        here = module_of(src, f)
        code = strip_comments_and_strings(f.read_text(encoding="utf-8"))
        for path in imports_of(code, here):
            path = resolve(tuple(path), modules, reexports)
            target = None
            for k in range(len(path), -1, -1):
                if path[:k] in modules:
                    target = modules[path[:k]]
                    break
            if target is None or target == f or module_of(src, target) == ():
                continue
            edges.setdefault(f, {}).setdefault(target, set()).add("::".join(path))
    return files, edges


def circles(files, edges):
    """Strongly connected components (Tarjan), largest first."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
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

    for f in files:
        if f not in index:
            visit(f)
    return sorted(out, key=len, reverse=True)


def header(path):
    """The file's first doc lines (`//!`), as one line of text."""
    head = []
    for line in path.read_text(encoding="utf-8").splitlines()[:40]:
        if line.startswith("//!"):
            head.append(line)
        elif head:
            break
    return re.sub(r"\s+", " ", " ".join(l[3:] for l in head))


def says_why_long(path):
    return "This file is long" in header(path)


def is_hub(path):
    return "This file is a hub" in header(path)


def split_at_hubs(circle, edges, max_circle):
    """The hubs of `circle`, and the circles of more than `max_circle` files left without them."""
    hubs = [f for f in circle if is_hub(f)]
    if not hubs:
        return [], [circle]
    rest = [f for f in circle if f not in hubs]
    keep = set(rest)
    sub = {f: {t: p for t, p in edges.get(f, {}).items() if t in keep} for f in rest}
    return hubs, [c for c in circles(rest, sub) if len(c) > max_circle]


def layers_of(src):
    """The layers that src/README.md lists (see the module docs): file -> layer number."""
    readme = src / "README.md"
    if not readme.is_file():
        return {}
    text = readme.read_text(encoding="utf-8")
    m = re.search(r"^## Map, by layer\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not m:
        return {}
    layer_of, layer = {}, None
    for line in m.group(1).splitlines():
        item = re.match(r"(\d+)\. ", line)
        if item:
            layer = int(item.group(1))
        elif not line.startswith(" "):
            layer = None
        if layer is None:
            continue
        for name in re.findall(r"`([\w./-]+)`", line):
            path = src / name.rstrip("/")
            if path.is_file():
                layer_of[path] = layer
            elif path.is_dir():
                for f in path.rglob("*.rs"):
                    layer_of.setdefault(f, layer)
    return layer_of


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-circle", type=int, default=2)
    ap.add_argument("--max-lines", type=int, default=800)
    ap.add_argument("--edges", action="store_true")
    ap.add_argument("crates", nargs="*")
    args = ap.parse_args()
    if args.max_circle < 1 or args.max_lines < 1:
        print("imports.py: --max-circle and --max-lines must be whole numbers > 0", file=sys.stderr)
        return 2
    crates = [pathlib.Path(c) for c in args.crates] or sorted((ROOT / "crates").glob("*"))
    bad = False
    for crate in crates:
        src = crate / "src"
        if not src.is_dir():
            print(f"imports.py: no src/ folder in {crate}", file=sys.stderr)
            return 2
        files, edges = crate_graph(src)
        rel = lambda p: str(p.relative_to(src))
        big, around_hubs = [], []
        for c in circles(files, edges):
            if len(c) <= args.max_circle:
                continue
            hubs, left = split_at_hubs(c, edges, args.max_circle)
            if hubs and not left:
                around_hubs.append((c, hubs))
            big.extend(left)
        long_files = [(f, n) for f in files
                      if (n := len(f.read_text(encoding="utf-8").splitlines())) > args.max_lines
                      and not says_why_long(f)]
        layer_of = layers_of(src)
        up = [(f, t, paths) for f, targets in sorted(edges.items())
              for t, paths in sorted(targets.items())
              if f in layer_of and t in layer_of and layer_of[t] > layer_of[f]]
        lines = sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)
        print(f"{crate.name}: {len(files)} files, {lines} lines, "
              f"{sum(len(t) for t in edges.values())} imports between files, "
              f"{len(big)} circle(s) of more than {args.max_circle} files"
              + (f" ({len(around_hubs)} more around hubs, each with a reason)" if around_hubs else "")
              + ", "
              f"{len(long_files)} file(s) over {args.max_lines} lines without a reason"
              + (f", {len(up)} import(s) running up across the {len(set(layer_of.values()))} "
                 f"layers of src/README.md" if layer_of else ""))
        for f, t, paths in up:
            bad = True
            print(f"  up: {rel(f)} (layer {layer_of[f]}) -> {rel(t)} (layer {layer_of[t]}): "
                  f"{', '.join(sorted(paths))}")
        for c in big:
            bad = True
            members = set(c)
            print(f"  circle of {len(c)} files: {', '.join(rel(f) for f in c)}")
            for f in c:
                for t, paths in sorted(edges.get(f, {}).items()):
                    if t in members:
                        print(f"    {rel(f)} -> {rel(t)}: {', '.join(sorted(paths))}")
        for c, hubs in around_hubs:
            print(f"  around the hubs {', '.join(rel(f) for f in hubs)}: {len(c)} files, "
                  f"no circle of more than {args.max_circle} without them")
        for f, n in long_files:
            bad = True
            print(f"  {rel(f)}: {n} lines")
        if args.edges:
            for f in files:
                for t, paths in sorted(edges.get(f, {}).items()):
                    print(f"  edge {rel(f)} -> {rel(t)}: {', '.join(sorted(paths))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
