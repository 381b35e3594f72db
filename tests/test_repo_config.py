"""The repo config: validation, the published JSON Schema agreeing with it, and the YAML loader's lines."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from core.repo_config import DEFAULT_CONFIG, ConfigError, FreezeWindow, from_mapping, to_mapping
from state.config_file import load_config

SCHEMA = json.loads((Path(__file__).parent.parent / "core" / "merge-hold.schema.json").read_text())


# --- a small JSON Schema checker: the keywords our schema uses, nothing more ---------------------

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_KNOWN = {"$schema", "title", "description", "type", "additionalProperties", "properties", "allOf",
          "$defs", "enum", "minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "anyOf", "not",
          "required", "$ref"}


def schema_valid(value: Any, schema: dict[str, Any] | None = None) -> bool:
    schema = SCHEMA if schema is None else schema
    assert set(schema) <= _KNOWN, f"the checker does not know {set(schema) - _KNOWN}"
    if "$ref" in schema:
        target: Any = SCHEMA
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        if not schema_valid(value, target):
            return False
    types = schema.get("type")
    if types is not None and not any(_TYPES[t](value) for t in ([types] if isinstance(types, str) else types)):
        return False
    if "enum" in schema and not any(value == e and type(value) is type(e) for e in schema["enum"]):
        return False
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", 10**9):
            return False
        # ECMA-262 `$` matches only at the very end; Python's before a final newline too.
        if "pattern" in schema and not re.search(schema["pattern"].replace("$", r"\Z"), value):
            return False
    if isinstance(value, list):
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", 10**9):
            return False
        if "items" in schema and not all(schema_valid(v, schema["items"]) for v in value):
            return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return False
        if any(k not in value for k in schema.get("required", ())):
            return False
        if not all(schema_valid(v, props[k]) for k, v in value.items() if k in props):
            return False
    if "allOf" in schema and not all(schema_valid(value, s) for s in schema["allOf"]):
        return False
    if "anyOf" in schema and not any(schema_valid(value, s) for s in schema["anyOf"]):
        return False
    return not ("not" in schema and schema_valid(value, schema["not"]))


def config_valid(value: Any) -> bool:
    try:
        from_mapping(value)
    except ConfigError:
        return False
    return True


W = {"name": "fri", "from": "16:00", "to": "23:59"}


def win(**extra: Any) -> dict[str, Any]:
    return {"freeze_windows": [{**W, **extra}]}


AGREEMENT: list[tuple[str, Any, bool]] = [
    ("null document", None, True),
    ("empty mapping", {}, True),
    ("every top-level key", {
        "hold_permission": "triage", "author_can_hold": False, "lift_others_permission": "admin",
        "shared_holds": True, "review_holds": False, "hold_label": "hold",
        "held_state": "pending", "feedback": "comments", "exempt_labels": ["hotfix"], "freeze_windows": []}, True),
    ("hyphen keys", {"hold-permission": "write", "lift-others-permission": "maintain", "held-state": "failure",
                     "exempt-labels": [], "freeze-windows": [], "review-holds": True}, True),
    ("both spellings", {"hold_label": "a", "hold-label": "b"}, False),
    ("mixed spelling", {"author-can_hold": True}, False),
    ("unknown key", {"hold_lable": "x"}, False),
    ("label_sync was never implemented and is gone", {"label_sync": True}, False),
    ("label-sync neither", {"label-sync": False}, False),
    ("top-level list", ["hold_label"], False),
    ("top-level string", "hold", False),
    ("bad held_state", {"held_state": "error"}, False),
    ("feedback off", {"feedback": "off"}, True),
    ("tree closer", {"close_on_failure": [{"branch": "main", "contexts": ["ci/build", "test"]}]}, True),
    ("tree closer hyphen key, glob", {"close-on-failure": [{"branch": "release/*", "contexts": ["ci"]}]}, True),
    ("tree closer no contexts", {"close_on_failure": [{"branch": "main", "contexts": []}]}, False),
    ("tree closer missing branch", {"close_on_failure": [{"contexts": ["ci"]}]}, False),
    ("tree closer unknown key", {"close_on_failure": [{"branch": "main", "contexts": ["ci"], "when": 1}]}, False),
    ("tree closer as mapping", {"close_on_failure": {"branch": "main", "contexts": ["ci"]}}, False),
    ("tree closer context not a string", {"close_on_failure": [{"branch": "main", "contexts": [3]}]}, False),
    ("feedback: off read by YAML as false", {"feedback": False}, True),
    ("feedback true", {"feedback": True}, False),
    ("feedback unknown mode", {"feedback": "emoji"}, False),
    ("feedback case", {"feedback": "Reactions"}, False),
    ("held_state case", {"held_state": "Failure"}, False),
    ("bad permission", {"hold_permission": "push"}, False),
    ("permission none", {"hold_permission": "none"}, False),
    ("bool as string", {"review_holds": "true"}, False),
    ("bool as int", {"shared_holds": 1}, False),
    ("empty label", {"hold_label": ""}, False),
    ("blank label", {"hold_label": "   "}, False),
    ("51-char label", {"hold_label": "x" * 51}, False),
    ("50-char label", {"hold_label": "x" * 50}, True),
    ("label list of numbers", {"exempt_labels": [1]}, False),
    ("labels not a list", {"exempt_labels": "hotfix"}, False),
    ("windows not a list", {"freeze_windows": W}, False),
    ("minimal window", win(), True),
    ("full window", win(days=["mon", "Friday", "weekends"], timezone="Europe/Berlin",
                        branches=["main", "release/*"], exempt_labels=["hotfix"]), True),
    ("window hyphen key", win(**{"exempt-labels": ["x"]}), True),
    ("window both spellings", win(exempt_labels=[], **{"exempt-labels": []}), False),
    ("days as alias string", win(days="weekdays"), True),
    ("days upper case", win(days=["MON", "Daily"]), True),
    ("bad day", win(days=["mo"]), False),
    ("empty days", win(days=[]), False),
    ("day as number", win(days=[1]), False),
    ("window missing name", {"freeze_windows": [{"from": "16:00", "to": "18:00"}]}, False),
    ("window missing to", {"freeze_windows": [{"name": "x", "from": "16:00"}]}, False),
    ("window unknown key", win(start="16:00"), False),
    ("name with spaces", win(name="Friday afternoon"), True),
    ("name starting with space", win(name=" fri"), False),
    ("name too long", win(name="x" * 65), False),
    ("single-digit hour", win(**{"from": "9:30"}), True),
    ("to 24:00", win(to="24:00"), True),
    ("from 24:00", win(**{"from": "24:00"}), False),
    ("25 o'clock", win(to="25:00"), False),
    ("minute 60", win(to="10:60"), False),
    ("time with seconds", win(to="10:00:00"), False),
    ("time as base-60 int", win(**{"from": 960}), False),
    ("time with trailing newline", win(to="10:00\n"), False),
    ("equal from and to (24 hours)", win(to="16:00"), True),
    ("zone path traversal", win(timezone="../etc/passwd"), False),
    ("zone with space", win(timezone="Europe/ Berlin"), False),
    ("empty branches", win(branches=[]), False),
    ("branch empty string", win(branches=[""]), False),
    ("branches as string", win(branches="main"), False),
    ("paths", win(paths=["db/migrations/**", "!db/migrations/README.md"]), True),
    ("paths any depth, directory, quoted", win(paths=["*.sql", "vendor/", "\\#notes", "/docs/**"]), True),
    ("paths empty", win(paths=[]), False),
    ("paths only excludes", win(paths=["!docs/**", "!*.md"]), False),
    ("paths as string", win(paths="db/**"), False),
    ("path empty string", win(paths=[""]), False),
    ("path blank", win(paths=["   "]), False),
    ("path a comment", win(paths=["#db"]), False),
    ("path a lone bang", win(paths=["db/**", "!"]), False),
    ("path a lone slash", win(paths=["/"]), False),
    ("path with a newline", win(paths=["db/\n**"]), False),
    ("path not a string", win(paths=[3]), False),
    ("path 256 chars", win(paths=["x" * 256]), False),
    ("51 paths", win(paths=[f"d{i}/" for i in range(51)]), False),
    ("50 paths", win(paths=[f"d{i}/" for i in range(50)]), True),
    ("deploy freeze", {"freeze_deployments": ["production", "staging"], "deployments_on_freeze": "reject"}, True),
    ("deploy freeze hyphen keys", {"freeze-deployments": ["production"], "deployments-on-freeze": "wait"}, True),
    ("deploy freeze none", {"freeze_deployments": []}, True),
    ("deploy freeze both spellings", {"freeze_deployments": [], "freeze-deployments": []}, False),
    ("deploy freeze mode both spellings", {"deployments_on_freeze": "wait", "deployments-on-freeze": "wait"}, False),
    ("deploy environments as string", {"freeze_deployments": "production"}, False),
    ("deploy environment empty", {"freeze_deployments": [""]}, False),
    ("deploy environment blank", {"freeze_deployments": ["  "]}, False),
    ("deploy environment not a string", {"freeze_deployments": [1]}, False),
    ("deploy environment 256 chars", {"freeze_deployments": ["x" * 256]}, False),
    ("deploy mode unknown", {"deployments_on_freeze": "queue"}, False),
    ("deploy mode case", {"deployments_on_freeze": "Reject"}, False),
    ("deploy mode typo key", {"deployment_on_freeze": "wait"}, False),
]


@pytest.mark.parametrize(("document", "valid"), [r[1:] for r in AGREEMENT], ids=[r[0] for r in AGREEMENT])
def test_schema_and_from_mapping_agree(document: Any, valid: bool) -> None:
    assert schema_valid(document) is valid
    assert config_valid(document) is valid


def test_unknown_zones_and_backward_ranges_are_what_only_from_mapping_knows() -> None:
    document = win(timezone="Mars/Olympus_Mons")
    assert schema_valid(document)
    with pytest.raises(ConfigError, match="unknown time zone 'Mars/Olympus_Mons'"):
        from_mapping(document)
    with pytest.raises(ConfigError, match="unknown time zone"):
        from_mapping(win(timezone="America"))  # a directory of the zone database
    reversed_range = win(paths=["[z-a].sql"])  # nor can it tell a glob whose range runs backwards
    assert schema_valid(reversed_range)
    with pytest.raises(ConfigError, match=r"freeze_windows\[0\]\.paths: path pattern '\[z-a\]\.sql' matches nothing"):
        from_mapping(reversed_range)


def test_the_checker_can_say_no() -> None:
    assert not schema_valid({"held_state": "nope"})
    assert schema_valid({"held_state": "pending"})


def test_values_are_normalised() -> None:
    config = from_mapping(win(days=["sun", "weekdays", "Sunday"], **{"from": "9:05"}, to="24:00",
                              exempt_labels=["a", "a", "b"]))
    assert config.freeze_windows == (FreezeWindow("fri", ("mon", "tue", "wed", "thu", "fri", "sun"),
                                                  "09:05", "24:00", "UTC", ("*",), ("a", "b")),)
    assert from_mapping({}) == DEFAULT_CONFIG and from_mapping(None) == DEFAULT_CONFIG


def test_to_mapping_round_trips() -> None:
    config = from_mapping({"held_state": "pending", **win(timezone="Asia/Tokyo", paths=["db/**", "!db/seeds/"]),
                           "freeze_deployments": ["production", "production", "eu"], "deployments_on_freeze": "reject"})
    assert config.freeze_deployments == ("production", "eu")
    mapping = to_mapping(config)
    assert schema_valid(mapping)
    assert from_mapping(json.loads(json.dumps(mapping))) == config


# --- the YAML loader ---------------------------------------------------------------------------

GOOD_YAML = """\
# merge-hold settings
hold-permission: write
review_holds: true
held_state: pending
exempt-labels: [hotfix]
freeze-windows:
  - name: friday
    days: [fri]
    from: 16:00          # unquoted: YAML 1.1 would read 960
    to: "23:59"
    timezone: Europe/Berlin
    branches: [main, "release/*"]
