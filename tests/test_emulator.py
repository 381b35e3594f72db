"""The GitHub emulator answers real PyGithub (and plain HTTP) the way GitHub's REST API does."""

from __future__ import annotations

import base64
import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import github
import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github import Auth, GithubException, RateLimitExceededException, UnknownObjectException
from urllib3.util.retry import Retry

from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.emulator.__main__ import seed

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "github"
REPO = "acme/widgets"
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"


class Clock:
    """A clock the test moves; starts at real time so PyGithub's own JWTs stay valid."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def emu(clock: Clock) -> Iterator[GitHubEmulator]:
    with GitHubEmulator(clock=clock) as emulator:
        emulator.add_installation(1, "acme")
        emulator.add_installation(2, "globex")
        emulator.add_repo(REPO, installation_id=1)
        emulator.add_repo("acme/secret", installation_id=1, private=True)
        emulator.add_repo("globex/gadgets", installation_id=2)
        emulator.add_pull(REPO, 7, head_sha=SHA, head_ref="feature", user="alice", labels=["bug"])
        yield emulator


def client(emu: GitHubEmulator, installation_id: int = 1, **kwargs: Any) -> github.Github:
    auth = Auth.AppAuth(APP_ID, PRIVATE_KEY_PEM).get_installation_auth(installation_id)
    options: dict[str, Any] = {"retry": None, "seconds_between_requests": None,
                               "seconds_between_writes": None, **kwargs}
    return github.Github(base_url=emu.url, auth=auth, **options)


def integration(emu: GitHubEmulator, key: str | None = None) -> github.GithubIntegration:
    return github.GithubIntegration(base_url=emu.url, auth=Auth.AppAuth(APP_ID, key or PRIVATE_KEY_PEM),
                                    retry=None, seconds_between_requests=None, seconds_between_writes=None)


@cache
def app_key() -> Any:
    # Loading a PEM validates the RSA key (~40 ms); the tests' own JWTs reuse one loaded key.
    return serialization.load_pem_private_key(PRIVATE_KEY_PEM.encode(), password=None)


def app_jwt(now: float, key: Any = None, algorithm: str = "RS256", **claims: Any) -> str:
    payload = {"iat": int(now) - 60, "exp": int(now) + 300, "iss": str(APP_ID), **claims}
    # Through JWS rather than jwt.encode, which refuses the integer `iss` GitHub also accepts.
    return jwt.PyJWS().encode(json.dumps(payload).encode(), key or app_key(), algorithm=algorithm)


def token_for(emu: GitHubEmulator, installation_id: int, **body: Any) -> str:
    answer = requests.post(f"{emu.url}/app/installations/{installation_id}/access_tokens", json=body,
                           headers={"Authorization": f"Bearer {app_jwt(time.time())}"}, timeout=5)
    assert answer.status_code == 201, answer.text
    token: str = answer.json()["token"]
    return token


def get(emu: GitHubEmulator, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"token {token}"} if token else {}
    return requests.get(f"{emu.url}{path}", headers=headers, timeout=5, **kwargs)


@cache
def other_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


# --- statuses -----------------------------------------------------------------------------------------


def test_a_status_created_through_pygithub_is_visible_everywhere(emu: GitHubEmulator) -> None:
    commit = client(emu).get_repo(REPO).get_commit(SHA)
    made = commit.create_status("failure", target_url="https://mh.example/acme/widgets/pull/7",
                                description="Held by @alice: migration", context="merge-hold")
    assert (made.state, made.creator.login) == ("failure", "merge-hold-test[bot]")
    latest = emu.latest_status(REPO, SHA)
    assert latest is not None and latest["description"] == "Held by @alice: migration"
    assert [p["state"] for p in emu.status_posts()] == ["failure"]
    assert commit.get_combined_status().state == "failure"
    assert [s.context for s in commit.get_statuses()] == ["merge-hold"]


def test_statuses_list_newest_first_and_combined_takes_the_latest_per_context(emu: GitHubEmulator) -> None:
    commit = client(emu).get_repo(REPO).get_commit(SHA)
    for state in ("pending", "failure", "success"):
        commit.create_status(state, context="merge-hold")
    commit.create_status("pending", context="ci")
    assert [s.state for s in commit.get_statuses()] == ["pending", "success", "failure", "pending"]
    combined = commit.get_combined_status()
    assert {s.context: s.state for s in combined.statuses} == {"merge-hold": "success", "ci": "pending"}
    assert combined.state == "pending"
    assert [s["state"] for s in emu.statuses(REPO, SHA, "merge-hold")] == ["success", "failure", "pending"]
    assert emu.latest_status(REPO, SHA, "nope") is None


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"state": "success", "description": "x" * 140}, 201, None),
    ({"state": "success", "description": "x" * 141}, 422, "Validation Failed"),
    ({"state": "success", "description": "é" * 141}, 422, "Validation Failed"),
    ({"state": "success", "description": None}, 201, None),
    ({"state": "bogus"}, 422, "Invalid request."),
    ({"state": "SUCCESS"}, 422, "Invalid request."),
    ({"description": "no state"}, 422, "Invalid request."),
    ({"state": "error", "context": 5}, 422, "Invalid request."),
])
def test_status_validation_follows_github(emu: GitHubEmulator, body: dict[str, Any], status: int,
                                          message: str | None) -> None:
    token = token_for(emu, 1)
    answer = requests.post(f"{emu.url}/repos/{REPO}/statuses/{SHA}", json=body, timeout=5,
                           headers={"Authorization": f"token {token}"})
    assert answer.status_code == status, answer.text
    if message:
        assert answer.json()["message"].startswith(message)
    assert len(emu.status_posts(None)) == (1 if status == 201 else 0)


def test_a_141_character_description_raises_through_pygithub(emu: GitHubEmulator) -> None:
    commit = client(emu).get_repo(REPO).get_commit(SHA)
    with pytest.raises(GithubException) as caught:
        commit.create_status("failure", description="x" * 141, context="merge-hold")
    assert caught.value.status == 422
    assert caught.value.data["errors"][0]["field"] == "description"


def test_the_1001st_status_on_one_sha_and_context_is_refused(emu: GitHubEmulator) -> None:
    for _ in range(999):
        emu.add_status(REPO, SHA, state="pending", context="merge-hold")
    commit = client(emu).get_repo(REPO).get_commit(SHA)
    commit.create_status("success", context="merge-hold")  # the 1,000th
    with pytest.raises(GithubException) as caught:
        commit.create_status("success", context="merge-hold")
    assert caught.value.status == 422
    assert caught.value.data["errors"][0]["message"] == (
        "This SHA and context has reached the maximum number of statuses.")
    commit.create_status("success", context="other")  # the limit is per context
    assert len(emu.status_posts()) == 1


@pytest.mark.parametrize(("sha", "ok"), [(SHA, True), ("abc1234", True), ("feature", True), ("None", False),
                                         ("not-a-sha", False)])
def test_statuses_need_a_commit_github_would_find(emu: GitHubEmulator, sha: str, ok: bool) -> None:
    answer = requests.post(f"{emu.url}/repos/{REPO}/statuses/{sha}", json={"state": "success"}, timeout=5,
                           headers={"Authorization": f"token {token_for(emu, 1)}"})
    assert answer.status_code == (201 if ok else 422)
    if sha == "feature":  # a branch name resolves to the open pull's head
        assert emu.latest_status(REPO, SHA, "default") is not None


# --- pulls, pagination --------------------------------------------------------------------------------


def test_250_open_pulls_take_three_list_calls_at_100_per_page(emu: GitHubEmulator) -> None:
    for n in range(100, 350):
        emu.add_pull(REPO, n, head_sha=f"{n:040x}", head_ref=f"b{n}", created_at=1_700_000_000 + n)
    emu.add_pull(REPO, 999, head_sha="f" * 40, head_ref="gone", state="closed")
    emu.reset_log()
    numbers = [pr.number for pr in client(emu, per_page=100).get_repo(REPO).get_pulls(state="open")]
    assert len(numbers) == 251 and 999 not in numbers
    assert numbers[:3] == [7, 349, 348]  # newest first: #7 was created at real "now"
    assert emu.count("GET", r"^/repos/acme/widgets/pulls$") == 3
    assert emu.token_mints(1) == 1


def test_pull_files_come_in_githubs_shape_paged_and_capped_at_3000(emu: GitHubEmulator) -> None:
    emu.set_pull_files(REPO, 7, [{"filename": "db/new name.sql", "previous_filename": "db/old.sql"},
                                 {"filename": "README.md", "status": "added", "additions": 3}])
    files = list(client(emu).get_repo(REPO).get_pull(7).get_files())  # PyGithub reads GitHub's "Diff Entry"
    assert [(f.filename, f.status, f.previous_filename) for f in files] == [
        ("db/new name.sql", "renamed", "db/old.sql"), ("README.md", "added", None)]
    entry = get(emu, f"/repos/{REPO}/pulls/7/files", token_for(emu, 1)).json()[0]
    assert set(entry) == {"sha", "filename", "status", "additions", "deletions", "changes", "blob_url", "raw_url",
                          "contents_url", "patch", "previous_filename"}
    assert entry["blob_url"] == f"https://github.com/{REPO}/blob/{SHA}/db/new%20name.sql"
    assert entry["contents_url"].endswith(f"/repos/{REPO}/contents/db/new%20name.sql?ref={SHA}")
    assert get(emu, f"/repos/{REPO}/pulls/8/files", token_for(emu, 1)).status_code == 404

    emu.set_pull_files(REPO, 7, [f"src/f{i}.py" for i in range(3005)])
    token = token_for(emu, 1)
    first = get(emu, f"/repos/{REPO}/pulls/7/files", token, params={"per_page": 100})
    assert len(first.json()) == 100 and 'page=30>; rel="last"' in first.headers["link"]
    last = get(emu, f"/repos/{REPO}/pulls/7/files", token, params={"per_page": 100, "page": 30}).json()
    assert last[-1]["filename"] == "src/f2999.py"  # GitHub lists 3,000 files at most
    assert get(emu, f"/repos/{REPO}/pulls/7/files", token, params={"per_page": 100, "page": 31}).json() == []
    assert len(get(emu, f"/repos/{REPO}/pulls/7/files", token).json()) == 30  # 30 a page by default
    assert client(emu).get_repo(REPO).get_pull(7).changed_files == 3005


def test_link_headers_point_at_the_host_and_port_the_client_used(emu: GitHubEmulator) -> None:
    for n in range(100, 104):
        emu.add_pull(REPO, n, head_sha=f"{n:040x}", head_ref=f"b{n}")
    token = token_for(emu, 1)
    local = emu.url.replace("127.0.0.1", "localhost")
    rels = {}
    for page in (1, 2, 3):
        answer = requests.get(f"{local}/repos/{REPO}/pulls?per_page=2&state=open&page={page}", timeout=5,
                              headers={"Authorization": f"token {token}"})
        assert len(answer.json()) == (1 if page == 3 else 2)
        rels[page] = {rel: url for url, rel in ((link["url"], key) for key, link in answer.links.items())}
    assert set(rels[1]) == {"next", "last"}
    assert set(rels[2]) == {"prev", "next", "last", "first"}
    assert set(rels[3]) == {"prev", "first"}
    assert rels[1]["next"] == f"{local}/repos/{REPO}/pulls?per_page=2&state=open&page=2"
    assert all(url.startswith(local + "/") for page in rels.values() for url in page.values())
    single = get(emu, f"/repos/{REPO}/issues/7/labels", token)
    assert "link" not in single.headers and [label["name"] for label in single.json()] == ["bug"]


@pytest.mark.parametrize(("query", "expected"), [
    ({}, [3, 2, 7]),
    ({"state": "closed"}, [4]),
    ({"state": "all"}, [4, 3, 2, 7]),
    ({"base": "release"}, [3]),
    ({"head": "acme:two"}, [2]),
    ({"head": "alice:fork-branch"}, [7]),
    ({"sort": "updated"}, [2, 3, 7]),
    ({"sort": "created", "direction": "asc"}, [7, 2, 3]),
])
def test_pull_list_filters_and_orders_like_github(emu: GitHubEmulator, query: dict[str, str],
                                                  expected: list[int]) -> None:
    # Pull 7 was created at the real "now", before the years below; the table's orders rely on that.
    emu.update_pull(REPO, 7, head_repo="alice/widgets", head_ref="fork-branch", updated_at="2030-01-01T00:00:00Z")
    emu.add_pull(REPO, 2, head_sha="2" * 40, head_ref="two", created_at="2031-01-01T00:00:00Z",
                 updated_at="2020-01-01T00:00:00Z")
    emu.add_pull(REPO, 3, head_sha="3" * 40, head_ref="three", base="release", created_at="2032-01-01T00:00:00Z",
                 updated_at="2021-01-01T00:00:00Z")
    emu.add_pull(REPO, 4, head_sha="4" * 40, head_ref="four", state="closed", created_at="2033-01-01T00:00:00Z")
    answer = get(emu, f"/repos/{REPO}/pulls", token_for(emu, 1), params=query)
    assert [pr["number"] for pr in answer.json()] == expected


def test_a_pull_from_a_fork_carries_the_fork_as_head_repo(emu: GitHubEmulator) -> None:
    emu.update_pull(REPO, 7, head_repo="alice/widgets", head_ref="fork-branch")
    pr = client(emu).get_repo(REPO).get_pull(7)
    assert (pr.head.repo.full_name, pr.head.label, pr.base.repo.full_name) == (
        "alice/widgets", "alice:fork-branch", REPO)
    assert pr.head.repo.fork and not pr.base.repo.fork
    with pytest.raises(UnknownObjectException):
        client(emu).get_repo(REPO).get_pull(8)


@pytest.mark.parametrize(("seeded", "state", "merged"), [
    ({}, "open", False),
    ({"state": "closed"}, "closed", False),
    ({"merged": True}, "closed", True),
])
def test_pull_state_and_merge(emu: GitHubEmulator, seeded: dict[str, Any], state: str, merged: bool) -> None:
    emu.add_pull(REPO, 9, head_sha="9" * 40, head_ref="nine", **seeded)
    pr = client(emu).get_repo(REPO).get_pull(9)
    assert (pr.state, pr.merged, pr.merged_at is not None, pr.closed_at is not None) == (
        state, merged, merged, state == "closed")


def test_comments_and_reviews_are_listed_oldest_first_and_paginated(emu: GitHubEmulator) -> None:
    for i in range(35):
        emu.add_issue_comment(REPO, 7, user="bob", body=f"c{i}", created_at=1_800_000_000 - i)
    first = emu.add_review(REPO, 7, user="carol", state="CHANGES_REQUESTED", submitted_at=1_800_000_100)
    emu.add_review(REPO, 7, user="carol", state="APPROVED", submitted_at=1_800_000_200, body="ok")
    emu.dismiss_review(REPO, 7, first)
    pr = client(emu).get_repo(REPO).get_pull(7)
    bodies = [c.body for c in pr.get_issue_comments()]
    assert bodies == [f"c{i}" for i in reversed(range(35))]
    assert pr.comments == 35
    assert [(r.user.login, r.state) for r in pr.get_reviews()] == [("carol", "DISMISSED"), ("carol", "APPROVED")]
    token = token_for(emu, 1)
    page = get(emu, f"/repos/{REPO}/issues/7/comments", token)
    assert len(page.json()) == 30 and 'rel="next"' in page.headers["link"]
    since = get(emu, f"/repos/{REPO}/issues/7/comments", token, params={"since": "2027-01-15T07:59:56Z"})
    assert [c["body"] for c in since.json()] == ["c4", "c3", "c2", "c1", "c0"]  # 1_800_000_000 is 08:00:00
    with pytest.raises(ValueError):
        emu.add_review(REPO, 7, user="x", state="approved")


def test_activity_moves_a_pull_up_in_sort_by_updated(emu: GitHubEmulator) -> None:
    emu.add_pull(REPO, 8, head_sha="8" * 40, head_ref="eight", updated_at="2035-01-01T00:00:00Z")
    token = token_for(emu, 1)
    order = get(emu, f"/repos/{REPO}/pulls", token, params={"sort": "updated", "direction": "desc"})
    assert [pr["number"] for pr in order.json()] == [8, 7]
    emu.add_issue_comment(REPO, 7, user="bob", body="/hold", created_at="2036-01-01T00:00:00Z")
    order = get(emu, f"/repos/{REPO}/pulls", token, params={"sort": "updated", "direction": "desc"})
    assert [pr["number"] for pr in order.json()] == [7, 8]
    assert get(emu, f"/repos/{REPO}/issues/404/comments", token).status_code == 404


def test_concurrent_writers_lose_nothing(emu: GitHubEmulator) -> None:
    token = token_for(emu, 1)

    def post(i: int) -> int:
        with requests.Session() as session:
            answer = session.post(f"{emu.url}/repos/{REPO}/statuses/{SHA}", timeout=5,
                                  json={"state": "pending", "context": f"c{i % 4}"},
                                  headers={"Authorization": f"token {token}"})
            return answer.status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(post, range(80)))
    assert codes == [201] * 80
    posts = emu.status_posts(None)
    assert len(posts) == 80 and len({p["id"] for p in posts}) == 80
    assert emu.count("POST", r"/statuses/") == 80
    emu.reset_log()
    assert emu.requests == [] and emu.token_mints(1) == 0 and len(emu.status_posts(None)) == 80


def test_another_installations_token_cannot_write_either(emu: GitHubEmulator) -> None:
    answer = requests.post(f"{emu.url}/repos/{REPO}/statuses/{SHA}", json={"state": "success"}, timeout=5,
                           headers={"Authorization": f"Bearer {token_for(emu, 2)}"})
    assert answer.status_code == 404 and emu.status_posts(None) == []


# --- authentication -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("claims", "key", "algorithm", "ok"), [
    ({}, None, "RS256", True),
    ({"iss": APP_ID}, None, "RS256", True),
    ({"iat": "offset:-60", "exp": "offset:600"}, None, "RS256", True),  # PyGithub's longest expiry
    ({"iss": "1"}, None, "RS256", False),
    ({"iss": "acme"}, None, "RS256", False),
    ({"exp": "offset:-120"}, None, "RS256", False),
    ({"iat": "offset:-600", "exp": "offset:-61"}, None, "RS256", False),
    ({"iat": "offset:0", "exp": "offset:700"}, None, "RS256", False),
    ({"iat": "offset:-700", "exp": "offset:10"}, None, "RS256", False),
    ({"iat": "offset:120"}, None, "RS256", False),
    ({}, "other", "RS256", False),
    ({}, "hmac", "HS256", False),
])
def test_app_jwts_are_verified(emu: GitHubEmulator, claims: dict[str, Any], key: str | None,
                               algorithm: str, ok: bool) -> None:
    now = time.time()
    resolved = {k: int(now) + int(v.split(":")[1]) if isinstance(v, str) and v.startswith("offset:") else v
                for k, v in claims.items()}
    signing = {None: None, "other": other_key(), "hmac": "a-shared-secret-that-is-long-enough-32"}[key]
    token = app_jwt(now, signing, algorithm, **resolved)
    answer = requests.get(f"{emu.url}/app", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert answer.status_code == (200 if ok else 401), answer.text
    if not ok:
        assert set(answer.json()) >= {"message", "documentation_url"}


def test_a_wrong_key_fails_pygithub_with_401(emu: GitHubEmulator) -> None:
    with pytest.raises(GithubException) as caught:
        integration(emu, other_key()).get_access_token(1)
    assert caught.value.status == 401
    assert emu.token_mints(1) == 0


def test_github_integration_reads_the_app_and_its_installations(emu: GitHubEmulator) -> None:
    app = integration(emu)
    assert app.get_app().slug == "merge-hold-test"
    assert [i.id for i in app.get_installations()] == [1, 2]
    assert app.get_repo_installation("globex", "gadgets").id == 2
    assert app.get_app_installation(1).account.login == "acme"
    with pytest.raises(UnknownObjectException):
        app.get_repo_installation("nobody", "nothing")
    token = app.get_access_token(2)
    assert token.token.startswith("ghs_") and emu.token_mints(2) == 1


@pytest.mark.parametrize(("path", "who", "status"), [
    (f"/repos/{REPO}", "inst1", 200),
    ("/repos/ACME/Widgets", "inst1", 200),
    ("/repos/globex/gadgets", "inst1", 404),
    ("/repos/globex/gadgets/pulls", "inst1", 404),
    ("/repos/nobody/nothing", "inst1", 404),
    ("/repos/acme/secret", "narrowed", 404),
    (f"/repos/{REPO}", "narrowed", 200),
    (f"/repos/{REPO}", "none", 401),
    (f"/repos/{REPO}", "garbage", 401),
    (f"/repos/{REPO}", "jwt", 403),
    ("/app", "inst1", 401),
    ("/installation/repositories", "jwt", 403),
    ("/no/such/endpoint", "inst1", 404),
])
def test_tokens_see_only_their_installation(emu: GitHubEmulator, path: str, who: str, status: int) -> None:
    header = {
        "inst1": f"token {token_for(emu, 1)}",
        "narrowed": f"token {token_for(emu, 1, repositories=['widgets'])}",
        "garbage": "token ghs_notatoken",
        "jwt": f"Bearer {app_jwt(time.time())}",
        "none": None,
    }[who]
    answer = requests.get(f"{emu.url}{path}", headers={"Authorization": header} if header else {}, timeout=5)
    assert answer.status_code == status, answer.text
    if status != 200:
        assert set(answer.json()) >= {"message", "documentation_url"}


def test_installation_repositories_lists_the_tokens_repos(emu: GitHubEmulator) -> None:
    body = get(emu, "/installation/repositories", token_for(emu, 1)).json()
    assert (body["total_count"], sorted(r["full_name"] for r in body["repositories"])) == (
        2, ["acme/secret", REPO])
    narrowed = get(emu, "/installation/repositories", token_for(emu, 1, repositories=["widgets"])).json()
    assert [r["full_name"] for r in narrowed["repositories"]] == [REPO]
    refused = requests.post(f"{emu.url}/app/installations/1/access_tokens", json={"repositories": ["gadgets"]},
                            headers={"Authorization": f"Bearer {app_jwt(time.time())}"}, timeout=5)
    assert refused.status_code == 422


def test_an_expired_token_is_refused(emu: GitHubEmulator, clock: Clock) -> None:
    token = token_for(emu, 1)
    clock.now += 3599
    assert get(emu, f"/repos/{REPO}", token).status_code == 200
    clock.now += 2
    answer = get(emu, f"/repos/{REPO}", token)
    assert (answer.status_code, answer.json()["message"]) == (401, "Bad credentials")


def test_pygithub_mints_one_token_for_many_calls(emu: GitHubEmulator) -> None:
    repo = client(emu).get_repo(REPO)
    for _ in range(5):
        repo.get_pull(7)
    assert emu.token_mints(1) == 1
    assert {r.auth for r in emu.requests} == {"jwt", "token"}
    assert emu.requests[0].path == "/app/installations/1/access_tokens"


# --- faults and limits --------------------------------------------------------------------------------


def test_an_injected_429_reaches_pygithub_with_its_headers(emu: GitHubEmulator) -> None:
    emu.inject("GET", r"/pulls/7$", 429, headers={"Retry-After": "1"}, times=2)
    repo = client(emu).get_repo(REPO)
    for _ in range(2):
        with pytest.raises(GithubException) as caught:
            repo.get_pull(7)
        assert caught.value.status == 429
        assert caught.value.headers is not None and caught.value.headers["retry-after"] == "1"
        assert "x-ratelimit-remaining" in caught.value.headers
    assert repo.get_pull(7).number == 7  # only `times` requests were hit


def test_a_standing_fault_hits_every_method_until_cleared(emu: GitHubEmulator) -> None:
    emu.inject("*", r"^/repos/acme/widgets", 500, times=None)
    token = token_for(emu, 1)  # /app/... does not match
    assert [get(emu, f"/repos/{REPO}", token).status_code for _ in range(3)] == [500, 500, 500]
    emu.clear_faults()
    assert get(emu, f"/repos/{REPO}", token).status_code == 200
    with pytest.raises(ValueError):
        emu.inject("GET", "x", 500, times=0)


def test_an_injected_secondary_limit_is_a_rate_limit_error_for_pygithub(emu: GitHubEmulator) -> None:
    emu.inject("POST", r"/statuses/", 403, headers={"retry-after": "1"})
    commit = client(emu).get_repo(REPO).get_commit(SHA)
    with pytest.raises(RateLimitExceededException) as caught:
        commit.create_status("success", context="merge-hold")
    assert caught.value.data["message"].startswith("You have exceeded a secondary rate limit")
    assert emu.status_posts() == []


def test_pygithub_retries_an_injected_502(emu: GitHubEmulator) -> None:
    emu.inject("*", r"/pulls/7$", 502, body="<html>bad gateway</html>")
    retry = Retry(total=2, backoff_factor=0, status_forcelist=[502], allowed_methods=None)
    assert client(emu, retry=retry).get_repo(REPO).get_pull(7).number == 7
    assert [r.status for r in emu.requests if r.path.endswith("/pulls/7")] == [502, 200]


def test_every_answer_carries_rate_limit_headers(emu: GitHubEmulator) -> None:
    token = token_for(emu, 1)
    answers = [get(emu, f"/repos/{REPO}", token), get(emu, f"/repos/{REPO}", token),
               get(emu, "/repos/globex/gadgets", token), get(emu, f"/repos/{REPO}")]
    for answer in answers:
        assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset",
                "x-ratelimit-resource", "x-github-request-id"} <= set(answer.headers)
        assert answer.headers["content-type"] == "application/json; charset=utf-8"
    remaining = [int(a.headers["x-ratelimit-remaining"]) for a in answers]
    assert remaining[:3] == [4999, 4998, 4997]  # per installation, 404s included
    assert answers[3].headers["x-ratelimit-limit"] == "60"  # unauthenticated


def test_an_exhausted_primary_limit_answers_403(emu: GitHubEmulator) -> None:
    emu.rate_limit(3)
    repo = client(emu).get_repo(REPO)
    repo.get_pull(7)
    repo.get_pull(7)
    with pytest.raises(RateLimitExceededException) as caught:
        repo.get_pull(7)
    assert caught.value.status == 403
    assert caught.value.headers is not None and caught.value.headers["x-ratelimit-remaining"] == "0"
    assert caught.value.data["message"] == "API rate limit exceeded for installation ID 1."


def test_the_secondary_write_limit_paces_writes_not_reads(emu: GitHubEmulator, clock: Clock) -> None:
    emu.secondary_limit(2)
    token = token_for(emu, 1)

    def post() -> requests.Response:
        return requests.post(f"{emu.url}/repos/{REPO}/statuses/{SHA}", json={"state": "success"}, timeout=5,
                             headers={"Authorization": f"token {token}"})

    assert [post().status_code for _ in range(2)] == [201, 201]
    clock.now += 20
    refused = post()
    assert refused.status_code == 403 and refused.headers["retry-after"] == "40"
    assert refused.json()["message"].startswith("You have exceeded a secondary rate limit")
    assert get(emu, f"/repos/{REPO}", token).status_code == 200
    clock.now += 40
    assert post().status_code == 201
    assert len(emu.status_posts(None)) == 3


# --- contents and permissions -------------------------------------------------------------------------


def test_contents_serve_a_real_file_or_404(emu: GitHubEmulator) -> None:
    emu.set_file(REPO, ".github/merge-hold.yml", "hold_label: x\n")
    emu.set_file(REPO, ".github/merge-hold.yml", "hold_label: other\n", ref="release")
    emu.set_file(REPO, ".github/workflows/ci.yml", "on: push\n")
    repo = client(emu).get_repo(REPO)
    found = repo.get_contents(".github/merge-hold.yml")
    assert not isinstance(found, list)
    assert found.decoded_content == b"hold_label: x\n"
    assert found.sha == "0fd3a8338467d2a7f0c41505b5d1e2e0b1b750d1"  # `git hash-object` of the same bytes
    on_release = repo.get_contents(".github/merge-hold.yml", ref="release")
    assert not isinstance(on_release, list) and on_release.decoded_content == b"hold_label: other\n"
    listing = repo.get_contents(".github")
    assert isinstance(listing, list)
    assert sorted((c.name, c.type) for c in listing) == [("merge-hold.yml", "file"), ("workflows", "dir")]
    emu.delete_file(REPO, ".github/merge-hold.yml")
    with pytest.raises(UnknownObjectException):
        repo.get_contents(".github/merge-hold.yml")


def test_contents_base64_survives_long_and_unicode_text(emu: GitHubEmulator) -> None:
    text = "# ünïcode ✓\n" + "x" * 500 + "\n"
    emu.set_file(REPO, "big.md", text)
    body = get(emu, f"/repos/{REPO}/contents/big.md", token_for(emu, 1)).json()
    assert all(len(line) <= 60 for line in body["content"].splitlines())
    assert base64.b64decode(body["content"]).decode() == text
    assert body["size"] == len(text.encode())


@pytest.mark.parametrize(("role", "repo", "permission", "role_name"), [
    ("admin", REPO, "admin", "admin"),
    ("maintain", REPO, "write", "maintain"),
    ("write", REPO, "write", "write"),
    ("triage", REPO, "read", "triage"),
    ("read", REPO, "read", "read"),
    ("none", REPO, "none", "none"),
    (None, REPO, "read", "read"),
    (None, "acme/secret", "none", "none"),
])
def test_collaborator_permission(emu: GitHubEmulator, role: str | None, repo: str, permission: str,
                                 role_name: str) -> None:
    if role is not None:
        emu.set_permission(repo, "Dana", role)
    assert client(emu).get_repo(repo).get_collaborator_permission("dana") == permission
    body = get(emu, f"/repos/{repo}/collaborators/dana/permission", token_for(emu, 1)).json()
    assert (body["permission"], body["role_name"], body["user"]["login"]) == (permission, role_name, "dana")


# --- deliveries ---------------------------------------------------------------------------------------


def test_deliveries_page_by_cursor_and_redeliver(emu: GitHubEmulator) -> None:
    ids = [emu.add_delivery(event="issue_comment", action="created", status_code=code, delivered_at=1_700_000_000 + i)
           for i, code in enumerate([200, 500, 200, 502, 200])]
    headers = {"Authorization": f"Bearer {app_jwt(time.time())}"}
    url: str | None = f"{emu.url}/app/hook/deliveries?per_page=2"
    seen: list[dict[str, Any]] = []
    calls = 0
    while url:
        answer = requests.get(url, headers=headers, timeout=5)
        calls += 1
        assert answer.status_code == 200
        seen += answer.json()
        url = answer.links.get("next", {}).get("url")
        assert url is None or (url.startswith(emu.url) and "cursor=" in url)
    assert calls == 3 and [d["id"] for d in seen] == list(reversed(ids))
    assert [d["status"] for d in seen][1] == "Invalid HTTP Response: 502"
    assert set(seen[0]) >= {"id", "guid", "delivered_at", "redelivery", "duration", "status", "status_code",
                            "event", "action", "installation_id", "repository_id"}
    got: list[dict[str, Any]] = []

    def redeliver(delivery: dict[str, Any]) -> int:
        got.append(delivery)
        return 200

    emu.on_redeliver = redeliver
    again = requests.post(f"{emu.url}/app/hook/deliveries/{ids[1]}/attempts", headers=headers, timeout=5)
    assert again.status_code == 202
    assert [d["id"] for d in got] == [ids[1]] and emu.redelivered() == [ids[1]]
    newest = requests.get(f"{emu.url}/app/hook/deliveries?per_page=1", headers=headers, timeout=5).json()[0]
    assert (newest["guid"], newest["redelivery"], newest["status_code"]) == (seen[3]["guid"], True, 200)
    missing = requests.post(f"{emu.url}/app/hook/deliveries/1/attempts", headers=headers, timeout=5)
    assert missing.status_code == 404
    with_token = get(emu, "/app/hook/deliveries", token_for(emu, 1))
    assert with_token.status_code == 401


# --- wire behaviour and shapes ------------------------------------------------------------------------


def test_one_keep_alive_connection_serves_many_requests(emu: GitHubEmulator) -> None:
    token = token_for(emu, 1)
    host, port = emu.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        for path in (f"/repos/{REPO}", "/nope", f"/repos/{REPO}/pulls/7"):
            conn.request("GET", path, headers={"Authorization": f"token {token}"})
            answer = conn.getresponse()
            body = answer.read()
            assert int(answer.headers["content-length"]) == len(body)
            json.loads(body)
    finally:
        conn.close()


def keys_of(example: Any) -> Any:
    """The key structure of a JSON value: dicts by key, lists by their first element. A `permissions`
    map is data (which permissions an example App had), not structure."""
    if isinstance(example, dict):
        return {k: None if k == "permissions" else keys_of(v) for k, v in example.items()}
    if isinstance(example, list):
        return [keys_of(example[0])] if example else []
    return None


def missing_keys(example: Any, actual: Any, path: str = "") -> list[str]:
    if isinstance(example, dict):
        if actual is None:  # a nullable object GitHub may send as null (assignee, milestone, …)
            return []
        if not isinstance(actual, dict):
            return [path or "."]
        return [m for k, v in example.items()
                for m in ([f"{path}.{k}"] if k not in actual else missing_keys(v, actual[k], f"{path}.{k}"))]
    if isinstance(example, list) and example and isinstance(actual, list) and actual:
        return missing_keys(example[0], actual[0], f"{path}[]")
    return []


def rest(name: str) -> Any:
    return json.loads((FIXTURES / "rest" / name).read_text())


def webhook(name: str, key: str) -> Any:
    return json.loads((FIXTURES / "webhooks" / name).read_text())[key]


def test_objects_carry_every_key_of_githubs_documented_examples(emu: GitHubEmulator) -> None:
    emu.set_file(REPO, "README.md", "hi\n")
    emu.set_permission(REPO, "octocat", "admin")
    emu.add_issue_comment(REPO, 7, user="bob", body="/hold")
    emu.add_review(REPO, 7, user="carol", state="COMMENTED")
    token = token_for(emu, 1)
    status = requests.post(f"{emu.url}/repos/{REPO}/statuses/{SHA}", json={"state": "success"}, timeout=5,
                           headers={"Authorization": f"token {token}"}).json()
    jwt_headers = {"Authorization": f"Bearer {app_jwt(time.time())}"}
    minted = requests.post(f"{emu.url}/app/installations/1/access_tokens", json={"repositories": ["widgets"]},
                           headers=jwt_headers, timeout=5).json()
    pairs = [
        (rest("status-create.201.json"), status),
        (rest("combined-status.200.json"), get(emu, f"/repos/{REPO}/commits/{SHA}/status", token).json()),
        (rest("pulls-list.200.json")[0], get(emu, f"/repos/{REPO}/pulls", token).json()[0]),
        (webhook("pull_request/opened.payload.json", "pull_request"),
         get(emu, f"/repos/{REPO}/pulls/7", token).json()),
        (rest("contents-file.200.json"), get(emu, f"/repos/{REPO}/contents/README.md", token).json()),
        (rest("collaborator-permission.200.json"),
         get(emu, f"/repos/{REPO}/collaborators/octocat/permission", token).json()),
        (rest("repo-installation.200.json"),
         requests.get(f"{emu.url}/repos/{REPO}/installation", headers=jwt_headers, timeout=5).json()),
        (rest("installation-access-token.201.json"), minted),
        (webhook("issue_comment/created.payload.json", "comment"),
         get(emu, f"/repos/{REPO}/issues/7/comments", token).json()[0]),
        (webhook("pull_request_review/submitted.payload.json", "review"),
         get(emu, f"/repos/{REPO}/pulls/7/reviews", token).json()[0]),
    ]
    for example, actual in pairs:
        assert missing_keys(keys_of(example), actual) == []
    repo = get(emu, f"/repos/{REPO}", token).json()
    assert (repo["full_name"], repo["default_branch"], repo["private"], repo["owner"]["login"]) == (
        REPO, "main", False, "acme")
    assert repo["url"] == f"{emu.url}/repos/{REPO}" and repo["owner"]["type"] == "Organization"


# --- the standalone server ----------------------------------------------------------------------------


def test_seed_builds_the_world_the_file_describes() -> None:
    world = GitHubEmulator()
    seed(world, {"installations": [{"id": 5, "account": "acme"}],
                 "repos": [{"full_name": REPO, "installation_id": 5, "files": {"a.txt": "a"},
                            "permissions": {"bob": "write"}}],
                 "pulls": [{"repo": REPO, "number": 1, "head_sha": SHA, "head_ref": "x", "labels": ["l"]}]})
    repo = world.require_repo(REPO)
    assert (repo.files, repo.roles, world.require_pull(REPO, 1).labels) == (
        {("main", "a.txt"): "a"}, {"bob": "write"}, ["l"])


def test_python_m_tests_emulator_serves_until_stopped(tmp_path: Path) -> None:
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps({"installations": [{"id": 9, "account": "acme"}],
                                     "repos": [{"full_name": REPO, "installation_id": 9}]}))
    root = Path(__file__).resolve().parent.parent
    process = subprocess.Popen([sys.executable, "-m", "tests.emulator", "--port", "0", "--seed", str(seed_file)],
                               cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        answer = requests.get(f"{url}/app/installations", timeout=5,
                              headers={"Authorization": f"Bearer {app_jwt(time.time())}"})
        assert [i["id"] for i in answer.json()] == [9]
    finally:
        process.terminate()
        process.wait(timeout=5)
