"""The deploy files as a cluster would get them: the kustomize base and overlays rendered by a real
kustomize (the ``kustomize`` binary, or the one built into ``kubectl``), and where none is installed, the
objects of each folder as written (no overlay's names, images or patches applied)."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
BASE = K8S / "base"
PRODUCTION = K8S / "overlays" / "production"


@functools.cache
def renderer() -> list[str] | None:
    """The command that renders a kustomization folder, or None."""
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        probe = subprocess.run(["kubectl", "kustomize", "--help"], capture_output=True, text=True, timeout=60)
        if probe.returncode == 0:
            return ["kubectl", "kustomize"]
    return None


NO_RENDERER = "neither `kustomize` nor `kubectl` (with its built-in kustomize) is on PATH"


@functools.cache
def rendered_text(folder: Path) -> str:
    command = renderer()
    assert command is not None, NO_RENDERER
    done = subprocess.run([*command, str(folder)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(command)} {folder.relative_to(ROOT)}:\n{done.stderr}"
    return done.stdout


def rendered(folder: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(rendered_text(folder)) if doc]


def as_written(folder: Path) -> list[dict[str, Any]]:
    """The objects of a kustomization's own resource files (not those of the bases it includes)."""
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    docs: list[dict[str, Any]] = []
    for resource in kustomization.get("resources", []):
        path = folder / resource
        if path.is_file():
            docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return docs


def objects(folder: Path) -> list[dict[str, Any]]:
    """Rendered when a renderer is installed, else as written."""
    return rendered(folder) if renderer() else as_written(folder)


def one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def pod_spec(deployment: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return spec


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = pod_spec(deployment)["containers"]
    assert len(containers) == 1
    found: dict[str, Any] = containers[0]
    return found


def dockerfile_instructions(path: Path = ROOT / "Dockerfile") -> list[tuple[str, str]]:
    """(INSTRUCTION, its arguments) in order, continuation lines joined, comments left out."""
    text = path.read_text()
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), " ".join(rest.split())))
    return found


def final_stage(instructions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    starts = [i for i, (word, _) in enumerate(instructions) if word == "FROM"]
    return instructions[starts[-1]:]


def exec_form(arguments: str) -> list[str]:
    """The JSON array of an exec-form CMD or HEALTHCHECK ... CMD."""
    import json

    start = arguments.index("[")
    command: list[str] = json.loads(arguments[start:])
    return command
