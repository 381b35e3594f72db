"""`merge-hold simulate` and its sample deliveries, against the real app, real Redis and a real rq worker."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from redis import Redis

from app import create_app
from app.webhooks import signature_valid
from core import keys
from core.comments import parse_comment
from core.deliveries import ignore_reason
from foundation.settings import Settings
from merge_hold import samples, simulate
from merge_hold.redis_server import free_port
from tests.webapp_support import serving
from workers import runtime
from workers.github.pulls import facts_from_pull
from workers.ops.tenants import burst
from workers.runtime import Runtime

SECRET = "simulate-test-secret"
WEBHOOKS = Path(__file__).resolve().parent / "fixtures" / "github" / "webhooks"
AT = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def _keys(fixture: str, *path: str) -> set[str]:
    data: Any = json.loads((WEBHOOKS / fixture).read_text())
    for part in path:
        data = data[part]
    return set(data)


def _dig(payload: dict[str, Any], *path: str) -> set[str]:
    data: Any = payload
    for part in path:
        data = data[part]
    return set(data)


PR_EVENT = samples.pull_request_event("acme/widgets", 42, at=AT)
COMMENT_EVENT = samples.issue_comment_event("acme/widgets", 42, body="/hold x", commenter="alice", at=AT,
                                            comment_id=7)


@pytest.mark.parametrize(("sample", "fixture", "path"), [
    (PR_EVENT, "pull_request/opened.payload.json", ()),
    (PR_EVENT, "pull_request/opened.payload.json", ("pull_request",)),
    (PR_EVENT, "pull_request/opened.payload.json", ("pull_request", "head")),
    (PR_EVENT, "pull_request/opened.payload.json", ("pull_request", "_links")),
    (PR_EVENT, "pull_request/opened.payload.json", ("repository",)),
    (PR_EVENT, "pull_request/opened.payload.json", ("sender",)),
    (COMMENT_EVENT, "issue_comment/created.with-installation.payload.json", ()),
    (COMMENT_EVENT, "issue_comment/created.with-installation.payload.json", ("issue",)),
    (COMMENT_EVENT, "issue_comment/created.with-installation.payload.json", ("comment",)),
    (COMMENT_EVENT, "issue_comment/created.with-installation.payload.json", ("organization",)),
])
def test_samples_have_every_field_of_githubs_examples(sample: dict[str, Any], fixture: str,
                                                      path: tuple[str, ...]) -> None:
    assert _keys(fixture, *path) <= _dig(sample, *path)


def test_samples_are_what_the_receiver_and_workers_expect() -> None:
    delivery = samples.delivery("issue_comment", COMMENT_EVENT)
    headers = delivery.headers(SECRET)
    assert signature_valid(SECRET, delivery.body, headers["X-Hub-Signature-256"])
    assert not signature_valid("another secret", delivery.body, headers["X-Hub-Signature-256"])
    assert ignore_reason("issue_comment", COMMENT_EVENT) is None  # a comment on a PR, not on an issue
    assert ignore_reason("pull_request", PR_EVENT) is None
    facts = facts_from_pull(PR_EVENT["pull_request"])
    assert (facts.head_sha, facts.base, facts.open) == (samples.head_sha("acme/widgets", 42), "main", True)
    assert samples.head_sha("acme/widgets", 42) == samples.head_sha("ACME/Widgets", 42)  # one PR, one head
    assert samples.head_sha("acme/widgets", 42) != samples.head_sha("acme/widgets", 43)
    assert samples.delivery("ping", {}).delivery_id != samples.delivery("ping", {}).delivery_id


@pytest.mark.parametrize(("size", "grown"), [(5_000, False), (20 * 1024, True), (100_000, True)])
def test_fill_to_grows_a_payload_to_the_size_asked(size: int, grown: bool) -> None:
    payload = samples.fill_to(samples.pull_request_event("acme/widgets", 1, at=AT), size)
    length = len(samples.encode(payload))
    assert (length == size) if grown else (length > size)  # never shrinks a payload already larger
    with pytest.raises(ValueError):
        samples.fill_to({"action": "ping"}, size)


def _args(*argv: str) -> argparse.Namespace:
    return simulate.parser().parse_args(list(argv))


@pytest.mark.parametrize(("argv", "events", "body"), [
    ((), ["pull_request", "issue_comment"], "/hold waiting for DB migration"),
    (("unhold",), ["pull_request", "issue_comment"], "/unhold"),
    (("unhold", "--reason", "ignored"), ["pull_request", "issue_comment"], "/unhold"),
    (("--no-open", "--reason", ""), ["issue_comment"], "/hold"),
    (("--reason", "/unhold"), ["pull_request", "issue_comment"], "/hold /unhold"),  # a reason, not a lift
])
def test_scenario(argv: tuple[str, ...], events: list[str], body: str) -> None:
    args = _args(*argv)
    deliveries = simulate.scenario(args, AT)
    assert [d.event for d in deliveries] == events
    comment = json.loads(deliveries[-1].body)["comment"]
    assert (comment["body"], comment["user"]["login"], comment["author_association"]) == (body, "alice", "MEMBER")
    commands = parse_comment(comment["body"])
    assert [c.kind for c in commands] == (["hold"] if args.action == "hold" else ["lift"])
    for delivery in deliveries:
        assert json.loads(delivery.body)["repository"]["full_name"] == "acme/widgets"


def test_comment_ids_grow_with_time_so_a_quick_unhold_wins() -> None:
    first = json.loads(simulate.scenario(_args(), AT)[-1].body)["comment"]["id"]
    later = AT.replace(microsecond=1000)
    second = json.loads(simulate.scenario(_args("unhold"), later)[-1].body)["comment"]["id"]
    assert second > first


def _order(delivery: samples.Delivery) -> tuple[str, int]:
    comment = json.loads(delivery.body)["comment"]
    return comment["created_at"], comment["id"]


def test_runs_one_after_another_are_ordered_as_they_ran() -> None:
    """`simulate unhold` then `simulate`, pasted in one go a millisecond apart: the later run's comment is
    the later command (dated to the second as GitHub does, its id decides), never dated behind."""
    unhold = simulate.scenario(_args("unhold"), AT)[-1]
    hold = simulate.scenario(_args(), AT.replace(microsecond=1000))[-1]
    assert _order(hold) > _order(unhold)
    again = simulate.scenario(_args("unhold"), AT.replace(microsecond=2000))[-1]
    assert _order(again) > _order(hold)


@pytest.fixture()
def service(redis_client: Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Runtime]]:
    """The app on a real HTTP server in dry-run mode, with the runtime the worker jobs use."""
    settings = Settings(redis_url=redis_url, github_webhook_secret=SECRET, dry_run=True, secret_key="k",
                        queue_name="merge-hold-simulate-test")
    rt = runtime.build(settings, redis=redis_client)
    monkeypatch.setattr(runtime, "_current", rt)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", SECRET)
    monkeypatch.delenv("REDIS_URL", raising=False)
    with serving(create_app(settings, redis=redis_client)) as url:
        yield url, rt


def _drain(rt: Runtime) -> None:
    from workers.intake.pump import pump_all

    pump_all(rt.redis, rt.queue)
    burst(rt.queue, with_scheduler=False)
    assert rt.queue.failed_job_registry.count == 0


def _drain_while_reading(rt: Runtime, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> simulate.Reader:
    """The worker runs while simulate waits: jobs are drained by a thread-free trick, the reader's poll.
    Returns the real reader (no draining), for the test's own reads."""
    real_read = simulate.redis_reader(redis_url)

    def draining_reader(url: str) -> simulate.Reader:
        def read(repo: str, number: int) -> simulate.Result | None:
            _drain(rt)
            return real_read(repo, number)
        return read

    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setattr(simulate, "redis_reader", draining_reader)
    return real_read


