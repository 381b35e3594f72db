"""`merge-hold token`: a token is shown once, stored only as a hash, listed by name, revoked by name."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from app.token_store import Grant, TokenStore, parse_grants, parse_tokens
from merge_hold.cli import main as cli_main
from merge_hold.tokens import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_create_prints_once_and_stores_the_hash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "conf" / "tokens"
    code, out, err = _run(capsys, "create", "ci-bot", "--file", str(path))
    token = out.strip()
    assert code == 0 and token.startswith("mhk_") and len(token) > 40
    assert "shown only this once" in err and token not in err
    content = path.read_text()
    assert content == f"ci-bot:{hashlib.sha256(token.encode()).hexdigest()}:read\n"  # least privilege by default
    assert token not in content
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TokenStore(str(path)).identify(token) is not None

    code, second, _ = _run(capsys, "create", "alice@example.com", "--file", str(path))
    assert code == 0 and second.strip() != token
    assert _run(capsys, "list", "--file", str(path))[1] == "alice@example.com\tread\t*\nci-bot\tread\t*\n"


def test_create_refuses_an_existing_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tokens"
    assert _run(capsys, "create", "ci", "--file", str(path))[0] == 0
    before = path.read_text()
    code, out, err = _run(capsys, "create", "ci", "--file", str(path))
    assert (code, out) == (1, "") and "exists" in err
    assert path.read_text() == before


@pytest.mark.parametrize("name", ["a:b", "two words", "-dash", "", "x" * 65, "ü", "a\nb"])
def test_invalid_names(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = _run(capsys, "create", "--file", str(tmp_path / "tokens"), "--", name)
    assert (code, out) == (64, "") and "invalid name" in err
    assert not (tmp_path / "tokens").exists()


@pytest.mark.parametrize("argv", [[], ["create"], ["rename", "x"], ["list", "extra"]])
def test_usage_errors_exit_64(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 64
    assert "usage: merge-hold token" in capsys.readouterr().err


def test_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tokens"
    path.write_text("# operators' tokens\nkeep:" + "a" * 64)  # hand-edited: no final newline
    path.chmod(0o640)
    _, token, _ = _run(capsys, "create", "gone", "--file", str(path))
    digest = hashlib.sha256(token.strip().encode()).hexdigest()
    assert parse_tokens(path.read_text()) == {"keep": "a" * 64, "gone": digest}
    store = TokenStore(str(path))
    assert store.identify(token.strip()) is not None
    assert _run(capsys, "revoke", "gone", "--file", str(path))[0] == 0
    assert path.read_text() == "# operators' tokens\nkeep:" + "a" * 64 + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert store.identify(token.strip()) is None
    code, _, err = _run(capsys, "revoke", "gone", "--file", str(path))
    assert code == 1 and "no token named 'gone'" in err
    assert [p.name for p in tmp_path.iterdir()] == ["tokens"]  # no temporary file left behind


def test_file_from_the_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MERGE_HOLD_"):
            monkeypatch.delenv(name)
    code, _, err = _run(capsys, "list")
    assert code == 78 and "MERGE_HOLD_API_TOKENS_FILE" in err
    monkeypatch.setenv("MERGE_HOLD_API_TOKENS_FILE", str(tmp_path / "tokens"))
    assert cli_main(["token", "create", "via-cli"]) == 0
    assert parse_tokens((tmp_path / "tokens").read_text()).keys() == {"via-cli"}


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("", {}),
        ("# comment\n\n", {}),
        ("a:" + "F" * 64, {"a": "f" * 64}),
        ("a:" + "f" * 63, {}),  # truncated hash
        (":" + "f" * 64, {}),  # no name
        ("a" + "f" * 64, {}),  # no separator
        ("a:b:" + "f" * 64, {}),  # names never hold a colon: the second field must be the hash
        ("  a:" + "f" * 64 + "  \r\n", {"a": "f" * 64}),
    ],
)
def test_parse_tokens(text: str, parsed: dict[str, str]) -> None:
    assert parse_tokens(text) == parsed


def test_store_without_a_file_accepts_nothing(tmp_path: Path) -> None:
    assert TokenStore(None).identify("anything") is None
    assert TokenStore(str(tmp_path / "missing")).identify("") is None
    assert TokenStore(None).names() == []


@pytest.mark.parametrize(("line", "grant"), [
    ("a:" + "f" * 64, Grant("f" * 64, "hook-events", ())),  # made before scopes: what it could do then
    ("a:" + "f" * 64 + ":read", Grant("f" * 64, "read", ())),
    ("a:" + "f" * 64 + ":hold:Acme+acme-labs", Grant("f" * 64, "hold", ("acme", "acme-labs"))),
    ("a:" + "f" * 64 + ":admin:", Grant("f" * 64, "admin", ())),
    ("a:" + "f" * 64 + ":root", None),  # an unknown scope grants nothing
    ("a:" + "f" * 64 + ":Read", None),
    ("a:" + "f" * 64 + ":read:acme:x", None),
])
def test_grants_are_parsed(line: str, grant: Grant | None) -> None:
    assert parse_grants(line).get("a") == grant


def test_create_with_scope_and_orgs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tokens"
    code, out, _ = _run(capsys, "create", "deploy", "--scope", "hold", "--org", "Acme", "--org", "beta",
                        "--file", str(path))
    assert code == 0
    identity = TokenStore(str(path)).identify(out.strip())
    assert identity is not None and (identity.scope, identity.orgs) == ("hold", ("acme", "beta"))
    assert identity.may("hold") and identity.may("read") and not identity.may("admin")
    assert identity.covers("acme/widgets#1") and identity.covers("BETA") and not identity.covers("other/x")
    assert _run(capsys, "list", "--file", str(path))[1] == "deploy\thold\tacme+beta\n"
    code, _, err = _run(capsys, "create", "x", "--org", "not/an-org", "--file", str(path))
    assert code == 1 and "organisation" in err
    with pytest.raises(SystemExit):
        main(["create", "y", "--scope", "root", "--file", str(path)])
