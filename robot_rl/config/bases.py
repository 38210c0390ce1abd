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

Where a base may be (why: a config is often copied from elsewhere, and ``base:
../../etc/...`` must not make the loader read, or a run's ``config.yaml`` copy, a file
nobody meant to share): the folder of the config file that was loaded (and the folders
under it), and the project's config folders (:func:`robot_rl.paths.config_dirs`). A
plain name (no ``/``) is looked up beside the file that names it, then in the project's
config folders, so a cell's own config can say ``base: pick_cube``. Paths are compared
after resolving ``..`` and symbolic links, so neither can step outside those folders,
and an absolute path is accepted only inside them. A name with a NUL or other control
character, longer than :data:`MAX_BASE_CHARS`, or that the file system refuses, is a
one-line ConfigError naming the file and the ``base`` key, as is every other bad base.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robot_rl.config.yaml_text import read_yaml, show
from robot_rl.errors import ConfigError
from robot_rl.paths import config_dirs

BASE_KEY = "base"
MAX_DEPTH = 4
#: A base names a config file in a config folder: a few dozen characters, never thousands.
MAX_BASE_CHARS = 1024


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Read a session config file with its bases merged in (see the module docstring)."""
    path = Path(path)
    try:
        home = path.resolve().parent
    except (OSError, RuntimeError):  # a symlink loop: read_yaml says what is wrong with the file
        home = path.absolute().parent
    return _read(path, [], allowed_roots(home))


def allowed_roots(home: Path) -> list[Path]:
    """The folders a base may be in: ``home`` (the loaded file's folder) and the project's config folders."""
    roots = [home]
    for folder in config_dirs():
        try:
            resolved = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if resolved.is_dir() and resolved not in roots:
            roots.append(resolved)
    return roots


def _read(path: Path, chain: list[Path], roots: list[Path]) -> dict[str, Any]:
    data = read_yaml(path)
    if BASE_KEY not in data:
        return data
    base_path = _base_path(path, data.pop(BASE_KEY), roots)
    here = [*chain, path.resolve()]
    if base_path in here:
        names = " -> ".join(p.name for p in [*here, base_path])
        raise ConfigError(f"{path}: '{BASE_KEY}' makes a cycle: {names}")
    if len(here) > MAX_DEPTH:
        raise ConfigError(f"{path}: '{BASE_KEY}' chains more than {MAX_DEPTH} files deep")
    return merge(_read(base_path, here, roots), data)


def _base_path(path: Path, base: Any, roots: list[Path]) -> Path:
    """The resolved file ``base`` names, checked against ``roots``; a one-line ConfigError otherwise."""
    where = f"{path}: '{BASE_KEY}'"
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"{where} must name another config file, not {show(base)}")
    name = base.strip()
    if len(name) > MAX_BASE_CHARS:
        raise ConfigError(f"{where} is {len(name)} characters long (at most {MAX_BASE_CHARS}): {show(name)}")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise ConfigError(f"{where} holds a control character: {show(name)}")
    if Path(name).name in ("", ".", "..") or name.endswith(("/", "/.")):
        raise ConfigError(f"{where} names {show(name)}, which is a folder, not a config file")
    relative = Path(name) if Path(name).suffix else Path(name).with_suffix(".yaml")
    plain = "/" not in name and "\\" not in name
    candidates = [path.parent / relative] + ([root / relative for root in roots[1:]] if plain else [])
    for candidate in candidates:
        try:
            resolved = candidate.resolve()
            found = resolved.is_file()
        except RuntimeError:  # a symlink loop (Python before 3.13)
            raise ConfigError(f"{where} names {show(name)}, which is a symlink loop") from None
        except (OSError, ValueError) as err:  # a name too long for the file system, ...
            reason = getattr(err, "strerror", None) or str(err)
            raise ConfigError(f"{where} names {show(name)}, which cannot be opened ({reason})") from None
        if not found:
            continue
        if not any(resolved.is_relative_to(root) for root in roots):
            raise ConfigError(f"{where} names {show(name)} -> {resolved}, which is outside the folders a base "
                              f"may be in ({', '.join(str(root) for root in roots)})")
        return resolved
    looked = ", ".join(show(str(c.parent), 120)[1:-1] for c in candidates)
    raise ConfigError(f"{where} names {show(name)}, which is not a file (looked in {looked})")


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: mappings merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
