"""Reading `.github/merge-hold.yml`: YAML at the edge, validation in `core.repo_config`.

The one loader of the file: the workers (which enforce it) and the dashboard (which shows it and judges
who may hold) read the same text the same way, so a file the workers enforce is never shown as the
defaults (issue 17: the dashboard's plain `yaml.safe_load` read ``from: 16:00`` as 960).

An invalid file must post an `error` status naming the file and line, so errors are raised as
`ConfigError("<path> line <n>: <what>")`, the line found by walking PyYAML's node tree.

YAML 1.1 reads ``from: 16:00`` as the base-60 integer 960; the loader resolves such scalars as the
strings people mean (as YAML 1.2, and editors checking the JSON Schema, do).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import yaml

from core.repo_config import CONFIG_PATH, DEFAULT_CONFIG, ConfigError, RepoConfig, from_mapping

if TYPE_CHECKING:
    from state.store import RepoMeta

MAX_BYTES = 64 * 1024
"""A config is a few hundred bytes; anything near this is a mistake or an attack on the worker."""
MAX_NODES = 5000
"""Aliases can make a small file a huge tree ("billion laughs"); the walk stops here."""
MAX_DEPTH = 32
"""The config nests three levels; a recursive alias (`&a [*a]`) would otherwise recurse forever."""

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_INT_12 = re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$")
_FLOAT_12 = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class _Loader(yaml.SafeLoader):
    """SafeLoader without YAML 1.1's base-60 numbers (``16:00`` stays a string)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_INT, _INT_12, list("-+0123456789"))
_Loader.add_implicit_resolver(_FLOAT, _FLOAT_12, list("-+0123456789."))


class _Tree:
    """Plain data built from the node tree, remembering each node so that errors find their line."""

    def __init__(self, loader: _Loader) -> None:
        self.loader = loader
        self.visited = 0

    def build(self, node: yaml.Node, path: str, depth: int = 0) -> Any:
        self.visited += 1
        if self.visited > MAX_NODES or depth > MAX_DEPTH:
            raise ConfigError(f"{path} line {node.start_mark.line + 1}: the document is too large or too deep")
        if isinstance(node, yaml.MappingNode):
            own = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
            self.loader.flatten_mapping(node)  # `<<` merge keys: merged pairs first, then the node's own
            merged = len(node.value) - own
            data: dict[Any, Any] = {}
            explicit: set[Any] = set()
            for index, (key_node, value_node) in enumerate(node.value):
                key = self.build(key_node, path, depth + 1)
                if not isinstance(key, str | int | bool | float) and key is not None:
                    raise ConfigError(f"{path} line {key_node.start_mark.line + 1}: keys must be names")
                if index >= merged:
                    if key in explicit:
                        raise ConfigError(f"{path} line {key_node.start_mark.line + 1}: {key!r} is given twice")
                    explicit.add(key)
                data[key] = self.build(value_node, path, depth + 1)
            return data
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path, depth + 1) for item in node.value]
        return self.loader.construct_object(node, deep=True)


def _line(root: yaml.Node, error: ConfigError) -> int:
    """The line (1-based) of the key or value an error points at; the nearest enclosing node's line."""
    node, line = root, root.start_mark.line + 1
    for index, part in enumerate(error.path):
        last = index == len(error.path) - 1
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            pair = next(((k, v) for k, v in node.value if str(k.value) == part), None)
            if pair is None:
                break
            node = pair[0] if last and error.at_key else pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def load_config(text: str | None, *, path: str = CONFIG_PATH) -> RepoConfig:
    """The repo's config from the file's text; ``None`` (no file) or an empty file -> the defaults."""
    if text is None or not text.strip():
        return DEFAULT_CONFIG
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise ConfigError(f"{path}: the file is larger than {MAX_BYTES // 1024} KB")
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:  # only comments
            return DEFAULT_CONFIG
        data = _Tree(loader).build(root, path)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = error.problem or error.context or "not valid YAML"
        raise ConfigError(f"{path}{where}: {problem}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({error})") from None
    finally:
        loader.dispose()
    try:
        return from_mapping(data, source=path)
    except ConfigError as error:
        raise ConfigError(
            f"{path} line {_line(root, error)}: {error.detail}",
            path=error.path, at_key=error.at_key, detail=error.detail,
        ) from None


@lru_cache(maxsize=256)
def parse_config(text: str | None) -> tuple[RepoConfig | None, str | None]:
    """`load_config` of the stored text, remembered (the same few texts are read on every recompute
    and every page): the config, or None and the error the `error` status names."""
    try:
        return load_config(text), None
    except ConfigError as exc:
        return None, str(exc)


def repo_config(meta: RepoMeta | None) -> tuple[RepoConfig | None, str | None]:
    """The config of a repo as its stored meta says (`state.store.load_repo`): None and why when the
    repo's state is lost or its file not read yet — what the verdict, the deployment rule, the freeze
    API, the rulesets and the dashboard all read (the one copy of this rule), so none of them answers
    "free" on doubt or shows a file not yet read as the one enforced."""
    if meta is None:
        return None, "repo state lost, rebuilding"
    if not meta.config_loaded:
        return None, "repo config not loaded yet"
    return parse_config(meta.config_text)
