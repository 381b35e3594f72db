"""What makes text handed to a program the guard does not read *merge-shaped* (design §6, hook/detect/opaque.py):
words and path segments, not substrings.

A merge word is ``merge`` as a word of its own or the first word of a compound that acts (``merge``,
``merge-async``, ``mergePullRequest``, ``merge_pull_request``, ``merge-pr``, ``automerge``), ``enqueue``,
``updateRef``, ``createCommitOnBranch``; not an inflection or an attribute (``mergeable``, ``merged_at``,
``--no-merges``, ``mergeStateStatus``, ``merge_commit_sha``, ``git merge-base``). A GitHub API path is one by
its segments: ``repos/OWNER/NAME…`` where it starts a path, or after GitHub's API host, ``/api/v3`` or a base
URL only the run knows (``$API/repos/…``) — not ``~/repos/project``. Plus the words ``gh``, ``push``, ``curl``,
``wget``, ``graphql``, ``mutation``, the stack tools' ``land`` and ``ship``, lifts (``/unhold``,
``--remove-label``) and gh's repository variables.

Words are split the way identifiers are written: at anything but letters, digits, ``_`` and ``-`` for a token,
then at ``_``, ``-``, a lower-to-upper change and digits for its words. Plain ``str`` work: no ``re`` on the
guard's path (start-up budget, design §7).
"""

from __future__ import annotations

from hook.shell.syntax import DYN

_QUOTING = str.maketrans("", "", "'\"\\`")
SHAPED = ("api.github", "/api/v3", "/pulls/", "gh_repo", "gh_host", "unhold", "remove-hold", "hold cancel",
          "remove-label")
"""Markers merge-shaped wherever they appear (each is a prefilter keyword too, but for gh's variables)."""
SHAPED_WORDS = frozenset({"gh", "push", "curl", "wget", "land", "ship", "graphql", "mutation"})
"""Whole tokens that are merge-shaped (`land` and `ship` are the stack tools' merge words: ``spr land``,
``ghstack land``, ``git town ship``)."""
_INFLECTIONS = frozenset({"merged", "merges", "merging", "mergeable", "mergeability", "mergeably", "merger",
                          "mergers", "mergeables", "mergesort", "mergetool", "mergetools"})
_ATTRIBUTES = frozenset({"state", "status", "statuses", "commit", "commits", "sha", "base", "able", "ability",
                         "conflict", "conflicts", "group", "message", "title", "time", "date", "at", "by", "info",
                         "check", "checks", "tree", "file", "files", "driver", "ff", "log", "strategy", "hold", "sort",
                         "sorted", "sorting"})
"""Words after ``merge`` that make it a field or a local git notion, not an act: ``mergeStateStatus``,
``merge_commit_sha``, ``merge-base``, ``mergeGroup`` (the merge queue's webhook), ``merge.driver``, and this
project's own name (``merge-hold``: its paths, its status context)."""
_ACTS = frozenset({"enqueue", "automerge", "unhold"})
_PHRASES = ("update ref", "update refs", "create ref", "create commit on branch")
_API_BEFORE = frozenset({"", "api.github.com", "v3", "api", "agents"})
_PATH_START = frozenset(" \t\n=:(@,;|&<>[{")


def merge_shaped(text: str) -> bool:
    """Whether ``text`` names a merge (see the module's docstring). Text a program the guard does not read is
    handed (arguments, stdin, a here-document, a named file) makes the answer undetermined when it is
    merge-shaped; anything else such a program cannot be steered to merge by this command."""
    lowered = text.lower()
    bare_text = text.translate(_QUOTING)
    bare = bare_text.lower()
    for part in SHAPED:
        if part in bare or part in lowered:
            return True
    if _api_path(bare, "repos/") or _api_path(bare, "repositories/"):
        return True
    return any(token.lower() in SHAPED_WORDS or acts(words(token)) for token in tokens(bare_text))


NAME_WORDS = frozenset({"gh", "push", "land", "ship", "curl", "wget"})
"""Words that make a program's or a script's own name merge-shaped (``ship_it``, ``land.py``, ``push-docs``)."""


def name_shaped(base: str) -> bool:
    """A program's or script's base name says what it is for: merge-shaped as text, or one of its words (split at
    ``.``, ``_``, ``-`` and case) is a merge act or one of `NAME_WORDS` (not ``graphql-codegen``)."""
    if merge_shaped(base):
        return True
    parts = [w for token in tokens(base) for w in words(token)]
    return acts(parts) or any(w in NAME_WORDS for w in parts)


def tokens(text: str) -> list[str]:
    """Runs of letters, digits, ``_`` and ``-`` (``--no-merges``, ``merge_commit_sha``, ``mergePullRequest``)."""
    out, start = [], -1
    for k, c in enumerate(text):
        if c.isalnum() or c in "_-":
            if start < 0:
                start = k
        elif start >= 0:
            out.append(text[start:k])
            start = -1
    if start >= 0:
        out.append(text[start:])
    return out


def words(token: str) -> list[str]:
    """A token's words, lower case: split at ``_``, ``-``, a lower-to-upper change (``mergePullRequest``), an
    upper run before a capitalised word (``PRMerge``) and between letters and digits."""
    out: list[str] = []
    cur = ""
    for k, c in enumerate(token):
        if c in "_-":
            if cur:
                out.append(cur)
            cur = ""
            continue
        if cur:
            prev = cur[-1]
            nxt = token[k + 1] if k + 1 < len(token) else ""
            if (prev.islower() and c.isupper()) or (prev.isupper() and c.isupper() and nxt.islower()) or (
                    prev.isdigit() != c.isdigit()):
                out.append(cur)
                cur = ""
        cur += c
    if cur:
        out.append(cur)
    return [w.lower() for w in out]


def acts(parts: list[str]) -> bool:
    """Whether a token's words (`words`) name a merge act."""
    for k, w in enumerate(parts):
        if w in _ACTS or "enqueue" in w:
            return True
        if "merge" not in w:
            continue
        if w == "merge":
            if k + 1 >= len(parts) or parts[k + 1] not in _ATTRIBUTES:
                return True
        elif w.startswith("merge"):
            if w not in _INFLECTIONS:
                return True  # mergepr, mergebot: a compound that says what it is for
        elif w.endswith("merge") and len(w) >= 8:
            return True  # automerge, gitmerge (not emerge)
    joined = " ".join(parts)
    return any(phrase == joined or joined.startswith(phrase + " ") or (" " + phrase) in joined
               for phrase in _PHRASES)


def _api_path(bare: str, marker: str) -> bool:
    """``repos/…`` (or ``repositories/…``) as GitHub's API path: where a path starts, or after GitHub's API
    host, ``/api/v3``, ``/api``, or a base only the run knows (``$API``, ``${BASE}``, ``{base}``)."""
    at = bare.find(marker)
    while at >= 0:
        before = bare[:at]
        if not before or before[-1] in _PATH_START or before[-1] in "'\"":
            return True
        if before[-1] == "/":
            segment = before[:-1].rsplit("/", 1)[-1]
            for c in " \t\n=:(@,;|&<>\"'":
                segment = segment.rsplit(c, 1)[-1]
            if segment in _API_BEFORE or segment.startswith("api.") or any(c in segment for c in "$}" + DYN):
                return True
        at = bare.find(marker, at + 1)
    return False
