"""What the guard's class tables share (issue 26: deferred execution, option grammars, client libraries,
remotes, look-alikes): a checkout of acme/widgets on ``feature`` with a throwaway home, and the guard's answer
for one command read there — ``clean``, ``determined`` (these merges, exactly) or ``undetermined``."""

from __future__ import annotations

from pathlib import Path

from hook.detect.model import Detection
from hook.detect.toolcall import detect

CLEAN, DET, UND = "clean", "determined", "undetermined"
REPO = "acme/widgets"


def make_checkout(root: Path, url: str = f"https://github.com/{REPO}.git", branch: str = "feature") -> Path:
    """``root/repo`` (origin ``url``, on ``branch``) and ``root/home`` (an empty home, no git or gh config)."""
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {url}\n')
    (repo / ".git" / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    (root / "home").mkdir()
    return repo


def read(command: str, repo: Path, env: dict[str, str] | None = None, tool: str = "Bash") -> Detection:
    base = {"HOME": str(repo.parent / "home"), "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
    return detect(tool, {"command": command}, cwd=str(repo), env={**base, **(env or {})})


def verdict(found: Detection) -> str:
    """Everything the guard judges (merges, lifts, tampers): none, all determined, or some undetermined."""
    if not found.gated:
        return CLEAN
    return UND if any(m.undetermined for m in found.gated) else DET


def judge(command: str, repo: Path, env: dict[str, str] | None = None) -> tuple[str, Detection]:
    found = read(command, repo, env)
    return verdict(found), found
