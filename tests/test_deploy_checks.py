"""The deploy files checked, not just written (issue 28 items 3 and 4, design §8).

- The kustomize base and the production overlay are rendered by a real kustomize (rows skip, saying
  why, where neither ``kustomize`` nor ``kubectl`` is installed; the schema rows then read each folder's
  objects as written).
- Every Kubernetes object validates against the Kubernetes schema of the oldest and the newest release
  ``kubernetes-validate`` bundles, strictly (no unknown field); KEDA's objects against KEDA's own CRDs.
- Every pod passes Pod Security ``restricted``; every workload has requests and limits, a
  PodDisruptionBudget, topology spread and NetworkPolicies; the pods run as the image's user and group.
- checkov, a well-kept infrastructure linter, passes over the rendered overlay and the Dockerfile with
  the rules `deploy/checkov.yaml` skips, each with its reason (rows skip without a checkov install).
- The compose file validates against the Compose Specification's schema (and ``docker compose config``
  where the plugin is installed).
- One spelling of each command: the Dockerfile's, compose's and the manifests' agree.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import redis
import yaml
from kubernetes_validate import utils as k8s_schemas

from merge_hold import gunicorn_conf
from state.queueing import work_queue
from tests.conftest import ROOT
from tests.manifests import (
    BASE,
    DEPLOY,
    NO_RENDERER,
    PRODUCTION,
    container,
    dockerfile_instructions,
    exec_form,
    final_stage,
    objects,
    one,
    pod_spec,
    rendered,
    rendered_text,
    renderer,
)

SCHEMAS = ROOT / "tests" / "fixtures" / "schemas"
FOLDERS = {"base": BASE, "production": PRODUCTION}
KUBERNETES = (k8s_schemas.all_versions()[0], k8s_schemas.latest_version())
"""The oldest and newest Kubernetes releases whose schemas kubernetes-validate ships."""
needs_renderer = pytest.mark.skipif(renderer() is None, reason=NO_RENDERER)

WEB_COMMAND = ["gunicorn", "--config", "python:merge_hold.gunicorn_conf", "app:create_app()"]
WORKER_COMMAND = ["merge-hold", "worker"]


# --- schemas -----------------------------------------------------------------------------------------

def _crd_schema(kind: str, version: str) -> dict[str, Any]:
    path = SCHEMAS / f"keda.sh_{kind.lower()}s.yaml"
    crd = yaml.safe_load(path.read_text())
    served = [v for v in crd["spec"]["versions"] if v["name"] == version]
    assert served, f"{kind} {version} is not a version KEDA serves"
    schema: dict[str, Any] = served[0]["schema"]["openAPIV3Schema"]
    return schema


def unknown_fields(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Fields the API server's strict field validation would refuse: not in the schema's `properties`
    where the schema lists them (and keeps no unknown fields)."""
    if isinstance(value, dict) and "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        found = []
        for key, item in value.items():
            if key not in schema["properties"]:
                found.append(f"{path}.{key}")
            else:
                found += unknown_fields(item, schema["properties"][key], f"{path}.{key}")
        return found
    if isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        return [f for key, item in value.items()
                for f in unknown_fields(item, schema["additionalProperties"], f"{path}.{key}")]
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [f for index, item in enumerate(value)
                for f in unknown_fields(item, schema["items"], f"{path}[{index}]")]
    return []


def schema_problems(doc: dict[str, Any], kubernetes: str) -> list[str]:
    """Why the API server of that release (with KEDA installed) would refuse ``doc``; [] if it would not."""
    group, _, version = doc["apiVersion"].rpartition("/")
    if group == "keda.sh":
        schema = _crd_schema(doc["kind"], version)
        body = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}
        errors = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(body)]
        return errors + [f"unknown field {f}" for f in unknown_fields(body, schema)]
    try:
        k8s_schemas.validate(doc, kubernetes, strict=True)
    except k8s_schemas.ValidationError as exc:
        return [f"{'.'.join(str(p) for p in exc.path)}: {exc.message}"]
    except k8s_schemas.SchemaNotFoundError as exc:
        return [exc.message]
    return []


@pytest.mark.parametrize("kubernetes", KUBERNETES)
@pytest.mark.parametrize("folder", list(FOLDERS))
def test_every_object_is_valid_for_the_api_server(folder: str, kubernetes: str) -> None:
    docs = objects(FOLDERS[folder])
    assert len(docs) >= 10
    problems = {f"{d['kind']}/{d['metadata']['name']}": p for d in docs if (p := schema_problems(d, kubernetes))}
    assert problems == {}


