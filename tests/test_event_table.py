"""One table for events and actions (issue 17, `core/events.py`): the receiver, the pump, the handlers,
the metric labels and doctor's required events all read it, and nothing lets them drift apart again.

The drift this guards against was real: `converted_to_draft` had a handler and no row (the end-to-end
row is in tests/test_e2e_webhooks.py), and four handled events were counted as ``other`` in `/metrics`.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from app.metrics import Metrics
from core.deliveries import ignore_reason
from core.events import EVENTS, QUEUED, action_matters, metric_label, queued
from core.readiness import REQUIRED_EVENTS
from workers.events.dispatch import HANDLERS

WEBHOOKS = Path(__file__).resolve().parent / "fixtures" / "github" / "webhooks"
EXAMPLES = sorted(WEBHOOKS.glob("*/*.json"))


def test_every_queued_event_has_a_handler_and_every_handler_a_row() -> None:
    assert set(HANDLERS) == set(QUEUED)
    assert not queued("ping") and "ping" not in HANDLERS  # the receiver answers it itself


@pytest.mark.parametrize("event", list(EVENTS))
def test_every_event_is_counted_under_its_own_name(event: str) -> None:
    metrics = Metrics()
    metrics.count_webhook(event, "queued")
    text = generate_latest(metrics.registry).decode()
    assert metric_label(event) == event != "other"
    assert f'merge_hold_webhooks_total{{event="{event}",outcome="queued"}} 1.0' in text


def test_anything_else_is_other_so_a_sender_cannot_grow_the_labels() -> None:
    assert (metric_label("label"), metric_label(""), metric_label(None)) == ("other", "none", "none")


def _action_literals(handler: Callable[..., Any]) -> set[str]:
    """The action names a handler compares ``action`` / ``payload.get("action")`` / ``payload["action"]`` with."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(handler)))

    def is_action(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id == "action"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "action"
        return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "action"

    def strings(node: ast.expr) -> set[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return {s for item in node.elts for s in strings(item)}
        return set()

    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(is_action(o) for o in operands):
                found |= {s for o in operands for s in strings(o)}
    return found


@pytest.mark.parametrize("event", [e for e in QUEUED if EVENTS[e].actions is not None])
def test_the_actions_a_handler_names_are_let_in_by_its_row(event: str) -> None:
    """The bug's shape: a handler that acts on an action its row drops never sees it."""
    actions = EVENTS[event].actions
    assert actions is not None and actions
    assert _action_literals(HANDLERS[event]) <= actions
    for action in actions:  # and every action of the row reaches the handler
        assert action_matters(event, action)
    assert not action_matters(event, "an-action-no-row-has")


def test_the_literal_reader_sees_the_shapes_handlers_use() -> None:
    def handler(payload: dict[str, Any]) -> str:
        action = payload.get("action")
        if action == "a" or payload.get("action") in ("b", "c") or payload["action"] != "d":
            return "x"
        return "y"

    assert _action_literals(handler) == {"a", "b", "c", "d"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[f"{p.parent.name}/{p.name}" for p in EXAMPLES])
def test_the_pump_drops_exactly_the_actions_the_table_drops(path: Path) -> None:
    event, payload = path.parent.name, json.loads(path.read_text())
    dropped = ignore_reason(event, payload) in ("event not handled", "action not handled")
    assert dropped is not action_matters(event, payload.get("action"))


def test_doctor_requires_the_rows_that_need_a_subscription() -> None:
    assert all(REQUIRED_EVENTS.values())  # doctor says what each subscription is for
    assert set(REQUIRED_EVENTS) <= set(QUEUED)
    # GitHub sends these to every App; the manifest cannot even subscribe to them.
    assert set(QUEUED) - set(REQUIRED_EVENTS) == {"installation", "installation_repositories"}


def test_merge_groups_keep_only_checks_requested() -> None:
    # `destroyed` has no handler use: a group that goes away leaves nothing to publish.
    assert EVENTS["merge_group"].actions == frozenset({"checks_requested"})
