"""Where robot_rl finds its task configs: the source tree's configs/, or the installed share/."""

from __future__ import annotations

import sys
from pathlib import Path

from robot_rl.errors import ConfigError


def config_dirs() -> list[Path]:
    """configs/ next to the package (source checkout), then <prefix>/share/robot_rl/configs."""
    here = Path(__file__).resolve().parent
    return [here.parent / "configs", Path(sys.prefix) / "share" / "robot_rl" / "configs"]


def resolve_config(name_or_path: str | Path) -> Path:
    """A path that exists as given, or a config name such as ``pick_cube``."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    for folder in config_dirs():
        for candidate in (folder / path.name, folder / f"{path.name}.yaml"):
            if candidate.is_file():
                return candidate
    raise ConfigError(f"config file not found: {name_or_path} (also looked in "
                      f"{', '.join(str(d) for d in config_dirs())})")
