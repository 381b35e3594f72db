"""gh's built-in commands that weaken the gate or merge without a PR in the text (design §6, issue 15): the
same acts the REST table (hook/detect/writeops.py) finds through ``gh api``, reached through ``gh label`` and
``gh repo`` instead.

- ``gh label delete NAME`` and ``gh label edit NAME --name NEW`` on the hold label (``do-not-merge/hold``, the
  repo config's default; any label whose name says ``hold``; a name only the run knows): the label goes, or
  is renamed, on every PR at once — every label hold is lifted. Other labels, ``gh label list``, ``create``,
  ``clone`` and an edit of the colour or description weaken nothing.
- ``gh repo edit`` with a setting beyond the harmless ones (`hook.detect.gate`: description, homepage, topics,
  issues, wiki, projects, discussions, template): ``--default-branch`` moves what the gate protects, the merge
  settings and the visibility are the gate's surroundings (as ``PATCH /repos/{o}/{r}`` is read);
  ``gh repo delete``, ``gh repo archive`` (the gate with it), ``gh repo rename`` (merge-hold knows a repo by its
  name: the new one has no holds).
- ``gh repo sync DEST``: ``POST /repos/{o}/{r}/merge-upstream`` (or a ref update) on DEST's branch, a merge
  (classed ``merge`` in the fixture) whose PRs the text does not show: undetermined, in DEST. Without DEST gh
  syncs the local clone (``git fetch`` and a fast-forward of a local branch): nothing on GitHub moves, and
  the push that would publish it is judged by itself.

Flags are read as pflag reads them (hook/detect/pflag.py); a reading that is not exact errs towards the act.
"""

from __future__ import annotations

from hook.detect.gate import HARMLESS_SETTINGS
from hook.detect.model import Merge
from hook.detect.pflag import FlagSet, parse
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg

DEFAULT_HOLD_LABEL = "do-not-merge/hold"
"""`core.repo_config.RepoConfig.hold_label`'s default (not imported: the guard does not load core)."""

_LABEL = FlagSet(bools=frozenset({"yes", "confirm", "help"}),
                 values=frozenset({"repo", "name", "color", "description"}),
                 shorts={"R": "repo", "n": "name", "c": "color", "d": "description", "h": "help"})
# gh repo edit's flags, and the REST setting each one changes (`hook.detect.gate` reads those)
_EDIT_SETTINGS = {
    "description": "description", "homepage": "homepage", "add-topic": "topics", "remove-topic": "topics",
    "enable-issues": "has_issues", "enable-wiki": "has_wiki", "enable-projects": "has_projects",
    "enable-discussions": "has_discussions", "template": "is_template", "default-branch": "default_branch",
    "visibility": "visibility", "accept-visibility-change-consequences": "visibility",
    "enable-merge-commit": "allow_merge_commit", "enable-squash-merge": "allow_squash_merge",
    "enable-rebase-merge": "allow_rebase_merge", "enable-auto-merge": "allow_auto_merge",
    "delete-branch-on-merge": "delete_branch_on_merge", "allow-update-branch": "allow_update_branch",
    "allow-forking": "allow_forking", "enable-advanced-security": "security_and_analysis",
    "enable-secret-scanning": "security_and_analysis",
    "enable-secret-scanning-push-protection": "security_and_analysis",
}
_EDIT_VALUES = frozenset({"description", "homepage", "add-topic", "remove-topic", "default-branch", "visibility"})
_EDIT = FlagSet(bools=frozenset(_EDIT_SETTINGS) - _EDIT_VALUES | {"help"}, values=_EDIT_VALUES,
                shorts={"d": "description", "h": "homepage"})
_REPO = FlagSet(bools=frozenset({"yes", "confirm", "help", "force"}),
                values=frozenset({"repo", "source", "branch"}),
                shorts={"R": "repo", "y": "yes", "s": "source", "b": "branch"})
_REPO_ACTS = {"delete": "Delete a repository", "archive": "Archive a repository",
              "rename": "Rename a repository (merge-hold knows it by its name: the new one has no holds)"}


def label(ctx: Ctx, args: list[Arg], overlay: dict[str, str | None], problem: str | None) -> None:
    """``gh label SUB ARGS`` (``args`` after ``label``, with any flags gh's root skipped before it)."""
    sub, rest = _sub(args)
    if sub not in ("delete", "edit"):
        return
    parsed = parse(rest, _LABEL)
    if parsed.problem is None and parsed.flags.get("help") == "true":
        return
    if sub == "edit" and parsed.problem is None and "name" not in parsed.flags:
        return  # colour or description: the label, and every hold it makes, stays
    exact = parsed.problem is None and problem is None
    names = parsed.positional if exact else [a[0] for a in rest]
    held = next((n for n in names if _hold_label(n)), None)
    if held is None:
        return
    what = "its name is not in the text: it may be the hold label" if DYN in held \
        else f"{held}: a hold label, on every PR that has it"
    act = ("Delete a label" if sub == "delete" else f"Update a label (rename to {parsed.flags.get('name', '?')})")
    _tamper(ctx, overlay, parsed.flags.get("repo") if parsed.sure("repo") else DYN, f"{act} ({what})", "gh_label")