def _deployment() -> dict[str, Any]:
    return copy.deepcopy(one(objects(BASE), "Deployment", "merge-hold-worker"))


def _scaled_object() -> dict[str, Any]:
    return copy.deepcopy(one(objects(PRODUCTION), "ScaledObject", "merge-hold-worker"))


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    target: Any = doc
    *parents, last = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[int(last) if last.isdigit() else last] = value
    return doc


@pytest.mark.parametrize(("doc", "says"), [
    (lambda: _set(_deployment(), "spec.template.spec.securityContext.seccompProfil", {"type": "RuntimeDefault"}),
     "seccompProfil"),
    (lambda: _set(_deployment(), "spec.template.spec.terminationGracePeriodSeconds", "sixty"), "not of type"),
    (lambda: _set(_deployment(), "spec.template.spec.containers.0.resources.limits", "1Gi"), "not of type"),
    (lambda: _set(_scaled_object(), "spec.scaleTargetRef", {"nam": "merge-hold-worker"}), "'name' is a required"),
    (lambda: _set(_scaled_object(), "spec.minReplicas", 2), "unknown field .spec.minReplicas"),
    (lambda: _set(_scaled_object(), "spec.triggers.0.authenticationRef.nam", "x"), "unknown field"),
])
def test_the_schema_check_refuses_what_the_api_server_would(doc: Any, says: str) -> None:
    problems = schema_problems(doc(), KUBERNETES[0])
    assert any(says in p for p in problems), problems


# --- Pod Security `restricted` and the rest of a well-run workload ----------------------------------------

ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                   "projected", "secret"}
"""The volume types Pod Security `restricted` allows."""


def restricted_violations(deployment: dict[str, Any]) -> list[str]:
    """What Pod Security admission at level `restricted` would refuse in a Deployment's pod template."""
    spec = pod_spec(deployment)
    pod = spec.get("securityContext", {})
    found = [f"hostNamespace {k}" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k)]
    found += [f"volume type {t}" for v in spec.get("volumes", []) for t in v
              if t != "name" and t not in ALLOWED_VOLUMES]
    for c in spec.get("initContainers", []) + spec["containers"]:
        ctx = c.get("securityContext", {})
        if ctx.get("privileged"):
            found.append("privileged")
        if ctx.get("allowPrivilegeEscalation") is not False:
            found.append(f"{c['name']}: allowPrivilegeEscalation must be false")
        if ctx.get("capabilities", {}).get("drop") != ["ALL"]:
            found.append(f"{c['name']}: capabilities must drop ALL")
        if set(ctx.get("capabilities", {}).get("add", [])) - {"NET_BIND_SERVICE"}:
            found.append(f"{c['name']}: capabilities added")
        if not (ctx.get("runAsNonRoot", pod.get("runAsNonRoot"))):
            found.append(f"{c['name']}: runAsNonRoot")
        if ctx.get("runAsUser", pod.get("runAsUser")) == 0:
            found.append(f"{c['name']}: runAsUser 0")
        seccomp = ctx.get("seccompProfile", pod.get("seccompProfile", {})).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            found.append(f"{c['name']}: seccompProfile RuntimeDefault")
        found += [f"{c['name']}: hostPort" for p in c.get("ports", []) if p.get("hostPort")]
        # Beyond `restricted`, this project's own rules (issue 28): a read-only root, requests and limits.
        if ctx.get("readOnlyRootFilesystem") is not True:
            found.append(f"{c['name']}: readOnlyRootFilesystem")
        for kind in ("requests", "limits"):
            for resource in ("cpu", "memory"):
                if resource not in c.get("resources", {}).get(kind, {}):
                    found.append(f"{c['name']}: {kind}.{resource}")
    return found


def deployments(folder: str) -> list[dict[str, Any]]:
    found = [d for d in objects(FOLDERS[folder]) if d["kind"] == "Deployment"]
    assert {d["metadata"]["name"] for d in found} == {"merge-hold-web", "merge-hold-worker"}
    return found


@pytest.mark.parametrize("folder", list(FOLDERS))
def test_every_pod_passes_pod_security_restricted(folder: str) -> None:
    assert {d["metadata"]["name"]: restricted_violations(d) for d in deployments(folder)} == {
        "merge-hold-web": [], "merge-hold-worker": []}


