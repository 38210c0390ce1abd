"""Reading config text as YAML, safely: files, ``--set`` values and ROS 2 params files.

:func:`parse_yaml` refuses, before anything is built, what could crash or hang the
loader or a later ``yaml.safe_dump`` of the config: non-UTF-8 bytes, files over
:data:`MAX_CONFIG_BYTES`, nesting deeper than :data:`MAX_YAML_DEPTH`, documents that
expand (aliases included) to more than :data:`MAX_YAML_NODES` values, recursive aliases,
and duplicate keys. Anchors and aliases used in the ordinary way still work, and each
alias becomes an independent copy. Every refusal is one ConfigError line that names the
source (and the line and dotted key where known).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, NoReturn

import yaml

from robot_rl.errors import ConfigError

#: A config file is a few KiB; anything this large is a mistake (or an attack), not a config.
MAX_CONFIG_BYTES = 1 << 20
#: Mappings and lists nested deeper than this are refused (the real configs nest about 5 deep).
MAX_YAML_DEPTH = 50
#: Values (scalars, mappings, lists) one YAML text may expand to, aliases expanded.
MAX_YAML_NODES = 10_000

_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
# What PyYAML's constructors raise, besides YAMLError, for well-formed but impossible
# scalars (``2001-13-01``, ``!!int abc``, ``!!timestamp x``).
_BUILD_ERRORS = (ValueError, TypeError, AttributeError, ArithmeticError)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; a missing, unreadable or malformed file is a one-line ConfigError."""
    path = Path(path)
    data = parse_yaml(_read_text(path), source=str(path))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys to values")
    return data


def parse_yaml(text: str, *, source: str, where: str = "", depth: int = 0) -> Any:
    """Parse YAML ``text`` safely; ``source`` (a file, ``--set key``) starts every error.

    ``where`` and ``depth`` place the text inside a larger config (a ``--set`` value), so
    that errors name the full dotted key and the depth limit counts the whole config.
    The result is a tree: an alias becomes an independent copy of its anchor, so that
    changing one (an override) cannot change the other.
    """
    if len(text) > MAX_CONFIG_BYTES:
        raise _too_large(source)
    try:
        _YamlGuard(source, where, depth).check(text)
        data = yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as err:
        # A one-line ``--set`` value has no lines to point at (PyYAML may say "line 2").
        one_line_value = bool(where) and "\n" not in text.strip()
        raise ConfigError(_yaml_error_line(err, source, with_line=not one_line_value)) from None
    except _BUILD_ERRORS as err:
        raise ConfigError(f"{source}: holds a value YAML cannot build ({show(str(err), 120)})") from None
    return to_dict(data)  # every alias an independent copy


