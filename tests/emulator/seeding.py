"""The seeding half of the emulator's Python API: tests describe the world GitHub should show."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from tests.emulator.state import (
    REVIEW_STATES,
    ROLES,
    Comment,
    Delivery,
    Installation,
    Pull,
    Repo,
    Review,
    Status,
    Store,
    parse_time,
)

When = str | datetime | float | None
DEFAULT_PERMISSIONS = {"metadata": "read", "contents": "read", "pull_requests": "read",
                       "issues": "read", "statuses": "write"}
DEFAULT_EVENTS = ["issue_comment", "pull_request", "pull_request_review", "push", "status"]
_PULL_FIELDS = {"head_sha", "head_ref", "base", "user", "labels", "draft", "state", "head_repo",
                "updated_at", "title", "body", "review_decision", "merged"}


class Seeding(Store):
    def add_installation(self, installation_id: int, account_login: str, *,
                         account_type: str = "Organization") -> None:
        with self.lock:
            self.installations[installation_id] = Installation(
                installation_id, account_login, account_type, self.clock(),
                dict(DEFAULT_PERMISSIONS), list(DEFAULT_EVENTS))

    def add_repo(self, full_name: str, *, installation_id: int, default_branch: str = "main",
                 private: bool = False) -> None:
        if full_name.count("/") != 1:
            raise ValueError(f"repo must be owner/name, got {full_name!r}")
        with self.lock:
            if installation_id not in self.installations:
                raise KeyError(f"unknown installation {installation_id}: add_installation() first")
            self.repos[full_name.lower()] = Repo(
                id=self.next_id(), full_name=full_name, installation_id=installation_id,
                default_branch=default_branch, private=private, created_at=self.clock())

    def add_pull(self, repo: str, number: int, *, head_sha: str, head_ref: str, base: str = "main",
                 user: str = "octocat", labels: Iterable[str] = (), draft: bool = False,
                 state: str = "open", head_repo: str | None = None, updated_at: When = None,
                 review_decision: str | None = None, created_at: When = None,
                 title: str | None = None, body: str = "", merged: bool = False) -> None:
        """review_decision is kept for callers' bookkeeping only: it is a GraphQL field, not REST."""
        with self.lock:
            found = self.require_repo(repo)
            now = self.clock()
            created = parse_time(created_at, now)
            pull = Pull(repo=found.full_name, number=number, id=self.next_id(), seq=self.next_id(),
                        head_sha=head_sha, head_ref=head_ref, base=base, user=user, labels=list(labels),
                        draft=draft, state="open", head_repo=head_repo, created_at=created,
                        updated_at=parse_time(updated_at, created), title=title or f"Pull request {number}",
                        body=body, review_decision=review_decision)
            self.pulls[(found.full_name.lower(), number)] = pull
            self.known_shas.add((found.full_name.lower(), head_sha))
            if state != "open" or merged:
                self._set_state(pull, "closed" if merged else state, merged=merged)

    def update_pull(self, repo: str, number: int, **changes: Any) -> None:
        """Change any of head_sha, head_ref, base, user, labels, draft, state ("open"/"closed"),
        merged, head_repo, title, body, review_decision; bumps updated_at unless it is given."""
        unknown = set(changes) - _PULL_FIELDS
        if unknown:
            raise TypeError(f"update_pull() got unknown fields {sorted(unknown)}")
        with self.lock:
            pull = self.require_pull(repo, number)
            now = self.clock()
            for name in ("head_sha", "head_ref", "base", "user", "draft", "head_repo", "title", "body",
                         "review_decision"):
                if name in changes:
                    setattr(pull, name, changes[name])
            if "labels" in changes:
                pull.labels = list(changes["labels"])
            if "state" in changes or changes.get("merged"):
                self._set_state(pull, changes.get("state", "closed"), merged=bool(changes.get("merged")))
            pull.updated_at = parse_time(changes.get("updated_at"), max(now, pull.updated_at))
            self.known_shas.add((pull.repo.lower(), pull.head_sha))

    def _set_state(self, pull: Pull, state: str, *, merged: bool) -> None:
        if state not in ("open", "closed"):
            raise ValueError(f"pull state must be open or closed, got {state!r}")
        pull.state = state
        now = self.clock()
        pull.closed_at = None if state == "open" else now
        pull.merged_at = now if merged and state == "closed" else None

    def set_permission(self, repo: str, login: str, role: str) -> None:
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {role!r}")
        with self.lock:
            self.require_repo(repo).roles[login.lower()] = role

    def sign_in_as(self, login: str | None) -> None:
        """Who is signed in at the emulated github.com: they approve the App's OAuth authorization at once
        (`tests/emulator/oauth.py`); what they may see follows `set_permission`."""
        with self.lock:
            self.oauth_login = login

    def set_branch_head(self, repo: str, branch: str, sha: str) -> None:
        """The commit `GET /repos/{o}/{r}/branches/{b}` names as the branch's head (else a stable fake)."""
        with self.lock:
            found = self.require_repo(repo)
            self.branch_heads[(found.full_name.lower(), branch)] = sha
            self.known_shas.add((found.full_name.lower(), sha))

    def set_pull_files(self, repo: str, number: int, files: Iterable[str | dict[str, Any]], *,
                       head_sha: str | None = None) -> None:
        """What the pull's head (or ``head_sha``) changes, for `GET /pulls/{n}/files`: paths (modified),
        or entries with ``filename`` and any of ``status``, ``previous_filename`` (a rename), ``additions``,
        ``deletions``. GitHub lists at most 3,000 of them; give more to stand for a larger PR."""
        with self.lock:
            pull = self.require_pull(repo, number)
            sha = head_sha or pull.head_sha
            self.pull_files[(pull.repo.lower(), sha)] = [
                {"filename": f} if isinstance(f, str) else dict(f) for f in files]

    def set_file(self, repo: str, path: str, text: str, ref: str | None = None) -> None:
        with self.lock:
            found = self.require_repo(repo)
            found.files[(ref or found.default_branch, path.strip("/"))] = text

    def delete_file(self, repo: str, path: str, ref: str | None = None) -> None:
        with self.lock:
            found = self.require_repo(repo)
            found.files.pop((ref or found.default_branch, path.strip("/")), None)

    def add_issue_comment(self, repo: str, number: int, *, user: str, body: str, created_at: When = None,
                          author_association: str = "MEMBER") -> int:
        with self.lock:
            found = self.require_repo(repo)
            created = parse_time(created_at, self.clock())
            comment = Comment(self.next_id(), found.full_name, number, user, body, created, created,
                              author_association)
            self.comments.append(comment)
            self._touch(found.full_name, number, created)
            return comment.id

    def add_review(self, repo: str, number: int, *, user: str, state: str, submitted_at: When = None,
                   body: str = "", commit_id: str | None = None,
                   author_association: str | None = None) -> int:
        if state not in REVIEW_STATES:
            raise ValueError(f"review state must be one of {REVIEW_STATES}, got {state!r}")
        with self.lock:
            pull = self.require_pull(repo, number)
            found = self.require_repo(repo)
            review = Review(self.next_id(), pull.repo, number, user, state,
                            parse_time(submitted_at, self.clock()), body, commit_id or pull.head_sha,
                            author_association or self.association(found, user))
            self.reviews.append(review)
            self._touch(pull.repo, number, review.submitted_at)
            return review.id

    def _touch(self, repo: str, number: int, when: float) -> None:
        # Like GitHub, activity on a pull request moves its updated_at (and its place in sort=updated).
        pull = self.pull(repo, number)
        if pull is not None:
            pull.updated_at = max(pull.updated_at, when)

    def dismiss_review(self, repo: str, number: int, review_id: int) -> None:
        with self.lock:
            for review in self.reviews:
                if review.id == review_id and review.number == number and review.repo.lower() == repo.lower():
                    review.state = "DISMISSED"
                    return
            raise KeyError(f"no review {review_id} on {repo}#{number}")

    def edit_issue_comment(self, comment_id: int, *, body: str, updated_at: When = None) -> None:
        """A comment's author edits it: the body changes, `updated_at` moves, `created_at` stays."""
        with self.lock:
            for comment in self.comments:
                if comment.id == comment_id:
                    comment.body = body
                    comment.updated_at = parse_time(updated_at, self.clock())
                    return
            raise KeyError(f"no comment {comment_id}")

    def rename_repo(self, old: str, new: str, *, installation_id: int | None = None) -> None:
        """The repo is renamed or transferred (``new`` is its new ``owner/name``); everything on it moves."""
        with self.lock:
            repo = self.require_repo(old)
            del self.repos[old.lower()]
            repo.full_name = new
            if installation_id is not None:
                repo.installation_id = installation_id
            self.repos[new.lower()] = repo
            for (name, number), pull in list(self.pulls.items()):
                if name == old.lower():
                    del self.pulls[(name, number)]
                    pull.repo = new
                    self.pulls[(new.lower(), number)] = pull
            items: list[Comment | Review | Status] = [*self.comments, *self.reviews, *self.all_statuses]
            for item in items:
                if item.repo.lower() == old.lower():
                    item.repo = new
            self.known_shas = {(new.lower() if r == old.lower() else r, sha) for r, sha in self.known_shas}

    def add_status(self, repo: str, sha: str, *, state: str, context: str, description: str | None = None,
                   target_url: str | None = None, creator: str = "octocat",
                   created_at: When = None) -> int:
        """A status some other party posted (e.g. a forged `merge-hold`); not counted in status_posts()."""
        with self.lock:
            found = self.require_repo(repo)
            status = Status(self.next_id(), found.full_name, sha, state, description, target_url, context,
                            parse_time(created_at, self.clock()), creator, via_api=False)
            self.all_statuses.append(status)
            self.known_shas.add((found.full_name.lower(), sha))
            return status.id

    def add_commit(self, repo: str, sha: str) -> None:
        """Make a SHA known that no pull carries (e.g. a merge group's head)."""
        with self.lock:
            self.known_shas.add((self.require_repo(repo).full_name.lower(), sha))

    def add_delivery(self, *, event: str = "pull_request", action: str | None = None, status_code: int = 200,
                     guid: str | None = None, delivered_at: When = None, redelivery: bool = False,
                     duration: float = 0.05, installation_id: int | None = None,
                     repository_id: int | None = None) -> int:
        with self.lock:
            delivery = Delivery(self.next_id(), guid or str(uuid.uuid4()),
                                parse_time(delivered_at, self.clock()), redelivery, duration, status_code,
                                event, action, installation_id, repository_id)
            self.deliveries[delivery.id] = delivery
            return delivery.id
