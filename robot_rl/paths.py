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
    try:
        if path.is_file():
            return path
        for folder in config_dirs():
            for candidate in (folder / path.name, folder / f"{path.name}.yaml"):
                if candidate.is_file():
                    return candidate
    except (OSError, ValueError) as err:  # a name too long for the file system, a NUL byte
        text = str(name_or_path)
        shown = repr(text) if len(text) <= 60 and text.isprintable() else repr(text[:60]) + "..."
        raise ConfigError(f"config {shown} is not a usable file name ({getattr(err, 'strerror', None) or err}); "
                          "give a config name such as pick_cube or a path") from None
    if path.is_dir():  # after the names: a folder ./pick_cube does not hide the config pick_cube
        raise ConfigError(_directory_given(path))
    names = config_names()
    hints = difflib.get_close_matches(path.stem, names, n=3)
    if hints:
        why = f"did you mean {' or '.join(repr(h) for h in hints)}?"
    else:
        why = f"known configs: {', '.join(names) or 'none'}; looked in {', '.join(str(d) for d in config_dirs())}"
    raise ConfigError(f"config file not found: {name_or_path} ({why})")


def _directory_given(path: Path) -> str:
    """The refusal of a folder given where a config file belongs, naming the YAML files to use."""
    inside = sorted(p for p in path.glob("*.yaml") if p.is_file())
    if inside:
        shown = ", ".join(str(p) for p in inside[:4]) + (f" ({len(inside) - 4} more)" if len(inside) > 4 else "")
        return f"{path} is a directory, not a config file; give one of the YAML files in it: {shown}"
    names = config_names()
    example = "pick_cube" if "pick_cube" in names else (names[0] if names else "NAME")
    return (f"{path} is a directory with no YAML file in it; give a config file such as "
            f"configs/{example}.yaml, or a config name ({', '.join(names) or 'none found'})")


def config_names() -> list[str]:
    """The names of the configs in :func:`config_dirs` (``pick_cube``, ...), sorted."""
    return sorted({f.stem for d in config_dirs() if d.is_dir() for f in d.glob("*.yaml") if f.is_file()})


def pixels_config(name: str) -> str | None:
    """The robot's-view variant of the task config ``name`` (``<name>_pixels``: camera
    images and proprioception only), or None where the task has none."""
    variant = f"{name}_pixels"
    return variant if variant in config_names() else None
