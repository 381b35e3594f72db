"""Tool calls that would lift a hold (design §6: lifting is a person's act), found like merges.

- ``gh pr edit N --remove-label L`` (and ``gh issue edit``): ``label:L`` for each label removed;
- ``gh pr comment`` / ``gh issue comment`` whose body (``-b``, ``--body``, ``-F``/``--body-file``, a file
  written here or stdin from a heredoc) carries ``/unhold``, ``/hold cancel`` or ``/remove-hold``:
  ``comment``; a body the text does not show: ``comment?``;
- ``gh pr review``: such a body, ``review``; ``--approve``, ``approve``;
- REST (``gh api``, curl, wget, httpie; hook/detect/rest.py finds the operation): ``POST …/issues/N/comments``
  and review comments, ``PATCH …/issues/comments/ID``, deleting a comment, ``POST …/pulls/N/reviews[/ID/events]``,
  ``PUT …/pulls/N/reviews/ID``, ``PUT …/reviews/ID/dismissals``, ``DELETE …/issues/N/labels[/NAME]``,
  ``PUT …/issues/N/labels``, ``PATCH …/issues/N`` with ``labels``; adding labels (an exempt label),
  ``PATCH …/pulls/N`` with ``base``, ``PUT …/pulls/N/update-branch``;
- GraphQL: ``addComment``, ``addPullRequestReview``, ``submitPullRequestReview``,
  ``updateIssueComment``, ``updatePullRequestReview`` with a lift in the document or its variables,
  ``dismissPullRequestReview``, ``removeLabelsFromLabelable``, ``clearLabelsFromLabelable`` (node ids:
  undetermined).

Whether a body lifts follows `core.comments` (not imported: ``re`` and ``dataclasses`` cost the guard's
budget): a line of the body, outside quotes and HTML comments, that starts with ``/unhold``,
``/remove-hold`` or ``/hold cancel`` (then a target or a reason, or nothing). Fenced or indented code is
*not* skipped, so this errs towards "lifts"; a test pins it as a superset of the server's grammar.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

    Target = Callable[[Ctx, str | None, Mapping[str, str | None], str | None, str, bool], Merge]

_MARK = "\x00"
_LIFT_WORDS = ("/unhold", "/remove-hold")
# gh pr/issue edit, comment and review: flags that take a value (pflag: `--x v`, `--x=v`, `-xv`)
_VALUE_LONG = frozenset({"--body", "--body-file", "--title", "--base", "--add-label", "--remove-label",
                         "--add-assignee", "--remove-assignee", "--add-reviewer", "--remove-reviewer",
                         "--add-project", "--remove-project", "--milestone", "--repo", "--template", "--type"})
_VALUE_SHORT = "bFtBmRT"
_COMMENT_MUTATIONS = ("addComment", "addPullRequestReview", "submitPullRequestReview", "updateIssueComment",
                      "updatePullRequestReview")
_LABEL_MUTATIONS = ("removeLabelsFromLabelable", "clearLabelsFromLabelable")


def _without_html_comments(body: str) -> str:
    """HTML comments replaced by a mark (keeping line breaks), as `core.comments.prose_lines` does; an
    unclosed one hides the rest."""
    out, at = [], 0
    while True:
        start = body.find("<!--", at)
        if start < 0:
            out.append(body[at:])
            break
        end = body.find("-->", start + 4)
        out.append(body[at:start])
        if end < 0:
            out.append("\n" * body.count("\n", start) + _MARK)
            break
        out.append("\n" * body.count("\n", start, end) + _MARK)
        at = end + 3
    return "".join(out)


def lifts_text(body: str) -> bool:
    """Whether a comment or review body carries a lift command (a superset of `core.comments`)."""
    text = _without_html_comments(body.replace("\r\n", "\n").replace("\r", "\n"))
    for raw in text.split("\n"):
        line = raw.expandtabs(4)
        indent = len(line) - len(line.lstrip(" "))
        if indent <= 3 and line.lstrip(" ").startswith(">"):
            continue  # a quote
        if line.lstrip().startswith(_MARK):
            continue  # text right after a comment does not start a line
        words = line.replace(_MARK, " ").lower().split()
        if not words:
            continue
        # Whatever follows is a target or a reason (`/unhold looks good now`, Prow since May 2025).
        if words[0] in _LIFT_WORDS or words[:2] == ["/hold", "cancel"]:
            return True
    return False


def body_lift(text: str | None, kind: str = "comment") -> str | None:
    """``kind`` when ``text`` lifts, ``comment?`` when it is not known (computed at run time), else None."""
    if text is None:
        return "comment?"
    if lifts_text(text.replace(DYN, " ")):
        return kind
    return "comment?" if DYN in text else None


def mentions_lift(text: str) -> bool:
    """A lift command anywhere in a GraphQL document or JSON (escaped newlines and quotes around it)."""
    flat = " ".join(text.lower().replace("\\n", " ").replace("\\r", " ").split())
    return any(word in flat for word in ("/unhold", "/remove-hold", "/hold cancel"))


# --- gh pr / gh issue ---------------------------------------------------------------------------------


def gh_edit_or_comment(ctx: Ctx, sub: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None],
                       repo_flag: str | None, target: Target, *, via: str) -> None:
    """``gh pr|issue edit|comment|review`` (``sub``): each hold it would lift, as a Merge with ``lift``."""
    positional: list[str] = []
    removed: list[str] = []
    other: list[str] = []
    bodies: list[str | None] = []
    approve = False
    i = 0
    while i < len(args):
        a = args[i][0]
        nxt = args[i + 1][0] if i + 1 < len(args) else None
        if a == "--":
            positional.extend(x[0] for x in args[i + 1 :])
            break
        if not a.startswith("-") or a == "-" or a.startswith(DYN):
            positional.append(a)
            i += 1
            continue
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            if not eq and name in _VALUE_LONG:
                value, i = nxt or "", i + 1
        else:
            name, value = "-" + a[1:2], a[2:]
            if name[1] in _VALUE_SHORT:
                if value.startswith("="):
                    value = value[1:]
                elif not value:
                    value, i = nxt or "", i + 1
            elif len(a) > 2:  # bundled booleans: -ac
                approve = approve or "a" in a[1:]
        if name in ("-h", "--help"):
            return
        if name in ("-R", "--repo"):
            repo_flag = value
        elif name == "--remove-label":
            removed.extend(v.strip() for v in value.split(",") if v.strip())
        elif name == "--add-label" and sub == "edit":
            other.append("label+")  # an exempt label lets the PR through room and freeze holds
        elif name in ("-B", "--base") and sub == "edit" and not issue_like(via):
            other.append("base")
        elif name in ("-b", "--body"):
            bodies.append(value)
        elif name in ("-F", "--body-file"):
            bodies.append(ctx.stdin_text(cmd) if value == "-" else ctx.read_file(value) if DYN not in value else None)
        elif name in ("-a", "--approve"):
            approve = True
        elif name in ("-e", "--editor", "-w", "--web"):
            bodies.append(None)  # a person types it (editor, browser): not in the text
        i += 1
    lifts: list[str] = []
    for label in removed:
        lifts.append("label:*" if DYN in label else f"label:{label}")
    lifts.extend(other)
    for body in bodies:
        kind = body_lift(body, "review" if sub == "review" else "comment")
        if kind:
            lifts.append(kind)
    if sub == "review" and approve:
        lifts.append("approve")
    if not lifts:
        return
    where = target(ctx, positional[0] if positional else None, overlay, repo_flag, via, False)
    for lift in dict.fromkeys(lifts):
        ctx.add(where.replace(lift=lift))


def issue_like(via: str) -> bool:
    return via.startswith("gh_issue")


# --- REST and GraphQL -----------------------------------------------------------------------------------


def _decoded(segment: str) -> str:
    if "%" not in segment:
        return segment
    from urllib.parse import unquote

    return unquote(segment)


def rest_lift(ctx: Ctx, via: str, opid: str, host: str | None, repo: str | None, values: dict[str, str],
              body: dict[str, str] | None) -> None:
    """A REST write on a PR or its comments (GitHub's ``operationId``, its path's ``values``) that would lift
    a hold: each as a Merge with ``lift``."""
    def add(lift: str | None, number: str | None) -> None:
        if lift is None:
            return
        pr = int(number) if number is not None and number.isdigit() else None
        ctx.add(Merge(via=via, repo=repo, host=host, pr=pr, lift=lift,
                      undetermined=pr is None or repo is None,
                      detail="" if pr is not None else "the PR is not named in the URL"))

    text = None if body is None else body.get("body", "")
    if text is not None and text.startswith("@"):  # gh api -F body=@FILE
        text = None if DYN in text else ctx.read_file(text[1:])
    number = values.get("issue_number") or values.get("pull_number")
    event = (body or {}).get("event", "").upper() if body is not None else DYN
    if opid in ("issues/create-comment", "pulls/create-review-comment", "pulls/create-reply-for-review-comment"):
        add(body_lift(text), number)
    elif opid in ("issues/update-comment", "pulls/update-review-comment"):
        add(body_lift(text), None)  # an edited comment is read again when the server rebuilds
    elif opid in ("issues/delete-comment", "pulls/delete-review-comment"):
        add("uncomment", None)  # the comment may be a hold's: its PR is not in the URL
    elif opid in ("pulls/create-review", "pulls/submit-review"):
        add(body_lift(text, "review"), number)
        add("approve" if event == "APPROVE" or DYN in event else None, number)
    elif opid == "pulls/update-review":
        add(body_lift(text, "review"), number)
    elif opid == "pulls/dismiss-review":
        add("dismiss", number)
    elif opid == "issues/remove-label":
        name = _decoded(values.get("name", DYN))
        add("label:*" if DYN in name else f"label:{name}", number)
    elif opid in ("issues/remove-all-labels", "issues/set-labels"):
        add("label:*", number)  # removes every label, or replaces the set
    elif opid == "issues/update" and (body is None or "labels" in body):
        add("label:*", number)
    elif opid in ("issues/add-labels", "issues/approve-suggestion"):
        add("label+", number)  # an exempt label lets the PR through room and freeze holds
    elif opid == "pulls/update" and (body is None or "base" in body):
        add("base", number)
    elif opid == "pulls/update-branch":
        add("update-branch", number)


def graphql_lift(ctx: Ctx, via: str, text: str | None, host: str | None, variables: str = "") -> None:
    """GraphQL mutations that would lift a hold (``variables``: the request's other fields, as text).
    Their subjects are node ids: undetermined."""
    if text is None or "mutation" not in text:
        return  # an unseen document is already an undetermined merge
    text = f"{text}\n{variables}"
    names = [name for name in (*_COMMENT_MUTATIONS, "dismissPullRequestReview", *_LABEL_MUTATIONS) if name in text]
    for name in names:
        if name in _COMMENT_MUTATIONS:
            if "APPROVE" in text and "Review" in name:
                lift: str | None = "approve"
            else:
                lift = "comment" if mentions_lift(text) else ("comment?" if DYN in text else None)
        elif name == "dismissPullRequestReview":
            lift = "dismiss"
        else:
            lift = "label:*"
        if lift:
            ctx.add(Merge(via=via, host=host, lift=lift, undetermined=True, detail=f"{name}: its subject is a node id"))
