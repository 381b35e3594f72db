"""The deploy files parse, agree with each other and with the code, and carry no secrets."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.events import QUEUED
from foundation.settings import FIELDS
from tests.manifests import BASE, container, objects, one

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"

MANIFEST_KEYS = {
    "name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url", "description", "public",
    "default_events", "default_permissions", "request_oauth_on_install", "setup_on_update",
}
"""The parameters GitHub documents for an App manifest ("Registering a GitHub App from a manifest")."""

PERMISSIONS = {
    "statuses": "write",  # post the merge-hold status
    "pull_requests": "read",  # PR heads, bases, labels, reviews
    "issues": "write",  # PR comments (they are issue comments); write: reactions and replies (feedback)
    "contents": "read",  # .github/merge-hold.yml
    "metadata": "read",  # mandatory for every App
    "merge_queues": "read",  # GitHub: needed to subscribe to `merge_group`
    "checks": "write",  # the check run merge-hold / holds and its buttons; check_run / check_suite for the tree closer
    "administration": "read",  # GitHub: needed to subscribe to branch_protection_* and repository_ruleset
    "deployments": "write",  # GitHub: a custom deployment protection rule answers with Deployments: write
    "actions": "read",  # GitHub: ... and Actions: read (the workflow run it approves)
}
EVENTS = {"issue_comment", "pull_request", "pull_request_review", "push", "merge_group", "status", "repository",
          "issues", "check_run", "check_suite", "branch_protection_rule", "branch_protection_configuration",
          "repository_ruleset", "deployment_protection_rule"}
AUTOMATIC_EVENTS = {"installation", "installation_repositories"}
"""GitHub sends these to every App; they cannot be subscribed to, so the manifest does not list them."""

SECRET_NAME = re.compile(r"SECRET|PRIVATE_KEY$|TOKEN$|PASSWORD", re.IGNORECASE)


def secret_literals(env: dict[str, Any]) -> list[str]:
    """Names of secret-looking variables given a literal value rather than a `${...}` from outside."""
    found = []
    for name, value in env.items():
        text = "" if value is None else str(value)
        if SECRET_NAME.search(name) and text and not re.fullmatch(r"\$\{[^}]+\}", text):
            found.append(name)
    return found


@pytest.mark.parametrize(("env", "flagged"), [
    ({"GITHUB_WEBHOOK_SECRET": "${GITHUB_WEBHOOK_SECRET:?set it}"}, []),
    ({"GITHUB_WEBHOOK_SECRET": "hunter2"}, ["GITHUB_WEBHOOK_SECRET"]),
    ({"GITHUB_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----"}, ["GITHUB_PRIVATE_KEY"]),
    ({"MATTERMOST_TOKEN": "abc ${X}"}, ["MATTERMOST_TOKEN"]),  # a literal with an interpolation inside
    ({"GITHUB_PRIVATE_KEY_PATH": "/run/key.pem", "GITHUB_APP_ID": "1"}, []),  # a path and an id are not secrets
    ({"MERGE_HOLD_SECRET_KEY": ""}, []),
])
def test_secret_literal_detection(env: dict[str, Any], flagged: list[str]) -> None:
    assert secret_literals(env) == flagged


def _stages(dockerfile: str) -> dict[str, str]:
    """Stage name -> its text."""
    parts = re.split(r"^FROM\s+\S+\s+AS\s+(\S+)\s*$", dockerfile, flags=re.MULTILINE | re.IGNORECASE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _cmd(stage: str) -> list[str]:
    match = re.search(r"^CMD\s+(\[.*?\])\s*$", stage.replace("\\\n", " "), flags=re.MULTILINE | re.DOTALL)
    assert match, "stage has no exec-form CMD"
    command: list[str] = json.loads(match.group(1))
    return command


ROOT = DEPLOY.parent


def _final_stage(dockerfile: str) -> str:
    return _stages(dockerfile)[list(_stages(dockerfile))[-1]]


def test_dockerfile_at_the_root_builds_one_non_root_image_in_stages() -> None:
    assert not (DEPLOY / "Dockerfile").exists(), "the Dockerfile lives at the repository root (design §8)"
    text = (ROOT / "Dockerfile").read_text()
    stages = _stages(text)
    assert list(stages) == ["build", "runtime"], "multi-stage: the runtime image holds no build leftovers"
    runtime = stages["runtime"]
    assert re.search(r"^COPY\s+--from=build\s+/opt/merge-hold\s", runtime, flags=re.MULTILINE)
    web = _cmd(runtime)
    assert web[0] == "gunicorn" and web[-1] == "app:create_app()"
    assert web[web.index("--config") + 1] == "python:merge_hold.gunicorn_conf"
    from merge_hold import gunicorn_conf

    assert gunicorn_conf.workers == 2 and gunicorn_conf.bind == ["0.0.0.0:8000"]
    assert re.search(r"^USER\s+10001:10001\s*$", runtime, flags=re.MULTILINE), "runs as a non-root user and group"
    assert re.search(r"^HEALTHCHECK\s.*merge_hold\.healthcheck", runtime.replace("\\\n", " "), flags=re.MULTILINE)
    assert not re.search(r"^ENV\s+.*(SECRET|PRIVATE_KEY=|WEBHOOK)", text, flags=re.MULTILINE)
    # Only package directories are copied: never .merge-hold/ (dev secrets) or a whole checkout.
    copied = re.findall(r"^COPY\s+(?!--from)(.+?)\s+\S+\s*$", text, flags=re.MULTILINE)
    assert copied and not any(src.strip() == "." or ".merge-hold" in src for src in copied)
    # ... and every one of them: a package the image lacks fails only when a container starts.
    packaged = re.search(r"^include\s*=\s*\[(.*)\]", (ROOT / "pyproject.toml").read_text(), flags=re.MULTILINE)
    assert packaged is not None
    packages = {name.strip().strip('"').rstrip("*") for name in packaged.group(1).split(",")}
    assert packages == {"core", "foundation", "state", "app", "workers", "hook", "merge_hold"}
    assert packages <= {src.split()[0] for src in copied}, "the Dockerfile copies every package pyproject installs"


def test_dockerignore_keeps_local_state_out() -> None:
    lines = set((ROOT / ".dockerignore").read_text().split())
    assert {".merge-hold", ".venv", ".git"} <= lines
    assert "README.md" not in lines, "pyproject's readme is part of the build"


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    return data


def test_compose_runs_redis_web_and_worker_from_one_dockerfile() -> None:
    services = _compose()["services"]
    default = {name for name, service in services.items() if not service.get("profiles")}
    assert default == {"redis", "web", "worker"}
    sentinel = {name for name, service in services.items() if "sentinel" in service.get("profiles", ())}
    assert sentinel == {"redis-replica", "sentinel1", "sentinel2", "sentinel3"}
    for name in ("web", "worker"):
        build = services[name]["build"]
        assert build["dockerfile"] == "Dockerfile" and "target" not in build
        assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == (ROOT / "Dockerfile").resolve()
        assert services[name]["image"] == services["web"]["image"], "one image for web and worker"
        env = services[name]["environment"]
        assert env["REDIS_URL"].startswith("${REDIS_URL:-redis://redis:")  # profile `sentinel` sets it
        assert set(env) <= set(FIELDS), f"{name}: variables the settings would reject"
        assert secret_literals(env) == []
        assert services[name]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert services["web"]["ports"] == ["127.0.0.1:8000:8000"]
    assert "command" not in services["web"], "the image's default command is the web server"
    assert services["worker"]["command"] == ["merge-hold", "worker"]
    assert services["worker"]["healthcheck"]["test"] == ["CMD", "merge-hold", "worker", "--healthcheck"]


def _k8s() -> list[dict[str, Any]]:
    return objects(BASE)


def _one(kind: str, name: str) -> dict[str, Any]:
    return one(_k8s(), kind, name)


def test_k8s_objects_and_no_secret_in_files() -> None:
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in _k8s())
    assert kinds == [("ConfigMap", "merge-hold"), ("Deployment", "merge-hold-web"),
                     ("Deployment", "merge-hold-worker"), ("NetworkPolicy", "merge-hold-default-deny"),
                     ("NetworkPolicy", "merge-hold-web"), ("NetworkPolicy", "merge-hold-worker"),
                     ("PodDisruptionBudget", "merge-hold-web"), ("PodDisruptionBudget", "merge-hold-worker"),
                     ("Service", "merge-hold-web"), ("ServiceAccount", "merge-hold")]
    config = _one("ConfigMap", "merge-hold")["data"]
    assert set(config) <= set(FIELDS)
    assert not any(SECRET_NAME.search(name) for name in config), "secrets belong in the Secret, not here"
    for path in sorted((DEPLOY / "k8s").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert not (doc and doc.get("kind") == "Secret"), f"{path}: Secrets are created out of band"


def test_the_old_flat_manifests_are_gone_and_their_note_stays() -> None:
    assert not list((DEPLOY / "k8s").glob("*.yaml")), "the manifests live in base/ and overlays/"
    note = (DEPLOY / "k8s" / "README.md").read_text()
    for old in ("config.yaml", "web.yaml", "worker.yaml", "service.yaml"):
        assert f"`{old}`" in note


@pytest.mark.parametrize(("name", "command"), [
    ("merge-hold-web", None),
    ("merge-hold-worker", ["merge-hold", "worker"]),
])
def test_k8s_deployments_share_the_image_and_the_secret(name: str, command: list[str] | None) -> None:
    deployment = _one("Deployment", name)
    spec = deployment["spec"]
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    c = container(deployment)
    assert c["image"] == container(_one("Deployment", "merge-hold-web"))["image"]
    assert c.get("command") == command, "the web runs the image's default command"
    refs = {(k, v["name"]) for ref in c["envFrom"] for k, v in ref.items()}
    assert refs == {("configMapRef", "merge-hold"), ("secretRef", "merge-hold")}
    assert "env" not in c, "no literal values: everything comes from the ConfigMap or the Secret"
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_k8s_web_probes_and_service_match_the_app() -> None:
    web = container(_one("Deployment", "merge-hold-web"))
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
    port_names = {p["name"] for p in web["ports"]}
    service = _one("Service", "merge-hold-web")["spec"]
    assert service["selector"] == _one("Deployment", "merge-hold-web")["spec"]["selector"]["matchLabels"]
    assert {p["targetPort"] for p in service["ports"]} <= port_names


def test_k8s_notes_redis_sentinel_for_high_availability() -> None:
    text = (DEPLOY / "k8s" / "base" / "config.yaml").read_text()
    assert "Sentinel" in text and "Cluster" in text


def _manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DEPLOY / "github-app-manifest.json").read_text())
    return data


def test_app_manifest_uses_only_documented_parameters() -> None:
    manifest = _manifest()
    assert set(manifest) <= MANIFEST_KEYS
    assert manifest["public"] is False
    assert manifest["hook_attributes"]["url"].endswith("/webhooks/github")
    assert manifest["hook_attributes"].get("active", True) is True
    for key in ("url", "redirect_url"):
        assert manifest[key].startswith("https://")


def test_app_manifest_asks_for_exactly_what_the_service_needs() -> None:
    manifest = _manifest()
    assert manifest["default_permissions"] == PERMISSIONS
    events = manifest["default_events"]
    assert len(events) == len(set(events))
    assert set(events) == EVENTS
    # Every subscribed event is one the receiver queues, and every event it queues is either
    # subscribed or one GitHub sends to every App anyway.
    assert set(events) <= set(QUEUED)
    assert set(QUEUED) - set(events) == AUTOMATIC_EVENTS


def test_manifest_asks_for_what_doctor_requires() -> None:
    from core.readiness import missing_events, missing_permissions

    manifest = json.loads((DEPLOY / "github-app-manifest.json").read_text())
    assert missing_permissions(manifest["default_permissions"]) == []
    assert missing_events(manifest["default_events"]) == []


def test_app_manifest_is_the_one_setup_posts() -> None:
    from core.app_manifest import EXAMPLE_URL, manifest

    assert _manifest() == manifest(EXAMPLE_URL)


def test_setup_and_doctor_ask_for_the_repository_event() -> None:
    # Found from outside: /setup registered Apps without `repository`, so a renamed repo's holds were
    # never moved, and doctor did not notice the missing subscription.
    from core.app_manifest import EXAMPLE_URL, manifest
    from core.readiness import missing_events

    assert "repository" in manifest(EXAMPLE_URL)["default_events"]
    everything_else = [e for e in manifest(EXAMPLE_URL)["default_events"] if e != "repository"]
    assert any(line.startswith("repository ") for line in missing_events(everything_else))


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_pins_every_dependency_at_pyprojects_version() -> None:
    """The image installs requirements.lock alone (by hash): a dependency added to pyproject.toml and
    not to the lock would be missing from the image (its build's `pip check` fails)."""
    import tomllib

    wanted = {}
    for spec in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name, _, version = spec.partition("==")
        assert version, f"{spec}: pinned exactly"
        wanted[_canonical(name)] = version
    locked = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9][\w.-]*)==(\S+)", line):
            locked[_canonical(match.group(1))] = match.group(2)
    assert {name: locked.get(name) for name in wanted} == wanted, "regenerate requirements.lock (its header)"
    hashed = (ROOT / "requirements.lock").read_text().count("--hash=sha256:")
    assert hashed >= len(locked), "every package by hash"