@pytest.mark.parametrize(("path", "value", "says"), [
    ("spec.template.spec.securityContext.seccompProfile", {"type": "Unconfined"}, "seccompProfile"),
    ("spec.template.spec.containers.0.securityContext.capabilities", {"drop": ["ALL"], "add": ["NET_RAW"]},
     "capabilities added"),
    ("spec.template.spec.containers.0.securityContext.allowPrivilegeEscalation", True, "allowPrivilegeEscalation"),
    ("spec.template.spec.containers.0.securityContext.runAsNonRoot", False, "runAsNonRoot"),
    ("spec.template.spec.containers.0.securityContext.readOnlyRootFilesystem", False, "readOnlyRootFilesystem"),
    ("spec.template.spec.hostNetwork", True, "hostNetwork"),
    ("spec.template.spec.volumes.0", {"name": "h", "hostPath": {"path": "/"}}, "volume type hostPath"),
    ("spec.template.spec.containers.0.resources", {"requests": {"cpu": "1", "memory": "1Gi"}}, "limits.cpu"),
])
def test_the_restricted_check_refuses_what_admission_would(path: str, value: Any, says: str) -> None:
    assert any(says in v for v in restricted_violations(_set(_deployment(), path, value)))


def image_user() -> tuple[str, str]:
    """The runtime image's USER uid:gid, checked against the group it creates."""
    stage = final_stage(dockerfile_instructions())
    user = [args for word, args in stage if word == "USER"][-1]
    uid, _, gid = user.partition(":")
    assert gid, "USER names the group too, so the image's group is not left to useradd"
    run = " ".join(args for word, args in stage if word == "RUN")
    assert re.search(rf"groupadd .*--gid {gid}\b", run) and re.search(rf"useradd .*--uid {uid} --gid {gid}\b", run)
    return uid, gid


