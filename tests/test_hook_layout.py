"""The hook's layout (issue #8 item 7): subpackages by responsibility and an acyclic import graph.

Every ``import`` counts, at module level, inside functions and under ``TYPE_CHECKING`` alike: a cycle
hidden in a function-local import is still a cycle in the design. Strings handed to ``__import__``
(the dispatcher's lazy detector table) are read too, so a detector cannot reach back up to it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.import_graph import find_cycle

ROOT = Path(__file__).resolve().parent.parent / "hook"
PACKAGES = ("shell", "detect", "verdicts", "agents", "tools")
# which subpackages each may import (hook's top-level modules are checked by the cycle test alone)
ALLOWED = {
    "shell": set(),
    "detect": {"shell"},
    "verdicts": set(),
    "agents": {"detect"},
    "tools": {"shell", "detect", "verdicts", "agents"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """``hook.detect.gh`` -> ``detect``; a top-level module or ``hook`` itself -> its own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # "gh:gh" in the dispatcher's table means hook.detect.gh
                match = re.fullmatch(r"(\w+):\w+", node.value)
                if match and name == "hook.detect.dispatch":
                    targets = [f"hook.detect.{match.group(1)}"]
            for target in targets:
                # `from hook.detect import gitrepo` imports the module; `from x import name` the module x
                if target in modules and target != name:
                    edges[name].add(target)
    return edges


def test_the_hook_import_graph_is_acyclic() -> None:
    edges = graph()
    assert edges.get("hook.detect.dispatch"), "graph reader found no imports"
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


@pytest.mark.parametrize("edges, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": set(), "c": {"c2"}, "c2": {"c"}}, ["c", "c2", "c"]),
    ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, None),
])
def test_the_cycle_finder_finds_cycles(edges: dict[str, set[str]], cycle: list[str] | None) -> None:
    assert find_cycle(edges) == cycle


@pytest.mark.parametrize("package", PACKAGES)
def test_subpackages_import_only_the_layers_below(package: str) -> None:
    prefix = f"hook.{package}"
    bad = sorted(
        f"{source} -> {target}"
        for source, targets in graph().items() if source.startswith(prefix)
        for target in targets
        if layer(target) in PACKAGES and layer(target) not in ALLOWED[package] | {package}
    )
    assert not bad, bad


def test_the_entry_points_stay_where_they_were() -> None:
    """`merge-hold hook-guard` and `merge-hold hook` name these modules; installed settings name hook.guard."""
    assert (ROOT / "guard.py").is_file() and (ROOT / "cli.py").is_file()
    assert not [p.name for p in ROOT.glob("detect*.py")], "flat detect_*.py modules are back"