def test_simulate_places_and_lifts_a_hold(service: tuple[str, Runtime], redis_url: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    url, rt = service
    base = ["--url", url, "--data-dir", str(tmp_path), "--wait", "0"]
    assert simulate.main(base) == 0
    out = capsys.readouterr().out
    assert out.count("202 ACCEPTED") == 2 and "/hold waiting for DB migration" in out
    _drain(rt)
    read = simulate.redis_reader(redis_url)
    result = simulate.wait_for(read, "acme/widgets", 42, lambda r: "alice" in r.holders(), timeout=0)
    assert result is not None and result.dry_run and result.settled
    assert result.status == ("failure", "Held by @alice: waiting for DB migration")

    assert simulate.main([*base, "unhold", "--no-open"]) == 0
    _drain(rt)
    result = read("acme/widgets", 42)
    assert result is not None and result.status == ("success", "No holds") and not result.holders()


def test_simulate_reports_the_outcome_it_waited_for(service: tuple[str, Runtime], tmp_path: Path,
                                                    redis_url: str, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    url, rt = service
    _drain_while_reading(rt, redis_url, monkeypatch)
    assert simulate.main(["--url", url, "--data-dir", str(tmp_path), "--user", "bob", "--reason", "release"]) == 0
    out = capsys.readouterr().out
    assert "merge-hold: failure — Held by @bob: release" in out
    assert "dry run" in out


def test_the_readmes_lines_pasted_in_one_go_end_as_the_last_one_says(
        service: tuple[str, Runtime], tmp_path: Path, redis_url: str, redis_client: Redis,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """hold, unhold, hold, one right after the other: each run's report, the verdict and the history agree
    (the last hold holds; no "held" entry for a hold that never took effect)."""
    url, rt = service
    real_read = _drain_while_reading(rt, redis_url, monkeypatch)
    base = ["--url", url, "--data-dir", str(tmp_path), "--wait", "5"]
    assert [simulate.main(base), simulate.main([*base, "unhold"]), simulate.main(base)] == [0, 0, 0]
    out = capsys.readouterr().out
    assert out.count("merge-hold: failure — Held by @alice") == 2 and out.count("merge-hold: success") == 1
    result = real_read("acme/widgets", 42)
    assert result is not None and result.holders() == {"alice"}
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], redis_client.xrange(keys.history("acme/widgets")))
    kinds = [json.loads(fields[b"data"])["message"] for _id, fields in entries if fields[b"event"].startswith(b"hold.")]
    assert kinds == ["@alice held this PR", "@alice lifted the hold", "@alice held this PR"], kinds  # oldest first


@pytest.mark.parametrize(("argv", "secret", "code", "message"), [
    (["--repo", "not-a-repo"], SECRET, 64, "--repo must be owner/repo"),
    (["--repo", "a/b/c"], SECRET, 64, "--repo must be owner/repo"),
    (["--pr", "0"], SECRET, 64, "--repo must be owner/repo"),
    ([], None, 78, "no webhook secret"),
])
def test_simulate_refuses_before_sending(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], argv: list[str], secret: str | None,
                                         code: int, message: str) -> None:
    if secret is None:
        monkeypatch.delenv("GITHUB_WEBHOOK_SECRET", raising=False)
    else:
        monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", secret)
    # Nothing listens at this URL: reaching it would answer 69, not the code expected.
    url = f"http://127.0.0.1:{free_port()}"
    assert simulate.main(["--url", url, "--data-dir", str(tmp_path), "--wait", "0", *argv]) == code
    assert message in capsys.readouterr().err


def test_simulate_stops_at_a_refused_delivery(service: tuple[str, Runtime], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    url, rt = service
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "the wrong secret")
    assert simulate.main(["--url", url, "--data-dir", str(tmp_path), "--wait", "0"]) == 1
    captured = capsys.readouterr()
    assert "401" in captured.out and captured.out.count("->") == 1  # the comment is never sent
    assert "refused" in captured.err
    assert rt.queue.count == 0


def test_simulate_uses_the_dev_folder_secret_and_says_when_nothing_listens(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_WEBHOOK_SECRET", raising=False)
    (tmp_path / "webhook-secret").write_text("from-the-dev-folder\n")
    (tmp_path / "dev.json").write_text(json.dumps({"url": f"http://127.0.0.1:{free_port()}"}))
    assert simulate.main(["--data-dir", str(tmp_path)]) == 69
    assert "is `merge-hold dev` running?" in capsys.readouterr().err
