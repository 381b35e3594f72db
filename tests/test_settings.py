"""`foundation.settings.from_env`: every bad or missing value fails at start, naming the variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundation.settings import FIELDS, Settings, SettingsError, from_env, require

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MERGE_HOLD_FOO": "1"}, "MERGE_HOLD_FOO"),
        ({"MERGE_HOLD_": "1"}, "MERGE_HOLD_"),
        ({"MERGE_HOLD_DRY_RUN": "1", "MERGE_HOLD_DRYRUN": "1"}, "MERGE_HOLD_DRYRUN"),  # a typo is not a default
        ({"GITHUB_API_URL": "api.github.com"}, "GITHUB_API_URL"),
        ({"GITHUB_API_URL": "ftp://github.example"}, "GITHUB_API_URL"),
        ({"GITHUB_APP_ID": "123"}, "GITHUB_PRIVATE_KEY"),
        ({"GITHUB_PRIVATE_KEY": PEM}, "GITHUB_APP_ID"),
        ({"GITHUB_APP_ID": "12x", "GITHUB_PRIVATE_KEY": PEM}, "GITHUB_APP_ID"),
        ({"GITHUB_APP_ID": "-1", "GITHUB_PRIVATE_KEY": PEM}, "GITHUB_APP_ID"),
        ({"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": "not a key"}, "GITHUB_PRIVATE_KEY"),
        ({"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY_PATH": "/nonexistent/key.pem"}, "GITHUB_PRIVATE_KEY_PATH"),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL"),
        ({"MERGE_HOLD_DRY_RUN": "maybe"}, "MERGE_HOLD_DRY_RUN"),
        ({"MERGE_HOLD_MAX_BODY_BYTES": "lots"}, "MERGE_HOLD_MAX_BODY_BYTES"),
        ({"MERGE_HOLD_WRITE_RATE": "0"}, "MERGE_HOLD_WRITE_RATE"),
        ({"MERGE_HOLD_PUBLIC_URL": "dash.example"}, "MERGE_HOLD_PUBLIC_URL"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as error:
        from_env(env)
    assert str(error.value).startswith(named + ":")


def test_defaults_from_an_empty_environment() -> None:
    settings = from_env({})
    assert settings == Settings()
    assert (settings.github_api_url, settings.redis_url, settings.has_app_credentials) == (
        "https://api.github.com", None, False)


def test_a_full_environment(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text(PEM)
    settings = from_env({
        "REDIS_URL": "rediss://redis.internal:6380/2",
        "GITHUB_APP_ID": "4242",
        "GITHUB_PRIVATE_KEY_PATH": str(key),
        "GITHUB_WEBHOOK_SECRET": "s",
        "GITHUB_API_URL": "https://ghe.example/api/v3/",
        "MERGE_HOLD_SLACK_TEAMS": "T1=Acme+acme-labs, T2,,",
        "MERGE_HOLD_DRY_RUN": "yes",
        "MERGE_HOLD_MAX_BODY_BYTES": "1024",
        "MERGE_HOLD_APP_SLUG": "merge-hold",
        "MERGE_HOLD_API_TOKENS_FILE": "/etc/merge-hold/tokens",
        "PATH": "/usr/bin",  # unrelated variables are none of our business
    })
    assert settings.github_private_key == PEM and settings.github_app_id == 4242
    assert settings.github_api_url == "https://ghe.example/api/v3"
    assert settings.slack_teams == (("T1", ("acme", "acme-labs")), ("T2", ()))  # a bare id: bound to no org
    assert (settings.dry_run, settings.max_body_bytes, settings.bot_login) == (True, 1024, "merge-hold[bot]")
    assert settings.api_tokens_file == "/etc/merge-hold/tokens"


def test_every_merge_hold_variable_is_known() -> None:
    for name in FIELDS:
        if name.startswith("MERGE_HOLD_"):
            numeric = any(w in name for w in ("RATE", "BURST", "BYTES", "SECONDS", "REPLICAS", "HOURLY"))
            samples = {"MERGE_HOLD_FREEZE_MODE": "ruleset", "MERGE_HOLD_WEBHOOK_ALLOW_NETWORKS": "10.0.0.0/8"}
            sample = samples.get(name) or (
                "https://x" if name.endswith("_URL") else "1" if numeric else "true")
            from_env({name: sample})


@pytest.mark.parametrize(("raw", "mode"), [("ruleset", "ruleset"), ("Statuses", "statuses"), ("", "statuses"),
                                           ("rulesets", None)])
def test_the_freeze_mode_is_one_of_two(raw: str, mode: str | None) -> None:
    if mode is None:
        with pytest.raises(SettingsError, match="MERGE_HOLD_FREEZE_MODE: expected statuses or ruleset"):
            from_env({"MERGE_HOLD_FREEZE_MODE": raw})
    else:
        assert from_env({"MERGE_HOLD_FREEZE_MODE": raw}).freeze_mode == mode
    assert from_env({}).freeze_mode == "statuses" and from_env({}).write_hourly == 450


def test_require_names_what_a_command_needs() -> None:
    with pytest.raises(SettingsError, match=r"^REDIS_URL: required"):
        require(from_env({}), "REDIS_URL")
    require(from_env({"REDIS_URL": "redis://r"}), "REDIS_URL")


@pytest.mark.parametrize("raw", ["=acme", "T1=acme/widgets", "T1=ac me", "T1=acme+ev!l"])
def test_a_malformed_chat_binding_fails_at_start(raw: str) -> None:
    for name in ("MERGE_HOLD_SLACK_TEAMS", "MERGE_HOLD_MATTERMOST_TEAMS"):
        with pytest.raises(SettingsError, match=name):
            from_env({name: raw})