@pytest.mark.parametrize("folder", list(FOLDERS))
def test_pods_run_as_the_images_user_and_group(folder: str) -> None:
    uid, gid = image_user()
    for deployment in deployments(folder):
        pod = pod_spec(deployment)["securityContext"]
        assert (str(pod["runAsUser"]), str(pod["runAsGroup"]), str(pod["fsGroup"])) == (uid, gid, gid)


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return bool(selector.get("matchLabels")) and selector["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize("folder", list(FOLDERS))
def test_every_workload_has_a_budget_a_spread_and_network_policies(folder: str) -> None:
    docs = objects(FOLDERS[folder])
    for deployment in deployments(folder):
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        name = deployment["metadata"]["name"]
        budgets = [d for d in docs if d["kind"] == "PodDisruptionBudget" and _selects(d["spec"]["selector"], labels)]
        assert len(budgets) == 1, f"{name}: one PodDisruptionBudget"
        spread = pod_spec(deployment)["topologySpreadConstraints"]
        assert {c["topologyKey"] for c in spread} >= {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
        assert all(_selects(c["labelSelector"], labels) for c in spread)
        policies = [d for d in docs if d["kind"] == "NetworkPolicy" and _selects(d["spec"]["podSelector"], labels)]
        assert {t for p in policies for t in p["spec"]["policyTypes"]} == {"Ingress", "Egress"}, name
        assert not pod_spec(deployment).get("automountServiceAccountToken", True)
    web = pod_spec(one(docs, "Deployment", "merge-hold-web"))
    # Ingress reaches the web pods on their port only; the workers accept no connection at all.
    ingress = [r for d in docs if d["kind"] == "NetworkPolicy"
               and _selects(d["spec"]["podSelector"], {"app.kubernetes.io/name": "merge-hold",
                                                       "app.kubernetes.io/component": "worker"})
               for r in d["spec"].get("ingress", [])]
    assert ingress == []
    assert container(one(docs, "Deployment", "merge-hold-web"))["ports"][0]["containerPort"] == 8000
    assert web["containers"][0]["lifecycle"]["preStop"]["exec"]["command"][0] == "sleep"


def test_the_web_pods_stop_gracefully() -> None:
    """preStop delay, then gunicorn's graceful timeout, all within the grace period."""
    web = pod_spec(one(objects(BASE), "Deployment", "merge-hold-web"))
    delay = int(web["containers"][0]["lifecycle"]["preStop"]["exec"]["command"][1])
    assert delay >= 5
    assert web["terminationGracePeriodSeconds"] > delay + gunicorn_conf.graceful_timeout


@needs_renderer
def test_production_overlay() -> None:
    docs = rendered(PRODUCTION)
    namespace = one(docs, "Namespace", "merge-hold")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert all(d["metadata"].get("namespace") == "merge-hold" for d in docs if d["kind"] != "Namespace")
    for deployment in deployments("production"):
        image = container(deployment)
        assert image["image"].startswith("REGISTRY/merge-hold:"), "a registry placeholder the operator sets"
        assert image["imagePullPolicy"] == "IfNotPresent"
    assert "replicas" not in one(docs, "Deployment", "merge-hold-worker")["spec"], "KEDA owns the count"
    # Redis and its Sentinels take connections from merge-hold's pods and KEDA's operator only.
    for name, port in (("redis", 6379), ("redis-sentinel", 26379)):
        policy = one(docs, "NetworkPolicy", name)["spec"]
        [rule] = policy["ingress"]
        assert [p["port"] for p in rule["ports"]] == [port]
        peers = [p.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/name") for p in rule["from"]]
        assert peers == ["merge-hold", "redis", "keda-operator"]


REDIS_SCALER_METADATA = {"listName", "listLength", "activationListLength", "databaseIndex", "enableTLS", "unsafeSsl",
                         "address", "addresses", "host", "hosts", "port", "ports", "addressFromEnv",
                         "addressesFromEnv", "hostFromEnv", "hostsFromEnv", "portFromEnv", "portsFromEnv",
                         "usernameFromEnv", "passwordFromEnv", "sentinelUsernameFromEnv",
                         "sentinelPasswordFromEnv", "sentinelMasterFromEnv"}
REDIS_SCALER_AUTH = {"address", "addresses", "host", "hosts", "port", "ports", "username", "password",
                     "sentinelUsername", "sentinelPassword", "sentinelMaster", "tls", "ca", "cert", "key",
                     "keyPassword"}
"""The parameters KEDA's Redis scalers read (kedacore/keda pkg/scalers/redis_scaler.go)."""


@needs_renderer
def test_workers_scale_on_the_interactive_queue_with_keda() -> None:
    docs = rendered(PRODUCTION)
    scaled = one(docs, "ScaledObject", "merge-hold-worker")["spec"]
    assert scaled["scaleTargetRef"]["name"] == "merge-hold-worker"
    assert scaled["minReplicaCount"] >= 2, "every worker runs an intake pump: never scale to zero"
    [trigger] = scaled["triggers"]
    assert trigger["type"] in ("redis", "redis-sentinel")
    assert set(trigger["metadata"]) <= REDIS_SCALER_METADATA
    # The list rq keeps the configured interactive queue in (lane 25: bulk work moves to other queues).
    queue = one(docs, "ConfigMap", "merge-hold")["data"]["MERGE_HOLD_QUEUE"]
    assert trigger["metadata"]["listName"] == work_queue(redis.Redis(), queue).key == "rq:queue:merge-hold"
    auth = one(docs, "TriggerAuthentication", trigger["authenticationRef"]["name"])["spec"]["secretTargetRef"]
    assert {ref["parameter"] for ref in auth} <= REDIS_SCALER_AUTH
    if trigger["type"] == "redis-sentinel":
        assert {ref["parameter"] for ref in auth} >= {"addresses", "sentinelMaster", "password"}


# --- checkov -------------------------------------------------------------------------------------------

def checkov() -> str | None:
    local = ROOT / ".venv-checkov" / "bin" / "checkov"
    return str(local) if local.exists() else shutil.which("checkov")


@pytest.mark.skipif(checkov() is None, reason="no checkov: `make install` puts it in .venv-checkov")
@needs_renderer
def test_checkov_passes_the_manifests_and_the_dockerfile(tmp_path: Path) -> None:
    good = tmp_path / "production.yaml"
    good.write_text(rendered_text(PRODUCTION))
    # The same objects with the pods' seccomp profile gone: the linter must object (it is really linting).
    weakened = tmp_path / "weakened" / "production.yaml"
    weakened.parent.mkdir()
    weakened.write_text(rendered_text(PRODUCTION).replace("type: RuntimeDefault", "type: Unconfined"))
    done = subprocess.run([str(checkov()), "--config-file", str(DEPLOY / "checkov.yaml"), "-o", "json",
                           "-f", str(good), "-f", str(weakened), "-f", str(ROOT / "Dockerfile")],
                          capture_output=True, text=True, timeout=300)
    reports = json.loads(done.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    failed = [(check["check_id"], Path(check["file_abs_path"]).parent.name) for report in reports
              for check in report["results"]["failed_checks"]]
    assert {kind for kind in (r["check_type"] for r in reports)} == {"kubernetes", "dockerfile"}
    assert all(r["summary"]["parsing_errors"] == 0 for r in reports)
    assert [f for f in failed if f[1] != "weakened"] == [], done.stdout[-3000:]
    assert ("CKV_K8S_31", "weakened") in failed


def test_every_skipped_checkov_rule_says_why() -> None:
    lines = (DEPLOY / "checkov.yaml").read_text().splitlines()
    config = yaml.safe_load("\n".join(lines))
    assert config["skip-check"], "nothing skipped: drop the list"
    for rule in config["skip-check"]:
        index = next(i for i, line in enumerate(lines) if line.strip() == f"- {rule}")
        assert lines[index - 1].strip().startswith("#"), f"{rule}: a comment above it gives the reason"
    assert set(config["framework"]) == {"kubernetes", "dockerfile"}


# --- compose ---------------------------------------------------------------------------------------------

def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    return data


def compose_problems(data: dict[str, Any]) -> list[str]:
    schema = json.loads((SCHEMAS / "compose-spec.json").read_text())
    return [f"{'.'.join(str(p) for p in e.path)}: {e.message}"
            for e in jsonschema.Draft7Validator(schema).iter_errors(data)]


def test_the_compose_file_follows_the_compose_specification() -> None:
    assert compose_problems(compose()) == []


@pytest.mark.parametrize(("path", "value"), [
    ("services.worker.healthchek", {"test": ["CMD", "true"]}),
    ("services.web.deploy.resources.limits.memroy", "1G"),
    ("services.web.ports", "127.0.0.1:8000:8000"),
])
def test_the_compose_check_refuses_a_broken_file(path: str, value: Any) -> None:
    assert compose_problems(_set(compose(), path, value))


def _docker_compose_problem() -> str | None:
    if shutil.which("docker") is None:
        return "no `docker` CLI"
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=30)
    return None if probe.returncode == 0 else "no `docker compose` plugin"


@pytest.mark.skipif(_docker_compose_problem() is not None, reason=str(_docker_compose_problem()))
def test_docker_compose_config_accepts_it() -> None:
    env = {"GITHUB_WEBHOOK_SECRET": "x", "MERGE_HOLD_SECRET_KEY": "y", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    done = subprocess.run(["docker", "compose", "-f", str(DEPLOY / "compose.yml"), "config", "-q"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr


def test_compose_containers_are_capped_and_hardened() -> None:
    services = compose()["services"]
    for name, service in services.items():
        assert service["deploy"]["resources"]["limits"]["memory"], f"{name}: a memory limit"
        assert service["deploy"]["resources"]["limits"]["cpus"], f"{name}: a CPU limit"
    for name in ("web", "worker"):
        service = services[name]
        assert service["read_only"] is True and service["cap_drop"] == ["ALL"]
        assert "no-new-privileges:true" in service["security_opt"]
    assert services["web"]["environment"]["MERGE_HOLD_SECRET_KEY"].startswith("${MERGE_HOLD_SECRET_KEY:?")


# --- one spelling of each command ----------------------------------------------------------------------

def test_one_spelling_of_each_command() -> None:
    stage = final_stage(dockerfile_instructions())
    assert exec_form([args for word, args in stage if word == "CMD"][-1]) == WEB_COMMAND
    health = [args for word, args in stage if word == "HEALTHCHECK"][-1]
    assert exec_form(health) == ["python", "-m", "merge_hold.healthcheck"]
    services = compose()["services"]
    assert "command" not in services["web"], "compose's web runs the image's command"
    assert services["worker"]["command"] == WORKER_COMMAND
    assert services["worker"]["healthcheck"]["test"] == ["CMD", *WORKER_COMMAND, "--healthcheck"]
    for folder in FOLDERS:
        docs = objects(FOLDERS[folder])
        web = container(one(docs, "Deployment", "merge-hold-web"))
        assert "command" not in web and "args" not in web, "the manifests' web runs the image's command"
        worker = container(one(docs, "Deployment", "merge-hold-worker"))
        assert worker["command"] == WORKER_COMMAND and "args" not in worker
        assert worker["livenessProbe"]["exec"]["command"] == [*WORKER_COMMAND, "--healthcheck=liveness"]
        assert worker["startupProbe"]["exec"]["command"] == [*WORKER_COMMAND, "--healthcheck=liveness"]
        assert worker["readinessProbe"]["exec"]["command"] == [*WORKER_COMMAND, "--healthcheck"]
        assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
