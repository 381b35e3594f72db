"""The local git repository's answers for the guard's ``git push`` rule: does a commit contain another?
(Not a verdict source: `hook.verdicts` reads merge-hold's verdicts; this asks git.)

A push onto a held PR's base branch lands that PR when the pushed commit contains the PR's head
(GitHub then marks it merged); the guard asks ``git merge-base --is-ancestor HEAD_SHA COMMIT`` in the
directory the push runs from (a worktree or ``git -C`` path works as git itself resolves it). Only
pushes whose target is the base of a held PR get here. git is started with ``os.posix_spawnp``:
``subprocess`` would import threading, selectors and signal (≈ 10 ms of the guard's budget).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

GIT_TIMEOUT_S = 3.0
"""Per git call; far inside the agent's hook timeout. A git that does not answer leaves doubt (None)."""


def _git(gitdir: str, *args: str) -> int | None:
    """git's exit status; None when it cannot be started or does not finish in time."""
    import os
    import time

    if not hasattr(os, "posix_spawnp"):  # Windows
        import subprocess

        try:
            return subprocess.run(["git", "-C", gitdir, *args], capture_output=True, timeout=GIT_TIMEOUT_S,
                                  check=False).returncode
        except (OSError, subprocess.SubprocessError):
            return None
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        pid = os.posix_spawnp("git", ["git", "-C", gitdir, *args], dict(os.environ), file_actions=quiet)
    except OSError:
        return None
    deadline = time.monotonic() + GIT_TIMEOUT_S
    pause = 0.001
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (SIGCHLD ignored by whoever started us): doubt
            return None
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


OUTPUT_CAP = 65536
"""Bytes of git's output `_git_lines` keeps."""


def _git_lines(gitdir: str, *args: str) -> list[str] | None:
    """git's output lines (the first 64 KB); None when git fails, cannot be started or does not finish in time."""
    import os
    import time

    if not hasattr(os, "posix_spawnp"):  # Windows
        import subprocess

        try:
            done = subprocess.run(["git", "-C", gitdir, *args], capture_output=True, timeout=GIT_TIMEOUT_S,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.decode(errors="replace").splitlines() if done.returncode == 0 else None
    read_end, write_end = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, write_end, 1),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0), (os.POSIX_SPAWN_CLOSE, read_end)]
    try:
        pid = os.posix_spawnp("git", ["git", "-C", gitdir, *args], dict(os.environ), file_actions=actions)
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    os.close(write_end)
    os.set_blocking(read_end, False)
    deadline, out, pause = time.monotonic() + GIT_TIMEOUT_S, b"", 0.001
    code: int | None = None  # git's wait status, once reaped: a pid is waited for once only
    while True:
        try:
            chunk = os.read(read_end, OUTPUT_CAP)
        except BlockingIOError:
            chunk = None
        if chunk:
            out = (out + chunk)[:OUTPUT_CAP]
            continue
        if code is None:
            try:
                finished, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else (SIGCHLD ignored by our parent): doubt
                os.close(read_end)
                return None
            if finished:
                code = status
        if code is not None and chunk is not None:  # exited, and the pipe is drained (EOF)
            break
        if time.monotonic() > deadline:
            if code is None:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                os.close(read_end)
                return None
            break  # git exited; a process it started keeps the pipe open: what git wrote is all there is
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    os.close(read_end)
    return out.decode(errors="replace").splitlines() if os.waitstatus_to_exitcode(code) == 0 else None


def changes(gitdir: str, commits: Sequence[str], paths: Sequence[str]) -> bool | None:
    """True when a commit the push would send (one of ``commits`` or their history, not yet on any remote
    branch this clone knows) changes one of ``paths``; False when none does; None when git cannot tell."""
    for commit in commits:
        if _git(gitdir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}") == 1:
            continue  # names nothing yet (a branch the command creates): nothing to send from it
        lines = _git_lines(gitdir, "log", "--format=%H", "-1", commit, "--not", "--remotes", "--", *paths)
        if lines is None:
            return None
        if any(line.strip() for line in lines):
            return True
    return False


def changed_files(gitdir: str, commits: Sequence[str]) -> list[str] | None:
    """The files changed by what a push would send (``commits`` and their history not yet on any remote
    branch this clone knows), for a freeze scoped by path; None when git cannot tell."""
    found: list[str] = []
    for commit in commits:
        if _git(gitdir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}") == 1:
            continue  # names nothing yet (a branch the command creates): nothing to send from it
        lines = _git_lines(gitdir, "-c", "core.quotePath=false", "log", "--format=", "--name-only", "--no-renames",
                           commit, "--not", "--remotes")
        if lines is None or sum(len(line) + 1 for line in lines) >= OUTPUT_CAP - 4096:
            return None  # git's answer, or the whole of it, is not known: the freeze binds
        found += [line for line in lines if line.strip()]
    return found


def contains(gitdir: str, head_sha: str, commits: Sequence[str]) -> bool | None:
    """True when one of ``commits`` contains ``head_sha``; False when none does; None when git cannot tell.

    A head this repository does not have is in no history it can push; a commit-ish that names nothing
    (a branch not created yet) pushes nothing now (what the command creates is in ``commits`` too)."""
    if not head_sha or not all(c in "0123456789abcdef" for c in head_sha.lower()):
        return None
    for commit in commits:
        code = _git(gitdir, "merge-base", "--is-ancestor", head_sha, commit)
        if code == 0:
            return True
        if code == 1:
            continue
        if _git(gitdir, "rev-parse", "--verify", "--quiet", f"{head_sha}^{{commit}}") == 1:
            return False
        if _git(gitdir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}") == 1:
            continue
        return None
    return False


def already_there(gitdir: str, commits: Sequence[str], ref: str) -> bool | None:
    """True when every one of ``commits`` is the commit ``ref`` names (a remote-tracking ref: the push writes
    nothing new there); False when one is not, or ``ref`` names nothing; None when git cannot tell."""
    if not commits or any(c.startswith("-") for c in (*commits, ref)):
        return None
    lines = _git_lines(gitdir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if lines is None:
        return False if _git(gitdir, "rev-parse", "--git-dir") == 0 else None  # no such ref: all of it is new
    there = lines[0].strip() if lines else ""
    for commit in commits:
        found = _git_lines(gitdir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        if found is None or not found or found[0].strip() != there:
            return False
    return True


def local_branches(gitdir: str) -> list[str] | None:
    """The clone's local branches (what ``git push --all`` sends); None when git cannot tell."""
    lines = _git_lines(gitdir, "for-each-ref", "--format=%(refname)", "refs/heads/")
    return None if lines is None else [line.strip()[len("refs/heads/") :] for line in lines if line.strip()]
