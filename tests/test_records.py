"""The stored encoding of PR states and verdict records (`core.verdict_format`, design §7 footprint).

Round trips are exact for every shape the workers write (table rows, adversarial ones included); a
record in no known format reads as unknown — never as free or as an empty state; records of the
earlier full format stay readable, and their counters keep counting. Real Redis, the real publish
path (dry-run GitHub).
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from redis import Redis

from core import keys, state_format, verdict_format
from core.exempt_labels import LabelGrant
from core.holds import Hold, Source
from core.prstate import Facts, PullState, PushEdge, Register
from core.repo_config import RepoConfig
from core.verdict import Verdict, verdict_record
from hook.verdicts.sources import _decode_record
from state import store, verdicts
from tests.chat_support import dry_runtime, manage
from tests.publish_now import publish
from workers.chat.rooms import place_hold

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
REPO = "Acme/Widgets"
URL = f"https://github.com/{REPO}/pull/7"


def _hold(source: str, holder: str = "", *, ident: str | None = None, scope: str = f"{REPO}#7",
          origin: str = "", expires: datetime | None = None, reason: str = "why") -> Hold:
    return Hold(id=ident or f"{source}:{holder.lower()}", source=Source(source), scope=scope, holder=holder,
                reason=reason, created_at=NOW, expires_at=expires, origin=origin)


HOLD_ROWS: dict[str, Hold] = {
    "comment on the PR page": _hold("comment", "alice", origin=f"{URL}#issuecomment-10001"),
    "holder spelled with capitals": _hold("comment", "Alice", origin=f"{URL}#issuecomment-1"),
    "comment id with a leading zero": _hold("comment", "bob", origin=f"{URL}#issuecomment-007"),
    "review anchor": _hold("review", "carol", origin=f"{URL}#pullrequestreview-55", reason="changes requested"),
    "label, no holder": _hold("label", ident="label:do-not-merge/hold", origin="label:do-not-merge/hold",
                              reason="label do-not-merge/hold"),
    "room hold on a branch glob": _hold("room", "dana", ident="room:9f2c", scope=f"{REPO}@release/*",
                                        origin="slack:#ops", expires=NOW + timedelta(hours=2)),
    "org room hold": _hold("room", "erin", ident="room:1", scope="acme", origin=""),
    "freeze": _hold("freeze", "friday", ident="freeze:friday", scope=REPO, origin="schedule:friday",
                    expires=NOW + timedelta(days=2)),
    "other host": _hold("comment", "gil", origin="https://ghe.example/Acme/Widgets/pull/7#issuecomment-3"),
    "other PR's page": _hold("comment", "hal", origin="https://github.com/Acme/Widgets/pull/70#issuecomment-3"),
    "bare PR URL": _hold("comment", "ivy", origin=URL),
    "empty reason": _hold("comment", "jo", reason="", origin=f"{URL}#issuecomment-2"),
    "room hold scoped by paths": replace(_hold("room", "kim", ident="room:slack:T1:U9:acme", scope="acme",
                                              origin="slack:#ops", reason="schema (db/migrations/1.sql)"),
                                         paths=("db/migrations/**", "!db/migrations/README.md")),
}


def _record(holds: tuple[Hold, ...], **over: Any) -> dict[str, Any]:
    verdict = Verdict(REPO, 7, holds, "3f2a9c1" * 5 + "abcde", "main", "feature/x", error=over.pop("error", None))
    status = {"state": "failure" if holds else "success", "description": "Held" if holds else "No holds",
              "target_url": over.pop("target_url", f"http://dash.example/{REPO}/pull/7")}
    record = verdict_record(verdict, version=over.pop("version", 4), computed_at=NOW, status=status,
                            hold_label=over.pop("hold_label", "do-not-merge/hold"))
    return {**record, "state_version": 11, **over}


VERDICT_ROWS: dict[str, dict[str, Any]] = {
    **{f"one hold: {name}": _record((hold,)) for name, hold in HOLD_ROWS.items()},
    "every hold at once": _record(tuple(HOLD_ROWS.values())),
    "free": _record(()),
    "error, nothing known": {**_record((), error="repo config not loaded"), "head_sha": None, "base": None,
                             "head_ref": None, "target_url": None, "hold_label": None},
    "target elsewhere": _record((), target_url="https://other.example/dash"),
    "no target": _record((), target_url=None),
    "other hold label": _record((), hold_label="blocked"),
    "odd time text": {**_record(()), "computed_at": "2026-01-05T10:00:00+00:00"},
    "no state_version": {k: v for k, v in _record(()).items() if k != "state_version"},
    "a field added later": {**_record(()), "queued_at": "soon"},
    "held_state pending": {**_record((HOLD_ROWS["freeze"],)), "state": "pending"},
    "held with an error": {**_record((HOLD_ROWS["freeze"],), error="config"), "state": "error"},
    "repo in lower case": {**_record((HOLD_ROWS["comment on the PR page"],)), "repo": "acme/widgets"},
}


@pytest.mark.parametrize("record", VERDICT_ROWS.values(), ids=VERDICT_ROWS.keys())
def test_verdict_round_trip_is_exact(record: dict[str, Any]) -> None:
    stored = verdict_format.encode_verdict(record)
    assert verdict_format.decode_verdict(stored, REPO, 7) == record
    assert verdict_format.decode_verdict(stored.encode(), str(record["repo"]).upper(), 7) == record
    assert len(stored) < len(json.dumps(record, separators=(",", ":")))


def test_the_bench_verdict_is_small() -> None:
    holds = (_hold("comment", "alice", origin=f"{URL}#issuecomment-10001", reason="waiting for the DB migration"),
             _hold("comment", "bob", origin=f"{URL}#issuecomment-10002", reason="security review pending"))
    assert len(verdict_format.encode_verdict(_record(holds))) <= 440


UNKNOWN_VERDICTS: dict[str, object] = {
    "not an object": [1, 2],
    "a later format": {**verdict_format.pack_verdict(_record(())), "f": 3},
    "format 2 without held": {k: v for k, v in verdict_format.pack_verdict(_record(())).items() if k != "h"},
    "held not a bool": {**verdict_format.pack_verdict(_record(())), "h": "no"},
    "holds not a list": {**verdict_format.pack_verdict(_record(())), "hs": {"a": 1}},
    "a hold not an object": {**verdict_format.pack_verdict(_record(())), "hs": ["x"]},
    "a comment id not a number": {**verdict_format.pack_verdict(_record(())), "hs": [{"h": "a", "pc": "x"}]},
    "repo not text": {**verdict_format.pack_verdict(_record(())), "r": ["acme/widgets"]},
    "an unknown legacy schema": {**_record(()), "schema": 2},
    "empty": {},
}


@pytest.mark.parametrize("data", UNKNOWN_VERDICTS.values(), ids=UNKNOWN_VERDICTS.keys())
def test_unknown_verdicts_are_not_established(data: object) -> None:
    """Never a record at all, so never free: the API and workers read None, the hook ``on_unknown``."""
    raw = json.dumps(data)
    assert verdict_format.expand_verdict(data, REPO, 7) is None and verdicts.parse(raw, REPO, 7) is None
    record, problem = _decode_record(raw.encode(), REPO, 7)
    assert record is None and problem == "the verdict record is in an unknown format"


def test_earlier_full_verdicts_read_as_they_are() -> None:
    record = _record((HOLD_ROWS["comment on the PR page"],))
    raw = json.dumps(record)
    assert verdicts.parse(raw, REPO, 7) == record and _decode_record(raw.encode(), REPO, 7) == (record, None)


def test_the_default_hold_label_is_the_configs() -> None:
    assert RepoConfig().hold_label == verdict_format.DEFAULT_HOLD_LABEL


def _register(**over: Any) -> Register:
    return replace(Register(at=NOW, held=True, ref="10001", reason="db", origin=f"{URL}#issuecomment-10001",
                            name="alice"), **over)


FACTS = Facts(at=NOW, head_sha="a" * 40, head_ref="feature/x", head_repo=REPO, base="main", author="octocat")
STATE_ROWS: dict[str, PullState] = {
    "nothing known": PullState(repo=REPO, number=7),
    "bench-like": PullState(repo=REPO, number=7, facts=FACTS, synced=True,
                            comments={"alice": _register(), "bob": _register(ref="10002", name="bob")}),
    "lift, capitalised name, no name, expiry, origin elsewhere": PullState(
        repo=REPO, number=7, facts=FACTS,
        comments={"alice": _register(held=False, reason=""), "carl": _register(name="Carl"),
                  "dee": _register(name=""), "eve": _register(expires_at=NOW + timedelta(hours=1), name="eve",
                                                              origin="https://ghe.example/x")}),
    "fork, closed draft, contested labels": PullState(
        repo=REPO, number=7, facts=replace(FACTS, head_repo="forker/widgets", open=False, draft=True,
                                           labels=("a", "do-not-merge/hold"), contested=("a",))),
    "fork with no head repo": PullState(repo=REPO, number=7, facts=replace(FACTS, head_repo="")),
    "repo in lower case": PullState(repo="acme/widgets", number=7, facts=replace(FACTS, head_repo="acme/widgets"),
                                    comments={"alice": replace(_register(), origin="")}),
    "a lift with a name and an origin": PullState(repo=REPO, number=7, comments={
        "alice": _register(held=False), "bob": _register(origin="", name="bob"),
        "cy": _register(ref="x1", origin=f"{URL}#issuecomment-x1", name="cy")}),
    "reviews, dismissals, pushes, labels, lift-all": PullState(
        repo=REPO, number=7, facts=FACTS, lifted_all_at=(NOW, "99"),
        reviews={"rita": _register(ref="5", origin=f"{URL}#pullrequestreview-5", name="rita", reason="")},
        dismissed=frozenset({"5"}), push_edges=(PushEdge("a" * 40, "b" * 40), PushEdge("b" * 40, "c" * 40, 1767225600)),
        labels={"do-not-merge/hold": Register(at=NOW, held=True, ref="1")}),
    "exempt labels granted, refused, removed": PullState(
        repo=REPO, number=7, facts=replace(FACTS, labels=("hotfix", "urgent")),
        grants={"hotfix": LabelGrant(NOW, True, by="mia", trusted=True, head_sha="a" * 40),
                "urgent": LabelGrant(NOW, True, by="tom", trusted=False, head_sha="a" * 40),
                "emergency": LabelGrant(NOW, False, by="mia")}),
}


@pytest.mark.parametrize("state", STATE_ROWS.values(), ids=STATE_ROWS.keys())
def test_state_round_trip_is_exact(state: PullState) -> None:
    stored = state_format.encode_state(state.to_dict(), 12)
    for spelling in (state.repo, state.repo.upper()):  # the key's repo, however the caller spells it
        data, version = state_format.decode_state(stored, spelling, 7)
        assert (PullState.from_dict(data), version) == (state, 12)


def test_state_fields_do_not_collide_with_stored_names() -> None:
    """Fields pass through unshortened when this module does not know them; a new field must not be
    spelled like a stored short name (it would be lost)."""
    full = STATE_ROWS["reviews, dismissals, pushes, labels, lift-all"].to_dict()
    shorts = {short for _, short in state_format._STATE} | {"f", "v"}
    assert not (set(full) - {name for name, _ in state_format._STATE}) & shorts
    assert set(_record(()) ) <= {name for name, _ in verdict_format._VERDICT} | {"schema"}


@pytest.mark.parametrize("raw", ["[1]", "not json", '{"f": 3, "v": 1}', '{"f": 2, "repo": "a/b"}',
                                 '{"f": 2, "v": 1, "repo": "a/b", "n": 1, "c": []}', '{"number": 1}'])
def test_unknown_states_raise(raw: str) -> None:
    with pytest.raises(verdict_format.UnknownFormat):
        state_format.decode_state(raw, REPO, 7)


# -- in Redis --------------------------------------------------------------------------------------


def test_a_state_write_is_one_key_carrying_its_version(redis_client: Redis) -> None:
    for expected in (1, 2):
        facts = replace(FACTS, base=f"b{expected}")
        store.update_pull(redis_client, REPO, 7, lambda s, f=facts: replace(s, facts=f))  # type: ignore[misc]
        assert store.load_pull_versioned(redis_client, REPO, 7)[1] == expected
    assert redis_client.keys("*") == [keys.pr_state(REPO, 7).encode()]


def test_an_earlier_state_keeps_counting_and_drops_its_counter(redis_client: Redis) -> None:
    old = STATE_ROWS["bench-like"]
    redis_client.set(keys.pr_state(REPO, 7), json.dumps(old.to_dict()))
    redis_client.set(keys.legacy_state_version(REPO, 7), 41)
    assert store.load_pull_versioned(redis_client, REPO, 7) == (old, 41)
    after, changed = store.update_pull(redis_client, REPO, 7, lambda s: replace(s, synced=False))
    assert changed and store.load_pull_versioned(redis_client, REPO, 7) == (after, 42)
    assert not redis_client.exists(keys.legacy_state_version(REPO, 7))


def test_an_unknown_state_is_never_overwritten_as_empty(redis_client: Redis) -> None:
    redis_client.set(keys.pr_state(REPO, 7), '{"f": 9}')
    with pytest.raises(verdict_format.UnknownFormat):
        store.update_pull(redis_client, REPO, 7, lambda s: replace(s, synced=True))
    assert redis_client.get(keys.pr_state(REPO, 7)) == b'{"f": 9}'


def _close(redis: Redis, number: int, is_open: bool) -> None:
    store.update_pull(redis, REPO, number, lambda s: replace(s, facts=replace(s.facts, open=is_open)))  # type: ignore[type-var]


def test_verdict_versions_keep_increasing_across_close_and_reopen(redis_client: Redis, redis_url: str) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, REPO, {7: "main"})
    publish(rt, REPO, 7, NOW)
    place_hold(redis_client, f"{REPO}#7", holder="dana", holder_id="slack:T1:dana", reason="db", origin="o",
               now=NOW, duration=None)
    publish(rt, REPO, 7, NOW)
    held = store.load_verdict(redis_client, REPO, 7)
    assert held is not None and held["version"] == 2 and held["held"] and held["state_version"] == 0
    assert not redis_client.exists(keys.verdict_version(REPO, 7))  # an open PR's is in its record
    _close(redis_client, 7, False)
    assert publish(rt, REPO, 7, NOW) == "closed"
    assert store.load_verdict(redis_client, REPO, 7) is None
    assert 0 < int(redis_client.ttl(keys.verdict_version(REPO, 7))) <= store.CLOSED_STATE_TTL
    _close(redis_client, 7, True)
    publish(rt, REPO, 7, NOW)
    reopened = store.load_verdict(redis_client, REPO, 7)
    assert reopened is not None and reopened["version"] == 3 and reopened["state_version"] == 2
    assert not redis_client.exists(keys.verdict_version(REPO, 7))


def test_an_earlier_verdict_is_read_and_its_version_continued(redis_client: Redis, redis_url: str) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, REPO, {7: "main"})
    old = {**_record(()), "version": 17, "state_version": 0}
    redis_client.set(keys.verdict(REPO, 7), json.dumps(old))
    redis_client.set(keys.verdict_version(REPO, 7), 17)
    assert store.load_verdict(redis_client, REPO, 7) == old
    place_hold(redis_client, f"{REPO}#7", holder="dana", holder_id="slack:T1:dana", reason="db", origin="o",
               now=NOW, duration=None)
    publish(rt, REPO, 7, NOW)
    new = store.load_verdict(redis_client, REPO, 7)
    assert new is not None and new["version"] == 18 and new["held"]
    assert json.loads(redis_client.get(keys.verdict(REPO, 7)) or b"")["f"] == verdict_format.FORMAT
    assert not redis_client.exists(keys.verdict_version(REPO, 7))