"""


def test_loads_a_good_file() -> None:
    config = load_config(GOOD_YAML)
    assert config.held_state == "pending" and config.exempt_labels == ("hotfix",)
    assert config.freeze_windows == (
        FreezeWindow("friday", ("fri",), "16:00", "23:59", "Europe/Berlin", ("main", "release/*")),
    )


@pytest.mark.parametrize("text", [None, "", "   \n", "# only a comment\n", "---\n"])
def test_no_file_or_empty_file_gives_defaults(text: str | None) -> None:
    assert load_config(text) == DEFAULT_CONFIG


LINE_ERRORS: list[tuple[str, str]] = [
    ("review_holds: true\nheld_state: nope\n",
     ".github/merge-hold.yml line 2: held_state must be failure or pending"),
    ("a: 1\nb: 2\nhold_lable: x\n", ".github/merge-hold.yml line 1: unknown key 'a'"),
    ("review_holds: true\n\n\nhold_lable: x\n", ".github/merge-hold.yml line 4: unknown key 'hold_lable'"),
    ("held_state: failure\nheld_state: pending\n", ".github/merge-hold.yml line 2: 'held_state' is given twice"),
    ("hold-label: a\nhold_label: b\n", ".github/merge-hold.yml line 2: 'hold_label' repeats 'hold-label'"),
    ("review_holds: maybe\n", ".github/merge-hold.yml line 1: review_holds must be true or false"),
    (GOOD_YAML.replace("Europe/Berlin", "Europe/Berln"),
     ".github/merge-hold.yml line 11: freeze-windows[0].timezone: unknown time zone 'Europe/Berln'"),
    (GOOD_YAML.replace('"23:59"', "'25:00'"), ".github/merge-hold.yml line 10: freeze-windows[0].to must be"),
    (GOOD_YAML.replace("[fri]", "[fri, funday]"), ".github/merge-hold.yml line 8: freeze-windows[0].days[1] must"),
    (GOOD_YAML.replace("    to:", "    until:"), ".github/merge-hold.yml line 10: unknown key"),
    ("freeze_windows:\n  - name: a\n    from: '1:00'\n", ".github/merge-hold.yml line 2: freeze_windows[0] needs 'to'"),
    ("held_state: [\n", ".github/merge-hold.yml line 2:"),
    ("held_state: failure\n  bad indent: x\n", ".github/merge-hold.yml line 2:"),
    ("- held_state\n", ".github/merge-hold.yml line 1: the top level must be a mapping"),
    ("--- {}\n--- {}\n", ".github/merge-hold.yml line 2:"),
    ("hold_label: !!python/object:os.system x\n", ".github/merge-hold.yml line 1:"),
    ("a: &a [*a]\n", ".github/merge-hold.yml line 1: the document is too large or too deep"),
    ("x: &x [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("xyzuv", "yzuvw", strict=True)),
     ".github/merge-hold.yml line 1: the document is too large"),
    ("[1]: x\n", ".github/merge-hold.yml line 1: keys must be names"),
]


@pytest.mark.parametrize(("text", "message"), LINE_ERRORS)
def test_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(text)
    assert str(caught.value).startswith(message), str(caught.value)


def test_custom_path_and_size_cap() -> None:
    with pytest.raises(ConfigError, match=r"^\.github/merge-hold\.yaml line 1: "):
        load_config("nope: 1", path=".github/merge-hold.yaml")
    with pytest.raises(ConfigError, match="larger than"):
        load_config("# " + "x" * 70_000)


def test_merge_keys_and_yaml_booleans() -> None:
    text = "base: &b {name: a, from: '1:00', to: '2:00'}\n"
    with pytest.raises(ConfigError, match="unknown key 'base'"):
        load_config(text)
    config = load_config("freeze_windows:\n  - &w {name: a, from: '1:00', to: '2:00'}\n"
                         "  - {<<: *w, name: b}\nreview_holds: no\n")
    assert [w.name for w in config.freeze_windows] == ["a", "b"] and config.review_holds is False
