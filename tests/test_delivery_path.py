"""A delivery's path from `POST /webhooks/github` to the status POST, counted for a comment, a new head
(``synchronize``), a branch push and a check run click (tests/delivery_trace.py, docs/architecture.md "One
delivery"): at most `STEP_BUDGET` steps, none re-entering a module already on the call stack, none from the
libraries (`state/`, `core/`, `foundation/`) up into the processes' code (a rule handed to the state write
defined in `workers/` would be one: tests/test_state_write_rules.py holds every writer to that)."""

from __future__ import annotations

import pytest

from tests.delivery_trace import DELIVERIES, STATUS_POST, STEP_BUDGET, Tracer, listing, trace_delivery


@pytest.fixture(params=DELIVERIES)
def trace(request: pytest.FixtureRequest, redis_url: str, redis_client: object) -> Tracer:
    """``/unhold`` (issue_comment), a new head (pull_request synchronize), the branch push that moves it (push),
    *Lift my hold* clicked (check_run); redis_client: a flushed database."""
    return trace_delivery(redis_url, request.param)


def test_the_path_from_the_receiver_to_the_status_fits_the_budget(trace: Tracer) -> None:
    steps = trace.steps()
    assert len(steps) <= STEP_BUDGET, f"{len(steps)} steps (budget {STEP_BUDGET}):\n{listing(steps)}"
    # All three hand-offs are on it: the receiver, the pump, the delivery job; and it ends at the POST.
    entries = [str(c) for c in steps if c.caller == "-"]
    assert entries == ["- -> app/webhooks.py:__call__", "- -> workers/intake/pump.py:pump_all",
                       "- -> workers/events/dispatch.py:handle_delivery"], listing(steps)
    assert (steps[-1].callee, steps[-1].function) == STATUS_POST


def test_no_call_reenters_a_module_on_the_stack(trace: Tracer) -> None:
    reentering = [c for c in trace.calls if c.reenters]
    assert not reentering, "\n".join(f"{c}  (on the stack: {', '.join(c.below)})" for c in reentering)


def test_no_call_goes_up_from_the_libraries(trace: Tracer) -> None:
    up = [c for c in trace.calls if c.goes_up]
    assert not up, listing(up)
