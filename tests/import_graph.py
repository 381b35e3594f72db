"""The import graph of one product package, every kind of import counted: module level, inside
functions and under ``TYPE_CHECKING`` alike (a cycle hidden in a function-local import is still a cycle
in the design). ``from app import reads`` is an edge to ``app.reads``, ``from app.auth import may_see``
one to ``app.auth``; the package body that Python runs before any of its modules is not an edge of its
own, or every package whose factory imports its blueprints would look cyclic.

``python -m tests.import_graph workers app`` prints each package's cycles (strongly connected parts);
``python -m tests.import_graph core+state+app+workers`` those of several packages taken together.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(node: ast.AST, modules: set[str]) -> set[str]:
    """The product modules an import statement names: for ``from X import n``, the module ``X.n`` when
    there is one, else ``X``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & modules
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        named = {f"{node.module}.{alias.name}" for alias in node.names}
        return ((named & modules) | ({node.module} if named - modules else set())) & modules
    return set()


def named_in_strings(tree: ast.AST, modules: set[str]) -> set[str]:
    """Strings that are exactly a module's name (``"workers.ops.cli"`` in a lazy command table, handed to
    `importlib.import_module` later) are imports too — except the one after ``-m`` in an argument list,
    which starts another process rather than importing anything into this one."""
    launched = {id(later) for node in ast.walk(tree) if isinstance(node, (ast.List, ast.Tuple))
                for earlier, later in zip(node.elts, node.elts[1:], strict=False)
                if isinstance(earlier, ast.Constant) and earlier.value == "-m"}
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and "." in node.value  # a bare "state" is a word, not a package
            and node.value in modules and id(node) not in launched}


def graph(*packages: str, strings: bool = False) -> dict[str, set[str]]:
    """Edges among the modules of ``packages`` (imports from elsewhere are left out); with ``strings``,
    module names spelled as strings count as imports as well."""
    paths = [path for package in packages for path in sorted((ROOT / package).rglob("*.py"))]
    modules = {module_name(p) for p in paths}
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for path in paths:
        name = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            edges[name].update(imported(node, modules) - {name})
        if strings:
            edges[name].update(named_in_strings(tree, modules) - {name})
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle (``[a, b, a]``), or None; nodes in sorted order, so the answer is stable."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def tangles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts with more than one module: every module that is on some cycle."""
    reach = {node: _reachable(edges, node) for node in edges}
    parts: list[list[str]] = []
    seen: set[str] = set()
    for node in sorted(edges):
        if node in seen:
            continue
        part = sorted(other for other in reach[node] if node in reach[other])
        if len(part) > 1:
            parts.append(part)
            seen.update(part)
    return parts


def _reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    found: set[str] = set()
    todo = list(edges[start])
    while todo:
        node = todo.pop()
        if node not in found:
            found.add(node)
            todo.extend(edges[node])
    return found


def main(packages: list[str]) -> int:
    for package in packages:
        edges = graph(*package.split("+"))
        parts = tangles(edges)
        print(f"{package}: {'no cycle' if not parts else f'{len(parts)} tangle(s)'}")
        for part in parts:
            print("  " + ", ".join(part))
            for node in part:
                print(f"    {node} -> {', '.join(sorted(edges[node] & set(part)))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["app", "workers"]))
