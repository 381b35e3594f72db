"""What a writer hands the PR state write is a rule of `core` (issue 31 item 2, docs/architecture.md
"Counted"): `state.store.update_pull`/`update_pull_with` call what they are given under their WATCH, so a
function defined in `workers/` (a closure, a lambda, a helper of the handler) would be a call up from
`state/` into `workers/` — the hidden control flow the delivery trace forbids on the two paths it runs.
This test holds every writer to it, traced or not: the callable passed to the store's writes, or to the
handlers' `apply_change`/`apply_rule` that pass it on, is a name imported from `core`, or
``functools.partial`` of one (its data handed down with it), or a local name bound only to those.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WRITERS = {"update_pull": "change", "update_pull_with": "rule", "apply_change": "change", "apply_rule": "rule"}
"""The calls that take a rule of the PR's state, and their keyword for it (always the fourth argument)."""
RULE_ARGUMENT = 3
CALLERS = ("app", "workers", "foundation", "merge_hold")
"""Everything above the libraries: none of it may hand the state write a function of its own."""


def _core_names(tree: ast.Module) -> set[str]:
    return {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
            and node.level == 0 and node.module is not None and node.module.split(".")[0] == "core"
            for alias in node.names}


def _partial_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """How ``functools.partial`` is spelled here: (names bound to it, names bound to the module)."""
    direct = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
              and node.module == "functools" for alias in node.names if alias.name == "partial"}
    modules = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.Import)
               for alias in node.names if alias.name == "functools"}
    return direct, modules


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


class _Checker:
    def __init__(self, tree: ast.Module) -> None:
        self.core = _core_names(tree)
        self.partial, self.functools = _partial_names(tree)

    def is_partial(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id in self.partial) or (
            isinstance(node, ast.Attribute) and node.attr == "partial" and isinstance(node.value, ast.Name)
            and node.value.id in self.functools)

    def core_rule(self, node: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef | None,
                  seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``node`` is a rule of `core` (with its data): a name imported from it, a partial of one,
        or a local name every binding of which is one."""
        if isinstance(node, ast.Call) and self.is_partial(node.func):
            return bool(node.args) and self.core_rule(node.args[0], None)
        if not isinstance(node, ast.Name):
            return False
        if function is not None and node.id not in seen:
            bindings = [n.value for n in ast.walk(function) if isinstance(n, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)]
            if bindings:
                return all(self.core_rule(value, function, seen | {node.id}) for value in bindings)
            passed_on = function.name in WRITERS and node.id in {a.arg for a in function.args.args
                                                                 + function.args.kwonlyargs}
            if passed_on:  # `apply_change` handing its caller's rule to the store: its callers are checked
                return True
        return node.id in self.core


def handed_down(source: str) -> tuple[int, list[str]]:
    """How many calls of `WRITERS` ``source`` makes, and those whose rule is not one of `core` (line: call)."""
    tree = ast.parse(source)
    checker = _Checker(tree)
    count, bad = 0, []

    def visit(node: ast.AST, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> None:
        nonlocal count
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and _called_name(child) in WRITERS:
                keyword = WRITERS[str(_called_name(child))]
                rule = child.args[RULE_ARGUMENT] if len(child.args) > RULE_ARGUMENT else next(
                    (k.value for k in child.keywords if k.arg == keyword), None)
                if rule is not None:
                    count += 1
                    if not checker.core_rule(rule, function):
                        bad.append(f"line {child.lineno}: {ast.unparse(child)}")
            visit(child, child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function)

    visit(tree, None)
    return count, bad


HEAD = "from functools import partial\nfrom core.prstate import record_push, merge_states\nfrom state import store\n"


@pytest.mark.parametrize(("body", "caught"), [
    # a rule of `core` with its data, however it reaches the call
    ("def f(r):\n    store.update_pull(r, 'a/b', 1, partial(record_push, before='x', after='y'))\n", False),
    ("def f(r):\n    change = partial(record_push, before='x', after='y')\n    apply_change(rt, 'a/b', 1, change)\n",
     False),
    ("def f(r):\n    store.update_pull(r, 'a/b', 1, merge_states, request=None)\n", False),
    ("def f(r):\n    store.update_pull_with(r, 'a/b', 1, rule=partial(merge_states, other=None))\n", False),
    ("def apply_change(rt, repo, number, change):\n    store.update_pull(rt, repo, number, change)\n", False),
    # a function of the caller's own: the store would call up into it
    ("def f(r):\n    store.update_pull(r, 'a/b', 1, lambda s: record_push(s, 'x', 'y'))\n", True),
    ("def f(r):\n    def change(s):\n        return s\n    apply_change(rt, 'a/b', 1, change)\n", True),
    ("def _mine(s):\n    return s\ndef f(r):\n    store.update_pull(r, 'a/b', 1, partial(_mine, 1))\n", True),
    ("def f(r, change):\n    store.update_pull(r, 'a/b', 1, change)\n", True),  # passed through by a non-writer
    ("def f(r):\n    change = partial(record_push)\n    if r:\n        change = lambda s: s\n"
     "    apply_rule(rt, 'a/b', 1, change)\n", True),  # one binding of the name is a closure
    ("from workers.events.x import helper\ndef f(r):\n    apply_rule(rt, 'a/b', 1, helper)\n", True),
])
def test_the_finder(body: str, caught: bool) -> None:
    count, bad = handed_down(HEAD + body)
    assert count == 1 and bool(bad) is caught, bad


def test_every_writer_hands_the_state_write_a_rule_of_core() -> None:
    calls, bad = 0, []
    for package in CALLERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            count, found = handed_down(path.read_text(encoding="utf-8"))
            calls += count
            bad += [f"{path.relative_to(ROOT)} {line}" for line in found]
    assert not bad, "\n".join(bad)
    # Not vacuous: the handlers, the dashboard, the check run, fan-out, history replay, renames, reconcile.
    assert calls >= 12, calls
