"""Rows an outside check found answered "no merge" while bash merges: array elements assigned one by
one, `declare -a`, and a git alias defined by `git config` earlier in the same command. Each row is
what the guard must answer *before* anything runs (the differential test runs bash first, which would
write the alias into the config file the guard then reads, so these rows live here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hook.detect.toolcall import detect

HOME_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/widgets.git\n')
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature\n")
    (tmp_path / "home").mkdir()
    return repo


# (command, [(repo, pr)] it merges, undetermined?)
ROWS: list[tuple[str, list[tuple[str | None, int | None]], bool]] = [
    ('a[0]=gh; a[1]=pr; a[2]=merge; "${a[@]}" 5 -R acme/other', [("acme/other", 5)], False),
    ('a=(gh pr); a[2]=merge; "${a[@]}" 5', [("acme/widgets", 5)], False),
    ('x=gh; x[1]=pr; "${x[@]}" merge 7', [("acme/widgets", 7)], False),
    ('a=(gh pr merge 4); a[3]=5; "${a[@]}"', [("acme/widgets", 5)], False),
    ('a[0]=echo; "${a[@]}" gh pr merge 5', [], False),
    ('i=1; a[$i]=5; gh pr merge "${a[@]}"', [("acme/widgets", None)], True),
    ('a[5]=gh; "${a[@]}" pr merge 5', [("acme/widgets", 5)], True),  # sparse: not modelled
    ('declare -a a=(gh pr merge 2 -R acme/other); "${a[@]}"', [("acme/other", 2)], False),
    ('local a=(echo gh pr merge 2); "${a[@]}"', [], False),
    # the alias merges now, and is set up for any later `git m` too (issue 26 item 1): undetermined as well
    ("git config alias.m '!gh pr merge 2 -R acme/other' && git m", [("acme/other", 2)], True),
    ("git config --global alias.m '!gh pr merge 3'; git m", [("acme/widgets", 3)], True),
    ("git config alias.st status && git st", [], False),
    ("git config --get alias.m; git m", [], False),
    ("git config --file other.cfg alias.m '!gh pr merge 2'; git m", [("acme/widgets", None)], True),
    ('k=alias.m; git config "$k" "!gh pr merge 3"; git m', [("acme/widgets", 3)], True),
    ('read k; git config "$k" "!gh pr merge 3"; git m', [("acme/widgets", None)], True),
    # a push without a refspec writes what push.default and remote.<name>.push say (redteam probe)
    ("git config remote.origin.push HEAD:main; git push", [("acme/widgets", None)], True),
    ("git -c remote.origin.push=HEAD:main push", [("acme/widgets", None)], True),
    ("git config push.default upstream; git branch -u origin/main; git push", [("acme/widgets", None)], True),
    ("git push -u origin HEAD:main; git push", [("acme/widgets", None)], True),
    ("git config user.name x; git push", [], False),
    ("git -c push.default=nothing push", [], False),
    # another repository than the directory's
    ("GIT_DIR=../other/.git git push origin HEAD:main", [(None, None)], True),
    ("git --git-dir=../other/.git push origin HEAD:main", [(None, None)], True),
    # configuration from the environment of the command; curl options from a file
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.m GIT_CONFIG_VALUE_0='!gh pr merge 5' git m",
     [("acme/widgets", None)], True),
    ("curl -K <(echo 'url = \"https://api.github.com/repos/acme/widgets/pulls/5/merge\"') -X PUT",
     [(None, None)], True),
    # deferred runners and containers (issue 15): what they run runs later or elsewhere, never determined
    ("echo '*/5 * * * * gh pr merge 5' | crontab -", [("acme/widgets", 5)], True),
    ("crontab <<'EOF'\nGH_REPO=acme/other\n@reboot gh pr merge 5 -R acme/other\nEOF", [("acme/other", 5)], True),
    ("at now + 1 minute <<< 'gh pr merge 5'", [("acme/widgets", 5)], True),
    ("echo 'gh pr merge 5' | batch", [("acme/widgets", 5)], True),
    ("at -f job.sh now", [("acme/widgets", None)], True),  # a job file this text does not show
    ("systemd-run --user --on-active=60 gh pr merge 5", [("acme/widgets", 5)], True),
    ("systemd-run --unit=m -p Nice=5 -- gh pr merge 5 -R acme/other", [("acme/other", 5)], True),
    ("launchctl submit -l m -- /usr/local/bin/gh pr merge 5", [("acme/widgets", 5)], True),
    ("pueue add -- gh pr merge 5", [("acme/widgets", 5)], True),
    ("tmux send-keys -t work 'gh pr merge 5' Enter", [("acme/widgets", 5)], True),
    ("screen -S w -X stuff 'gh pr merge 5\n'", [("acme/widgets", 5)], True),
    ("docker run --rm -e GH_TOKEN ghcr.io/cli/cli pr merge 5 -R acme/widgets", [("acme/widgets", 5),
                                                                                ("acme/widgets", None)], True),
    ("podman run --rm -e GH_TOKEN=$T img gh pr merge 5", [(None, 5), ("acme/widgets", None)], True),
    ("nerdctl exec -it box gh pr merge 5 -R acme/other", [("acme/other", 5), ("acme/widgets", None)], True),
    ("kubectl exec deploy/bot -- gh pr merge 5 -R acme/other", [("acme/other", 5), ("acme/widgets", None)], True),
    ("kubectl run once --image=ghcr.io/cli/cli --restart=Never -- pr merge 5 -R acme/other",
     [("acme/other", 5), ("acme/widgets", None)], True),
    ("docker compose run --rm bot gh pr merge 5", [(None, 5), ("acme/widgets", None)], True),
    ("ssh ci 'cd widgets && gh pr merge 5'", [(None, 5), ("acme/widgets", None)], True),
    ("docker ps && kubectl get pods && tmux ls && crontab -l && at -l", [], False),
    # gh repo sync DEST merges upstream into DEST's branch (POST merge-upstream): the PRs it lands are not in the
    # text. Without DEST it fast-forwards the local clone only; the push that publishes it is judged by itself
    ("gh repo sync acme/other --branch main", [("acme/other", None)], True),
    ("gh repo sync https://github.com/acme/other -b dev --force", [("acme/other", None)], True),
    ('gh repo sync "$DEST"', [(None, None)], True),
    ("gh repo sync --frob acme/other", [(None, None)], True),
    ("gh repo sync", [], False),
    ("gh repo sync --branch v1 --source acme/upstream", [], False),
    ("gh repo sync --help acme/other", [], False),
    ("echo 'gh repo sync acme/other' && gh repo view acme/other", [], False),
]


@pytest.mark.parametrize(("command", "merges", "undetermined"), ROWS, ids=[r[0][:40] for r in ROWS])
def test_the_guard_reads_it_as_bash_runs_it(checkout: Path, command: str,
                                            merges: list[tuple[str | None, int | None]], undetermined: bool) -> None:
    env = {**HOME_ENV, "HOME": str(checkout.parent / "home")}
    found = detect("Bash", {"command": command}, cwd=str(checkout), env=env)
    got = [(m.repo, m.pr) for m in found.merges]
    assert any(m.undetermined for m in found.merges) is undetermined, found
    if undetermined:
        assert {r for r, _ in got} <= {r for r, _ in merges} | {None}, found
    else:
        assert got == merges, found