def repo(ctx: Ctx, args: list[Arg], overlay: dict[str, str | None], problem: str | None) -> None:
    """``gh repo SUB ARGS``: edit, delete, archive, rename (acts on the gate), sync (a merge)."""
    sub, rest = _sub(args)
    if sub == "edit":
        parsed = parse(rest, _EDIT)
        if parsed.problem is None and parsed.flags.get("help") == "true":
            return
        settings = {_EDIT_SETTINGS[f] for f in parsed.flags if f != "help"}
        if parsed.problem is None and problem is None and settings and settings <= HARMLESS_SETTINGS:
            return
        changed = ", ".join(f"--{f}" + (f" {v}" if f in _EDIT_VALUES else "") for f, v in parsed.flags.items()
                            if _EDIT_SETTINGS.get(f) not in HARMLESS_SETTINGS)
        why = parsed.problem or problem or changed or "no setting named: gh asks which"
        _tamper(ctx, overlay, _positional_repo(parsed.positional), f"Update a repository ({why})", "gh_repo_edit")
    elif sub in _REPO_ACTS:
        parsed = parse(rest, _REPO)
        if parsed.problem is None and parsed.flags.get("help") == "true":
            return
        where = parsed.flags.get("repo") if sub == "rename" else _positional_repo(parsed.positional)
        if not parsed.sure("repo") or (sub != "rename" and parsed.problem is not None and not parsed.positional):
            where = DYN  # an argument only the run knows may name another repository
        _tamper(ctx, overlay, where, _REPO_ACTS[sub], f"gh_repo_{sub}")
    elif sub == "set-default":
        _set_default(ctx, [a[0] for a in rest])
    elif sub == "sync":
        parsed = parse(rest, _REPO)
        if parsed.problem is None and parsed.flags.get("help") == "true":
            return
        if parsed.problem is None and problem is None and not parsed.positional:
            return  # the local clone: a fetch and a local fast-forward
        dest = parsed.positional[0] if parsed.positional else DYN
        host, full, unknown = ctx.gh_repo(overlay, dest) if DYN not in dest else (None, None, True)
        branch = parsed.flags.get("branch")
        ctx.add(Merge(via="gh_repo_sync", repo=full, host=host, undetermined=True,
                      branch=branch if branch and DYN not in branch else None,
                      detail="syncs a fork's branch from upstream (merge-upstream): the PRs it merges are not "
                             "in the text" + (" (the repository is not either)" if unknown else "")))


def _set_default(ctx: Ctx, words: list[str]) -> None:
    """``gh repo set-default OWNER/REPO``: marks the remote of that repository ``gh-resolved = base``, which gh
    picks from then on (hook/detect/remotes.py); ``--view`` reads; anything else (``--unset``, a prompt, a name
    only the run knows, a repository no remote has) is unknown."""
    from hook.detect import gitrepo, remotes

    if "-v" in words or "--view" in words or any(w in ("-h", "--help") for w in words):
        return
    where = remotes.where_of(ctx.cwd)
    named = [w for w in words if not w.startswith("-")]
    urls = remotes.fetch_urls(ctx, ctx.cwd) if len(named) == 1 and DYN not in named[0] and len(words) == 1 else None
    target = gitrepo.parse_repo_arg(named[0]) if named else None
    match = [n for n, url in urls or [] if target is not None and (gitrepo.parse_remote_url(url) or (None, ""))[1]
             .lower() == target[1].lower()]
    if where is None or target is None or len(match) != 1:
        remotes.edit(ctx, remotes.UNKNOWN, "unknown", "remote", "", "", "")
        return
    for name, _ in urls or []:
        remotes.edit(ctx, where, "unset", "remote", name, "gh-resolved", "")
    remotes.edit(ctx, where, "set", "remote", match[0], "gh-resolved", "base")


def _sub(args: list[Arg]) -> tuple[str, list[Arg]]:
    """The subcommand and its arguments; flags before it (``gh label -R o/r delete x``) are the leaf's."""
    k = 0
    while k < len(args) and args[k][0].startswith("-"):
        k += 2 if args[k][0] in ("-R", "--repo") else 1
    return (args[k][0], [*args[:k], *args[k + 1 :]]) if k < len(args) else ("", [])


def _hold_label(name: str) -> bool:
    """A label that may be a repo's hold label: the default, one whose name says ``hold`` (the repo's config
    is not in the text), or a name only the run knows."""
    lowered = name.lower()
    return DYN in name or lowered == DEFAULT_HOLD_LABEL or "hold" in lowered


def _positional_repo(positional: list[str]) -> str | None:
    """``gh repo edit|delete|archive [REPO]``: the argument, or (none) the current repository."""
    return positional[0] if positional else None


def _tamper(ctx: Ctx, overlay: dict[str, str | None], given: str | None, act: str, via: str) -> None:
    if given is not None and DYN in given:
        host, full = None, None  # a repository only the run knows: on_unknown
    else:
        host, full, _ = ctx.gh_repo(overlay, given)
    ctx.add(Merge(via=via, repo=full, host=host, tamper=act, detail=f"gh {via[3:].replace('_', ' ')}"))
