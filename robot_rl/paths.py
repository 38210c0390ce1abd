"""Where robot_rl finds its task configs: the source tree's configs/, or the installed share/."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

from robot_rl.errors import ConfigError


def config_dirs() -> list[Path]:
    """configs/ next to the package (source checkout), then the installed share/robot_rl/configs:
    under every ament prefix (a colcon install), then under this Python's prefix (pip)."""
    here = Path(__file__).resolve().parent
    prefixes = [Path(p) for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    prefixes.append(Path(sys.prefix))
    return [here.parent / "configs"] + [p / "share" / "robot_rl" / "configs" for p in prefixes]


def resolve_config(name_or_path: str | Path) -> Path:
    """A path that exists as given, or a config name such as ``pick_cube``.

    Neither: a ConfigError that suggests the closest config names (or lists them all)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    for folder in config_dirs():
        for candidate in (folder / path.name, folder / f"{path.name}.yaml"):
            if candidate.is_file():
                return candidate
    names = config_names()
    hints = difflib.get_close_matches(path.stem, names, n=3)
    if hints:
        why = f"did you mean {' or '.join(repr(h) for h in hints)}?"
    else:
        why = f"known configs: {', '.join(names) or 'none'}; looked in {', '.join(str(d) for d in config_dirs())}"
    raise ConfigError(f"config file not found: {name_or_path} ({why})")


def config_names() -> list[str]:
    """The names of the configs in :func:`config_dirs` (``pick_cube``, ...), sorted."""
    return sorted({f.stem for d in config_dirs() if d.is_dir() for f in d.glob("*.yaml") if f.is_file()})


def pixels_config(name: str) -> str | None:
    """The robot's-view variant of the task config ``name`` (``<name>_pixels``: camera
    images and proprioception only), or None where the task has none."""
    variant = f"{name}_pixels"
    return variant if variant in config_names() else None
