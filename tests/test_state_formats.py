"""Storage formats live in `state/` (issue 31 item 4): the posted-status form written and read by one
module (`state.posted_status`), and the one bytes → str helper (`state.decoding`) instead of a copy per
module."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from state import decoding, posted_status

ROOT = Path(__file__).resolve().parents[1]

RECORD = {"head_sha": "a" * 40, "state": "failure", "description": "Held by @alice: migration",
          "target_url": "https://mh.example/acme/widgets/pull/1"}


@pytest.mark.parametrize(("raw", "expected"), [
    (None, None),
    (b"", None),
    ("", None),
    (b"not json", None),
    (b"[1, 2]", None),  # JSON, but not this form's object
    (b'"text"', None),
    (b"null", None),
    (b'{"sha": "abc", "state": "success"}', {"sha": "abc", "state": "success"}),
    ('{"sha": "abc"}', {"sha": "abc"}),  # a client with decode_responses
])
def test_a_remembered_status_is_parsed_or_refused(raw: Any, expected: dict[str, Any] | None) -> None:
    assert posted_status.parse(raw) == expected


def test_the_form_is_the_stored_bytes_of_earlier_releases() -> None:
    """Stored keys are unchanged: the same sorted JSON the fenced write compared before the move."""
    wanted = posted_status.wanted_status(RECORD)
    assert wanted is not None
    sha, status = wanted
    assert posted_status.form(sha, status) == json.dumps({"sha": sha, **status}, sort_keys=True).encode()
    mark = {"state": "success", "context": "merge-hold/freeze", "description": "drained"}
    assert posted_status.form(sha, status, mark) == json.dumps({"sha": sha, **status, "mark": mark},
                                                               sort_keys=True).encode()
    assert posted_status.form(sha, status, None) == posted_status.form(sha, status, {})


@pytest.mark.parametrize(("record", "posted", "shown"), [
    (RECORD, {"sha": "a" * 40, "state": "failure", "description": "Held by @alice: migration"}, True),
    (RECORD, {"sha": "b" * 40, "state": "failure", "description": "Held by @alice: migration"}, False),
    (RECORD, {"sha": "a" * 40, "state": "success", "description": "Held by @alice: migration"}, False),
    (RECORD, {"sha": "a" * 40, "state": "failure", "description": "Held by @bob"}, False),
    (RECORD, None, False),
    (None, {"sha": "a" * 40}, False),
    ({"state": "failure"}, {}, False),  # a record without a head is never shown
])
def test_a_posted_status_shows_a_verdict_only_when_all_three_agree(
        record: dict[str, Any] | None, posted: dict[str, Any] | None, shown: bool) -> None:
    assert posted_status.shows(posted, record) is shown


def test_wanted_status_round_trips_through_the_form() -> None:
    wanted = posted_status.wanted_status(RECORD)
    assert wanted is not None
    assert posted_status.shows(posted_status.parse(posted_status.form(*wanted)), RECORD)
    assert posted_status.wanted_status({**RECORD, "head_sha": ""}) is None
    assert posted_status.wanted_status(None) is None


@pytest.mark.parametrize(("raw", "text", "maybe"), [
    (b"acme/widgets", "acme/widgets", "acme/widgets"),
    ("acme/widgets", "acme/widgets", "acme/widgets"),
    (b"", "", ""),
    (b"caf\xc3\xa9", "café", "café"),
    (7, "7", "7"),
    (None, "None", None),
])
def test_one_reading_of_redis_replies(raw: object, text: str, maybe: str | None) -> None:
    assert decoding.as_text(raw) == text
    assert decoding.maybe_text(raw) == maybe


INLINE = re.compile(r"(\w+)\.decode\(\) if isinstance\(\1, bytes\)")
SERVER_PACKAGES = ("core", "foundation", "state", "app", "workers", "merge_hold")
NOT_YET = {"core/outbox.py"}
"""The core's grammar may not import state (`tests/test_layers.py`): its reading stays its own."""


def test_the_bytes_to_text_reading_is_not_copied() -> None:
    found = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name.split("/")[0] not in SERVER_PACKAGES or name in NOT_YET \
                or name == "state/decoding.py":
            continue
        found += [f"{name}: {m.group(0)}" for m in INLINE.finditer(path.read_text(encoding="utf-8"))]
    assert not found, found


CONFIG_RULE_USERS = {"state/config_file.py", "state/store.py", "workers/events/repos.py"}
"""Where ``config_loaded`` may be read: the rule (`state.config_file.repo_config`), the meta's definition
and its writer (the config reload). Anyone else asking "is there a config?" asks the rule."""


def test_config_from_repo_meta_is_one_function() -> None:
    found = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name.split("/")[0] in SERVER_PACKAGES and name not in CONFIG_RULE_USERS:
            text = path.read_text(encoding="utf-8")
            found += [f"{name}: {word}" for word in ("config_loaded", "parse_config(meta") if word in text]
    assert not found, found
