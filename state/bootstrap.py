"""An installation's bootstrap as recorded in Redis: which repos it adopts, since when, and how many of
their open PRs show a status (`core.bootstrap` turns it into a line). The work itself is the repos'
fan-outs (`workers.events.repos.bootstrap_job`); this module only counts."""

from __future__ import annotations

from collections.abc import Iterable

from redis import Redis

from core import keys
from core.bootstrap import Progress
from state.decoding import as_text

KEEP_SECONDS = 7 * 24 * 3600
"""A bootstrap record lasts a week after its last start."""




def start(redis: Redis, installation_id: int, repos: Iterable[str], now: float) -> None:
    """Repos adopted by the installation's bootstrap (a later batch of the same installation adds to it;
    one that comes after the last one ended starts a new record)."""
    names = [r.lower() for r in repos]
    if not names:
        return
    record, members = keys.bootstrap(installation_id), keys.bootstrap_repos(installation_id)
    current = progress(redis, installation_id)
    with redis.pipeline() as pipe:
        if current is not None and current.done:
            pipe.delete(record, members)
        if current is None or current.done:
            pipe.hset(record, "started", now)
        pipe.sadd(members, *names)
        pipe.expire(record, KEEP_SECONDS)
        pipe.expire(members, KEEP_SECONDS)
        pipe.sadd(keys.BOOTSTRAPS, installation_id)
        pipe.execute()


def installations(redis: Redis) -> list[int]:
    """Installations with a bootstrap record, oldest id first (records that lapsed are forgotten)."""
    found = []
    for raw in redis.smembers(keys.BOOTSTRAPS):
        inst = int(as_text(raw))
        if redis.exists(keys.bootstrap(inst)):
            found.append(inst)
        else:
            redis.srem(keys.BOOTSTRAPS, inst)
    return sorted(found)


def progress(redis: Redis, installation_id: int) -> Progress | None:
    """How far the installation's bootstrap is: a repo counts as listed once its fan-out has planned a
    pass, a PR as reached once a status of ours was posted on it."""
    started = redis.hget(keys.bootstrap(installation_id), "started")
    if started is None:
        return None
    repos = sorted(as_text(r) for r in redis.smembers(keys.bootstrap_repos(installation_id)))
    with redis.pipeline(transaction=False) as pipe:
        for repo in repos:
            pipe.hget(keys.fanout(repo), "gen")
            pipe.smembers(keys.open_prs(repo))
        answers = pipe.execute()
    listed = 0
    numbers: list[tuple[str, int]] = []
    for i, repo in enumerate(repos):
        gen, open_numbers = answers[2 * i], answers[2 * i + 1]
        if int(gen or 0) > 0:
            listed += 1
        numbers += [(repo, int(as_text(n))) for n in open_numbers]
    with redis.pipeline(transaction=False) as pipe:
        for repo, number in numbers:
            pipe.exists(keys.posted(repo, number))
        posted = sum(bool(x) for x in pipe.execute()) if numbers else 0
    return Progress(installation_id=installation_id, started=float(as_text(started)), repos=len(repos),
                    repos_listed=listed, open_prs=len(numbers), with_status=posted)