def apply_overrides(data: dict[str, Any], overrides: list[str], source: str = "--set") -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides (value parsed as YAML) to a raw config mapping.

    Each value passes the same YAML checks as a config file (:func:`parse_yaml`). An item
    that nests into a key an earlier item set to a value is blamed on that earlier item
    (``--set train=5`` before ``--run-dir X``'s ``train.run_dir=X``).
    """
    set_by: dict[str, str] = {}  # dotted key -> the item that set it
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"{source}: override {show(item)} must look like key.sub=value")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(parts) or len(parts) >= MAX_YAML_DEPTH:
            raise ConfigError(f"{source}: override key {show(key)} must be 1 to {MAX_YAML_DEPTH - 1} "
                              "dot-separated names")
        key = ".".join(parts)
        value = parse_yaml(raw, source=f"{source} {key}", where=key, depth=len(parts)) if raw.strip() else ""
        node = data
        for depth, part in enumerate(parts[:-1], start=1):
            nxt = node.get(part)
            if nxt is None:
                nxt = node[part] = {}
            if not isinstance(nxt, dict):
                section = ".".join(parts[:depth])
                culprit = set_by.get(section)
                if culprit is not None:  # an earlier item replaced a section by a value: blame that item
                    raise ConfigError(f"{source} {show(culprit)}: {section} is a section of the config, not a "
                                      f"value; set a key inside it, e.g. --set {section}.KEY=VALUE")
                raise ConfigError(f"{source}: {section} is not a mapping, cannot set {key}")
            node = nxt
        node[parts[-1]] = value
        set_by[key] = item
    return data


def _read_text(path: Path) -> str:
    """The UTF-8 text of a config file, read only up to :data:`MAX_CONFIG_BYTES`."""
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    if not path.is_file():
        raise ConfigError(f"{path}: is not a regular file")
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read ({err.strerror or err})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise _too_large(str(path))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: is not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start}); "
                          "a config must be a YAML text file") from None


def _too_large(source: str) -> ConfigError:
    return ConfigError(f"{source}: is larger than {MAX_CONFIG_BYTES // 1024} KiB; a config is a few KiB of YAML")


def _yaml_error_line(err: yaml.YAMLError, source: str, with_line: bool = True) -> str:
    """One line for a PyYAML error, whose own text spans several lines."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    where = f" line {mark.line + 1}" if mark is not None and with_line else ""
    if isinstance(err, yaml.reader.ReaderError):
        what = f"character #x{err.character:04x} at position {err.position}: {err.reason}" \
            if isinstance(err.character, int) else str(err.reason)
    else:
        what = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"{source}:{where} is not valid YAML ({' '.join(str(what).split())})"


@dataclasses.dataclass
class _Open:
    """A mapping or sequence the :class:`_YamlGuard` is inside."""

    is_map: bool
    path: str
    anchor: str | None
    start_count: int
    height: int = 1
    children: int = 0
    key: str = "?"
    keys: dict[Any, int] = dataclasses.field(default_factory=dict)


class _YamlGuard:
    """One pass over the YAML event stream, before anything is built.

    Loading an alias bomb is instant (PyYAML shares the anchored object), and the blow-up
    comes later, when the config is copied or dumped; deep nesting overflows the
    recursive composer; a duplicate key silently wins. The event stream is flat and
    parsed without recursion, so this pass can count the expanded size and depth of
    everything (an alias counts as the whole anchored value) and see every key, and stop
    at the first problem with its line and dotted key.
    """

    def __init__(self, source: str, where: str, depth: int) -> None:
        self.source, self.where, self.base_depth = source, where, depth
        self.stack: list[_Open] = []
        self.anchors: dict[str, tuple[int, int]] = {}  # anchor -> (expanded values, height)
        self.count = 0
        self.aliased = False

    def check(self, text: str) -> None:
        """Walk ``text``'s events; the first hazard is a ConfigError in robot_rl's own words.

        libyaml's parser (PyYAML's C loader) refuses some hazards itself, in words that
        change between PyYAML releases (6.0.4's "exceeded maximum nesting depth"), and
        scans flow brackets ahead of the events it yields. When it refuses a text, the
        text is walked again with PyYAML's pure-Python parser, which has no depth limit
        of its own and yields events as it goes, so that the verdict (and its wording) is
        this guard's whatever the loader version; only a text this guard finds nothing
        wrong with keeps the loader's own error.
        """
        try:
            self._walk(text, _FAST_LOADER)
        except yaml.YAMLError as loader_error:
            if _FAST_LOADER is yaml.SafeLoader:
                raise
            try:
                _YamlGuard(self.source, self.where, self.base_depth)._walk(text, yaml.SafeLoader)
            except yaml.YAMLError:
                pass  # the loader's own words for a text that is simply not YAML
            raise loader_error

    def _walk(self, text: str, loader: type) -> None:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                self._open(event)
            elif isinstance(event, yaml.CollectionEndEvent):
                self._close()
            elif isinstance(event, yaml.ScalarEvent):
                self._scalar(event)
            elif isinstance(event, yaml.AliasEvent):
                self._alias(event)

    def _fail(self, event: yaml.Event, message: str) -> NoReturn:
        raise ConfigError(f"{self.source}: line {event.start_mark.line + 1}: {message}")

    def _child_path(self) -> str:
        if not self.stack:
            return self.where
        parent = self.stack[-1]
        if not parent.is_map:
            return f"{parent.path}[{parent.children}]"
        return join_key(parent.path, parent.key if parent.children % 2 else "?")

    def _add(self, event: yaml.Event, values: int) -> None:
        self.count += values
        if self.count > MAX_YAML_NODES:
            why = "once its aliases are expanded (an alias bomb?)" if self.aliased else ""
            self._fail(event, f"holds more than {MAX_YAML_NODES} values {why}".rstrip())

    def _check_depth(self, event: yaml.Event, path: str, depth: int) -> None:
        if self.base_depth + depth > MAX_YAML_DEPTH:
            shown = path if len(path) <= 80 else f"{path[:60]}...{path[-16:]}"
            self._fail(event, f"'{shown}' is nested more than {MAX_YAML_DEPTH} levels deep")

    def _finish(self, height: int, anchor: str | None, values: int) -> None:
        """A value is complete: remember its anchor, and count it in its parent."""
        if anchor is not None:
            self.anchors[anchor] = (values, height)
        if self.stack:
            parent = self.stack[-1]
            parent.children += 1
            parent.height = max(parent.height, height + 1)

    def _open(self, event: yaml.CollectionStartEvent) -> None:
        path = self._child_path()
        self._add(event, 1)
        self.stack.append(_Open(isinstance(event, yaml.MappingStartEvent), path, event.anchor, self.count - 1))
        self._check_depth(event, path, len(self.stack))

    def _close(self) -> None:
        done = self.stack.pop()
        self._finish(done.height, done.anchor, self.count - done.start_count)

    def _scalar(self, event: yaml.ScalarEvent) -> None:
        self._add(event, 1)
        parent = self.stack[-1] if self.stack else None
        if parent is not None and parent.is_map and parent.children % 2 == 0:
            self._key(parent, event)
        self._finish(0, event.anchor, 1)

    def _key(self, parent: _Open, event: yaml.ScalarEvent) -> None:
        parent.key = event.value
        identity = _key_identity(event)
        if identity is None:
            return
        line = event.start_mark.line + 1
        if identity in parent.keys:
            self._fail(event, f"duplicate key '{join_key(parent.path, event.value)}' "
                              f"(first given on line {parent.keys[identity]})")
        parent.keys[identity] = line

    def _alias(self, event: yaml.AliasEvent) -> None:
        path = self._child_path()
        if any(o.anchor == event.anchor for o in self.stack):
            self._fail(event, f"'{path}': alias *{event.anchor} refers to a value that contains it")
        self.aliased = True
        values, height = self.anchors.get(event.anchor, (1, 0))  # undefined: yaml.load reports it
        self._add(event, values)
        self._check_depth(event, path, len(self.stack) + height)
        if self.stack and self.stack[-1].is_map and self.stack[-1].children % 2 == 0:
            self.stack[-1].key = f"*{event.anchor}"
        self._finish(height, None, values)


def _key_identity(event: yaml.ScalarEvent) -> Any:
    """What a scalar key is once built (``1`` and ``1.0`` are the same key, ``'1'`` is not);
    None for a merge key (``<<``), which may repeat and is overridden on purpose."""
    tag = event.tag if event.tag not in (None, "!") else _RESOLVER.resolve(yaml.ScalarNode, event.value,
                                                                          event.implicit)
    if tag == _MERGE_TAG:
        return None
    if tag == _STR_TAG:
        return event.value
    try:
        value = yaml.safe_load(event.value)
        hash(value)
        return value
    except (yaml.YAMLError, *_BUILD_ERRORS):
        return (tag, event.value)  # yaml.load reports what is wrong with it


def join_key(where: str, key: Any) -> str:
    text = str(key)
    if not text.isprintable() or len(text) > 80:
        text = show(text)
    return f"{where}.{text}" if where else text


def show(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut short: an error message stays one readable line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def to_dict(obj: Any) -> Any:
    """A dataclass config back to plain YAML-able data (tuples become lists).

    Every mapping and list is rebuilt, so shared objects (YAML aliases) come out as copies.
    """
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    return obj
