"""One comment on a PR, at most once whatever the redeliveries: the incident and tamper-watch answers.

A marker is claimed (SET NX) before posting, so two workers handling duplicates never both post. A
refusal (no Issues: write, the PR gone) keeps the marker: asking again would be refused again, and the
record, chat and dashboard still tell. GitHub down or unreachable releases the marker and raises, so the
delivery's retry posts it later.
"""

from __future__ import annotations

import logging

from github import GithubException

from workers.github.gateway import NotFound
from workers.runtime import Runtime

log = logging.getLogger(__name__)

MARKER_TTL = 30 * 24 * 3600
"""Longer than any redelivery (three days) and than a tamper episode usually lasts."""


def post_once(rt: Runtime, repo: str, number: int, marker: str, body: str) -> str:
    """Post ``body`` on ``repo#number`` unless ``marker`` was claimed; returns what happened
    (``posted``, ``answered already``, ``refused: …``)."""
    if not rt.redis.set(marker, "1", nx=True, ex=MARKER_TTL):
        return "answered already"
    try:
        rt.github.reply(repo, number, body)
    except NotFound as exc:
        log.warning("could not answer on %s#%s: %s", repo, number, exc)
        return f"refused: {exc}"
    except GithubException as exc:
        if exc.status is not None and exc.status < 500:
            log.warning("GitHub refused the answer on %s#%s (needs Issues: write): %s", repo, number, exc.status)
            return f"refused: {exc.status}"
        rt.redis.delete(marker)
        raise
    except OSError:
        rt.redis.delete(marker)
        raise
    return "posted"
