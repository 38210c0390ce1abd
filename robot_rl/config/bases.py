"""A config file may start from another one: ``base: pick_cube.yaml``.

One task has one config: its task, cell and learner. A variant of it (the robot's view
from pixels, a CPU-sized learner) states only what differs and names the task config as
its ``base``, so the two cannot drift apart the way a copied file would.

Rules: ``base`` is a path relative to the file that names it (a bare name such as
``pick_cube`` means ``pick_cube.yaml`` beside it); a base may have a base of its own, at
most :data:`MAX_DEPTH` deep and without cycles. Mappings merge key by key with the
file's own value winning; any other value (a list, a number) replaces the base's whole.
The merged mapping is what the rest of the loader sees, and a run's ``config.yaml`` is
written from it, so a run never depends on the base file staying as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robot_rl.config.yaml_text import read_yaml, show
from robot_rl.errors import ConfigError

BASE_KEY = "base"
MAX_DEPTH = 4


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Read a session config file with its bases merged in (see the module docstring)."""
    return _read(Path(path), [])


def _read(path: Path, chain: list[Path]) -> dict[str, Any]:
    data = read_yaml(path)
    if BASE_KEY not in data:
        return data
    base = data.pop(BASE_KEY)
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"{path}: '{BASE_KEY}' must name another config file, not {show(base)}")
    base_path = path.parent / base.strip()
    if not base_path.suffix:
        base_path = base_path.with_suffix(".yaml")
    here = [*chain, path.resolve()]
    if base_path.resolve() in here:
        names = " -> ".join(p.name for p in [*here, base_path.resolve()])
        raise ConfigError(f"{path}: '{BASE_KEY}' makes a cycle: {names}")
    if len(here) > MAX_DEPTH:
        raise ConfigError(f"{path}: '{BASE_KEY}' chains more than {MAX_DEPTH} files deep")
    if not base_path.is_file():
        raise ConfigError(f"{path}: '{BASE_KEY}' names {base_path}, which is not a file")
    return merge(_read(base_path, here), data)


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: mappings merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
