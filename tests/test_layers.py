"""The whole product's layering (issue 17 item 4, issue 31 item 5): no import cycle of any kind in any
package, and the layers in one direction only —

    core ← foundation, state ← app, workers ← merge_hold (the command line);   core ← hook

Every import counts: module level, inside functions, under ``TYPE_CHECKING``, and a module's name
spelled as a string (a lazy command table). `foundation` is what every process shares (settings, the Redis
connection, the argument parser, logging) and imports `core` only; `state` stands beside it (redis-py, rq,
PyYAML and `core`: its own package says so). The hook's tools use the foundation's argument parser
(`foundation.cliargs`) and nothing else of it. Nothing imports the command line but itself (tests and
bench do, outside the product). Inside `workers/` the folders run one way (github ← runtime ← publishing ←
events ← dashboard ← chat ← outgoing ← ops, intake ← ops),
and inside `publishing/` the path does: outbox ← request ← write ← drain ← recompute ← fanout ← republish.
Nothing outside `publishing/` imports a module inside it: its package body is its front door.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from tests.import_graph import find_cycle, graph

PRODUCT = ("core", "foundation", "state", "app", "workers", "merge_hold", "hook")
ALLOWED = {
    "core": {"core"},
    "foundation": {"core", "foundation"},
    "cliargs": {"core"},
    "state": {"core", "state"},
    "app": {"core", "foundation", "state", "app"},
    "workers": {"core", "foundation", "state", "workers"},
    "merge_hold": set(PRODUCT),
    # The guard reads Redis with its own socket code; its tools share the argument parser only.
    "hook": {"core", "hook", "cliargs"},
}
"""What each layer may import (``cliargs`` is `foundation.cliargs`, the one module the hook may use: it
may import `core` only, and whoever may import the foundation may import it)."""

WORKER_FOLDERS = ["github", "runtime", "publishing", "events", "dashboard", "chat", "outgoing", "ops"]
"""Each may import the ones before it (``intake`` stands beside them: state and runtime only)."""
PUBLISHING = ["locks", "pacing", "outbox", "in_delivery", "request", "group_status", "write", "freeze_marks",
              "check_runs", "drain", "merge_groups", "ruleset_writes", "org_rulesets", "freeze_rulesets",
              "history_replay", "changed_files", "exemption_ends", "recompute", "fanout", "freeze_sync", "republish"]
"""Each may import only the ones before it."""


def layer(module: str) -> str:
    return "cliargs" if module == "foundation.cliargs" else module.split(".")[0]


def allowed(source: str, target: str) -> bool:
    rule = ALLOWED[layer(source)]
    return layer(target) in rule or (layer(target) == "cliargs" and ("foundation" in rule or "cliargs" in rule))


@pytest.fixture(scope="module")
def edges() -> dict[str, set[str]]:
    return graph(*PRODUCT, strings=True)


def test_the_product_has_no_import_cycle(edges: dict[str, set[str]]) -> None:
    assert set(edges) > {"workers.publishing.write", "app.webhooks", "hook.guard", "state.store"}
    assert find_cycle(edges) is None, find_cycle(edges)


def test_the_layers_run_one_way(edges: dict[str, set[str]]) -> None:
    bad = sorted(f"{source} -> {target}" for source, targets in edges.items() for target in targets
                 if not allowed(source, target))
    assert not bad, bad


def folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "workers"


def test_the_worker_folders_run_one_way(edges: dict[str, set[str]]) -> None:
    order = {name: index for index, name in enumerate(WORKER_FOLDERS)}
    bad = []
    for source, targets in edges.items():
        if not source.startswith("workers."):
            continue
        for target in targets:
            if not target.startswith("workers.") or folder(target) == folder(source):
                continue
            here, there = folder(source), folder(target)
            if here == "intake":
                ok = there == "runtime"
            elif there == "intake":
                ok = here == "ops"
            else:
                ok = order[there] < order[here]
            if not ok:
                bad.append(f"{source} -> {target}")
    assert not bad, bad


def test_the_publishing_path_runs_one_way(edges: dict[str, set[str]]) -> None:
    modules = {f"workers.publishing.{name}" for name in PUBLISHING}
    assert modules | {"workers.publishing"} == {m for m in edges if m.startswith("workers.publishing")}
    rank = {f"workers.publishing.{name}": index for index, name in enumerate(PUBLISHING)}
    bad = sorted(f"{source} -> {target}" for source in modules for target in edges[source]
                 if target in rank and rank[target] >= rank[source])
    assert not bad, bad


def test_the_packages_run_one_way(edges: dict[str, set[str]]) -> None:
    """The package picture itself has no cycle: two packages importing each other through different
    modules (the command line importing `app` while `app` imported the settings beside it) is an arrow
    pointing back up even when no module cycle exists."""
    packages: dict[str, set[str]] = {package: set() for package in PRODUCT}
    for source, targets in edges.items():
        packages[source.split(".")[0]] |= {target.split(".")[0] for target in targets} - {source.split(".")[0]}
    assert find_cycle(packages) is None, find_cycle(packages)


def test_only_the_command_line_imports_the_command_line(edges: dict[str, set[str]]) -> None:
    bad = sorted(f"{source} -> {target}" for source, targets in edges.items() for target in targets
                 if target.split(".")[0] == "merge_hold" and source.split(".")[0] != "merge_hold")
    assert not bad, bad


def behind_the_front_door(edges: dict[str, set[str]]) -> list[str]:
    """Imports of a module inside `workers/publishing/` from outside it (its package body is the way in)."""
    return sorted(f"{source} -> {target}" for source, targets in edges.items() for target in targets
                  if target.startswith("workers.publishing.")
                  and source != "workers.publishing" and not source.startswith("workers.publishing."))


def test_publishing_is_entered_by_its_front_door(edges: dict[str, set[str]]) -> None:
    assert not behind_the_front_door(edges), behind_the_front_door(edges)


@pytest.mark.parametrize(("source", "target", "caught"), [
    ("workers.events.handler_support", "workers.publishing.request", True),  # a submodule, from events
    ("workers.ops.reconcile", "workers.publishing.recompute", True),
    ("app.webhooks", "workers.publishing.outbox", True),
    ("workers.events.handler_support", "workers.publishing", False),  # the front door itself
    ("workers.publishing", "workers.publishing.recompute", False),  # the body re-exporting its modules
    ("workers.publishing.fanout", "workers.publishing.recompute", False),
    ("workers.publishingx.a", "workers.publishing.outbox", True),  # a look-alike name is outside
])
def test_the_front_door_finder(source: str, target: str, caught: bool) -> None:
    assert bool(behind_the_front_door({source: {target}})) is caught


def test_a_backward_import_would_be_caught() -> None:
    """The rules are not vacuous: the edges the product must never have are refused by them."""
    assert not allowed("core.verdict", "state.store")
    assert not allowed("state.store", "workers.runtime")
    assert not allowed("app.chat", "workers.chat.rooms")
    assert not allowed("workers.chat.rooms", "app.chat")
    assert not allowed("hook.guard", "foundation.settings")
    assert not allowed("hook.guard", "foundation")
    assert not allowed("foundation.settings", "state.store")
    assert not allowed("state.store", "foundation.settings")
    assert not allowed("foundation.cliargs", "foundation.settings")
    for up in ("foundation.settings", "app.services", "workers.ops.cli", "state.store", "core.verdict", "hook.guard"):
        assert not allowed(up, "merge_hold.tokens") and not allowed(up, "merge_hold.cli"), up
    assert allowed("hook.tools.install", "foundation.cliargs") and allowed("merge_hold.doctor", "workers.ops.cli")
    assert allowed("app.services", "foundation.cliargs") and allowed("merge_hold.cli", "foundation.settings")
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]


ROOT = Path(__file__).resolve().parents[1]
STATE_LIBRARIES = {"redis", "rq", "yaml"}
"""What `state/` may import beside the standard library and `core` (its `__init__` says so)."""
CLOCKS = {("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today"),
          ("time", "time"), ("time", "monotonic"), ("time", "perf_counter"), ("time", "time_ns")}
"""Ways to read the clock: `core/` is given its time (docs/architecture.md: "no clock unless passed in")."""


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_state_imports_only_what_its_package_says() -> None:
    """What `state/__init__.py` promises is true: the libraries it names are all it imports, and none it
    imports is in its "never" list (it said rq once, while `state.queueing` imported it)."""
    doc = ast.get_docstring(ast.parse((ROOT / "state" / "__init__.py").read_text(encoding="utf-8"))) or ""
    never = re.search(r"never ([^—;]*)", doc)
    spelled = {"redis": "redis-py", "rq": "rq", "yaml": "PyYAML"}
    imported = set().union(*(_imported_roots(path) for path in (ROOT / "state").glob("*.py")))
    assert never is not None and all(re.search(rf"\b{spelled[lib]}\b", doc) for lib in STATE_LIBRARIES & imported)
    assert not [lib for lib in STATE_LIBRARIES & imported if re.search(rf"\b{spelled[lib]}\b", never[1])], never[1]
    bad = sorted(f"{path.name}: {root}" for path in (ROOT / "state").glob("*.py") for root in _imported_roots(path)
                 if root not in sys.stdlib_module_names | STATE_LIBRARIES | {"core", "state", "__future__"})
    assert not bad, bad


def clock_reads(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in CLOCKS:
            found.append(f"line {node.lineno}: {node.func.value.id}.{node.func.attr}()")
    return found


@pytest.mark.parametrize(("source", "found"), [
    ("from datetime import UTC, datetime\nx = datetime.now(UTC)\n", ["line 2: datetime.now()"]),
    ("import time\ndef f():\n    return time.monotonic()\n", ["line 3: time.monotonic()"]),
    ("def f(now):\n    return now.replace(hour=0)\n", []),
    ("from datetime import datetime\nx = datetime.fromisoformat('2026-01-01')\n", []),
])
def test_the_clock_reader_finder(source: str, found: list[str]) -> None:
    assert clock_reads(source) == found


def test_core_reads_no_clock() -> None:
    bad = [f"{path.relative_to(ROOT)} {read}" for path in sorted((ROOT / "core").rglob("*.py"))
           for read in clock_reads(path.read_text(encoding="utf-8"))]
    assert not bad, bad
