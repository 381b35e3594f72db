"""Step 5 of a delivery's path (docs/architecture.md), for `issue_comment` and `pull_request_review`: the
hold commands of comments and reviews (`core.comment_rules`), `/hold-for`, the answer on the PR, and chat
news of an approval that leaves a PR held."""

from __future__ import annotations

from functools import partial
from typing import Any

from core import keys
from core.comment_rules import apply_comment, apply_review_event
from core.events import repo_name
from core.holds import from_iso
from core.prstate import EPOCH
from state import audit
from workers.events import feedback, holdfor
from workers.events.handler_support import apply_rule, first_time, permission_of, record_outcomes
from workers.events.repos import pr_meta
from workers.github.pulls import facts_from_pull
from workers.publishing import after_delivery
from workers.runtime import Runtime


def on_issue_comment(rt: Runtime, payload: dict[str, Any]) -> str:
    issue = payload.get("issue") or {}
    repo = repo_name(payload)
    if payload.get("action") != "created" or not issue.get("pull_request") or repo is None:
        return "ignored"
    comment = payload["comment"]
    number = int(issue["number"])
    actor = comment["user"]["login"]
    _, config = pr_meta(rt, repo, payload)
    permission = permission_of(rt, repo, actor, comment.get("author_association"))
    is_author = actor == (issue.get("user") or {}).get("login")
    # The rule itself (`core.comment_rules`), applied under the state's WATCH: no callback of ours in between.
    rule = partial(apply_comment, body=comment.get("body") or "", actor=actor, permission=permission,
                   is_author=is_author, at=from_iso(comment.get("created_at")) or EPOCH, ref=str(comment["id"]),
                   origin=comment.get("html_url", ""), config=config)
    before, found, changed = apply_rule(rt, repo, number, rule)
    outcomes: list[Any] = [*found, *holdfor.on_comment(rt, repo, number, comment, permission=permission,
                                                       config=config, is_author=is_author)]
    record_outcomes(rt, repo, number, outcomes, f"comment:{comment['id']}")
    # The reaction may wait until the status is written (it is best effort, the status is the gate).
    after_delivery(rt, partial(feedback.answer_comment, rt, repo, number, comment, outcomes, before, config))
    if not outcomes:
        return "no-command"
    return "applied" if changed else "unchanged"


def on_pull_request_review(rt: Runtime, payload: dict[str, Any]) -> str:
    repo = repo_name(payload)
    action = payload.get("action")  # submitted or dismissed (`core.events`)
    if repo is None:
        return "ignored"
    review, pull = payload["review"], payload["pull_request"]
    number = int(pull["number"])
    reviewer = review["user"]["login"]
    _, config = pr_meta(rt, repo, payload)
    at = from_iso(review.get("submitted_at")) or EPOCH
    facts = facts_from_pull(pull) if (pull.get("head") or {}).get("sha") else None
    permission = permission_of(rt, repo, reviewer, review.get("author_association"))
    rule = partial(apply_review_event, facts=facts, reviewer=reviewer,
                   review_state="dismissed" if action == "dismissed" else str(review.get("state")),
                   review_id=str(review["id"]), body=(review.get("body") or "") if action == "submitted" else "",
                   is_author=reviewer == (pull.get("user") or {}).get("login"), at=at,
                   origin=review.get("html_url", ""), config=config, permission=permission)
    _before, outcomes, changed = apply_rule(rt, repo, number, rule)
    record_outcomes(rt, repo, number, outcomes, f"review:{review['id']}:{action}")
    # The first delivery of an approval decides (a redelivery never adds to the history).
    if action == "submitted" and str(review.get("state")).lower() == "approved" and first_time(
            rt, repo, f"approved:{review['id']}") and rt.redis.sismember(keys.held_prs(repo), str(number)):
        audit.record(rt.redis, repo, "pr.approved", number=number, by=reviewer)  # chat news: still held
    return "applied" if changed else "unchanged"
