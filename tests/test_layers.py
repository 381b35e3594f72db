"""The whole product's layering (issue 17 item 4): no import cycle of any kind in any package, and the
layers in one direction only —

    core ← state ← app, workers ← merge_hold commands;   core ← hook

Every import counts: module level, inside functions, under ``TYPE_CHECKING``, and a module's name
spelled as a string (a lazy command table). `merge_hold` also holds the foundation every process shares
(settings, the Redis connection, the argument parser, logging), which may import `core` only. Inside
`workers/` the folders run one way (github ← runtime ← publishing ← events ← chat ← outgoing ← ops, intake ← ops),
and inside `publishing/` the path does: outbox ← request ← write ← drain ← recompute.
"""

from __future__ import annotations

import pytest

from tests.import_graph import find_cycle, graph

PRODUCT = ("core", "state", "app", "workers", "merge_hold", "hook")
FOUNDATION = {"merge_hold.settings", "merge_hold.redis_conn", "merge_hold.cliargs", "merge_hold.logs"}
ALLOWED = {
    "core": {"core"},
    "foundation": {"core", "foundation"},
    "cliargs": {"core"},
    "state": {"core", "state"},
    "app": {"core", "foundation", "state", "app"},
    "workers": {"core", "foundation", "state", "workers"},
    "merge_hold": set(PRODUCT) | {"foundation"},
    # The guard reads Redis with its own socket code; its tools share the argument parser only.
    "hook": {"core", "hook", "cliargs"},
}
WORKER_FOLDERS = ["github", "runtime", "publishing", "events", "chat", "outgoing", "ops"]
"""Each may import the ones before it (``intake`` stands beside them: state and runtime only)."""
PUBLISHING = ["locks", "pacing", "outbox", "expedite", "request", "group_status", "write", "drain",
              "merge_groups", "org_rulesets", "freeze_rulesets",
              "freeze_marks", "sync", "changed_files", "exemption_ends", "check_runs", "recompute"]
"""Each may import only the ones before it."""


def layer(module: str) -> str:
    if module in FOUNDATION:
        return "cliargs" if module == "merge_hold.cliargs" else "foundation"
    return module.split(".")[0]


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


def test_a_backward_import_would_be_caught() -> None:
    """The rules are not vacuous: the edges the product must never have are refused by them."""
    assert not allowed("core.verdict", "state.store")
    assert not allowed("state.store", "workers.runtime")
    assert not allowed("app.chat", "workers.chat.rooms")
    assert not allowed("workers.chat.rooms", "app.chat")
    assert not allowed("hook.guard", "merge_hold.settings")
    assert not allowed("merge_hold.settings", "state.store")
    assert allowed("hook.tools.install", "merge_hold.cliargs") and allowed("merge_hold.doctor", "workers.ops.cli")
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
