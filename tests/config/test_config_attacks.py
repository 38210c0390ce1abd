"""Config files cannot smuggle unsafe numbers in, nor crash or hang the loader.

Every number of the whole :class:`robot_rl.config.Config` tree is found by walking its
dataclasses, so a field added later is covered without touching this file. Each one is
fed NaN, +inf, -inf and a huge value, through a YAML file and through ``--set``, and must
be refused with one line naming the file (or ``--set``) and the dotted key. Then the YAML
hazards: binary garbage, deep nesting, alias bombs, recursive aliases, duplicate keys
and huge files, in-process and through the ``robot-rl`` command.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Literal, Union, get_args, get_origin, get_type_hints

import pytest
import yaml

from robot_rl.cli import main as cli_main
from robot_rl.config import Config, to_dict, yaml_text
from robot_rl.config.loader import (
    MAX_CONFIG_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    UNBOUNDED_MAGNITUDE,
    build,
    param,
)
from robot_rl.errors import ConfigError
from robot_rl.tasks import all_tasks, load_config
from robot_rl_drivers.cameras import camera_spec
from robot_rl_drivers.robots import robot_spec

REPO = Path(__file__).resolve().parents[2]
FILE_VALUES = {int: (float("nan"), float("inf"), float("-inf"), 2**63),
               float: (float("nan"), float("inf"), float("-inf"), 1e300)}

# ``dict[str, Any]`` sections whose dataclass depends on another setting: the key, and for
# each possible dataclass, the settings that select it (and its required keys).
DYNAMIC_SECTIONS: dict[str, list[tuple[type, dict[str, Any]]]] = {
    "task.params": [(spec.params, {"task.name": spec.name}) for spec in all_tasks()],
    "robot.hardware": [(robot_spec("franka").settings, {"robot.backend": "franka", "robot.hardware.ip": "127.0.0.1"}),
                       (robot_spec("ur").settings, {"robot.backend": "ur", "robot.hardware.ip": "127.0.0.1"}),
                       (robot_spec("ros2_control").settings, {"robot.backend": "ros2_control",
                                                         "robot.hardware.contract": "cartesian_controllers",
                                                         "robot.hardware.joint_names": ["j1", "j2", "j3"]})],
    "cameras.front.hardware": [
        (camera_spec("realsense").settings, {"cameras.front.backend": "realsense",
                                        "cameras.front.hardware.serial": "0123"}),
        (camera_spec("opencv").settings, {"cameras.front.backend": "opencv"}),
    ],
}

# Numbers whose field sets no explicit maximum (or, where negative values make sense, no
# explicit minimum) and relies on the loader's ±UNBOUNDED_MAGNITUDE backstop instead.
# A new field must not join this list silently: give it a physical range instead.
BACKSTOPPED_PREFIXES = {
    "learning.": "the learning plane's ranges belong to robot_rl/config/learning.py's change",
}
BACKSTOPPED = {
    # Ranges proposed for the controller/workspace/robot change (sections.py):
    "robot.reset_pos", "robot.reset_rpy", "robot.gripper_max_width",
    "robot.workspace.pos_low", "robot.workspace.pos_high",
    "robot.controller.stiffness", "robot.controller.damping", "robot.controller.max_torque_rate",
    "robot.controller.torque_limits", "robot.controller.nullspace_stiffness",
    "robot.controller.nullspace_damping", "robot.controller.rest_posture",
    "robot.controller.joint_damping", "robot.controller.watchdog_s",
    # Task geometry (robot_rl/tasks/<task>/params.py): positions checked against the box by the task.
    "task.params.hole_xy", "task.params.cube_xy_center",
    # Free text or index that also takes a number: refused by their own checks.
    "cameras.front.hardware.serial",
}


# --------------------------------------------------------------------------- the walk


@dataclass(frozen=True)
class Leaf:
    """A field of the config tree that holds numbers."""

    key: str                        # dotted key, e.g. robot.controller.stiffness
    tp: Any                         # its type hint
    field: dataclasses.Field
    context: tuple[tuple[str, Any], ...] = ()  # other settings it needs (a backend, ...)

    def __str__(self) -> str:
        selected = ",".join(f"{k}={v}" for k, v in self.context if not k.endswith((".ip", ".serial")))
        return f"{self.key}[{selected}]" if selected else self.key


def _is_number_type(tp: Any) -> bool:
    return tp in (int, float)


def _holds_numbers(tp: Any) -> bool:
    if _is_number_type(tp):
        return True
    if get_origin(tp) is Literal:
        return False
    return any(_holds_numbers(a) for a in get_args(tp) if a is not Ellipsis)


def _walk(cls: type, prefix: str = "", context: tuple = ()) -> Iterator[Leaf]:
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        key = f"{prefix}.{f.name}" if prefix else f.name
        tp = hints[f.name]
        if key in DYNAMIC_SECTIONS:
            for sub, settings in DYNAMIC_SECTIONS[key]:
                yield from _walk(sub, key, context + tuple(settings.items()))
        elif dataclasses.is_dataclass(tp):
            yield from _walk(tp, key, context)
        elif get_origin(tp) is dict and dataclasses.is_dataclass(get_args(tp)[1]):
            yield from _walk(get_args(tp)[1], f"{key}.front", context)  # cameras: the default 'front'
        elif _holds_numbers(tp):
            yield Leaf(key, tp, f, context)


LEAVES = list(_walk(Config))


def _number_base(tp: Any) -> type:
    """int or float: the number type a leaf finally holds."""
    if _is_number_type(tp):
        return tp
    return next(_number_base(a) for a in get_args(tp) if a is not Ellipsis and _holds_numbers(a))


def _sample(tp: Any, bad: Any) -> Any:
    """A value of type ``tp`` whose first number is ``bad`` (the rest only need the right type)."""
    origin, args = get_origin(tp), [a for a in get_args(tp) if a is not Ellipsis]
    if _is_number_type(tp):
        return bad
    if origin in (Union, types.UnionType):
        return _sample(next(a for a in args if _holds_numbers(a)), bad)
    if origin in (list, tuple):
        rest = len(args) - 1 if origin is tuple and len(get_args(tp)) == len(args) else 0
        return [_sample(args[0], bad)] + [0] * rest
    if origin is dict:
        return {"close_gripper": _sample(args[1], bad)}
    raise AssertionError(f"no sample for {tp!r}")


def _nest(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key, value in pairs:
        *parents, last = key.split(".")
        node = doc
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return doc


def _flow(value: Any) -> str:
    """``value`` as one line of YAML (how a person writes it after ``--set key=``)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6)
    return text.removesuffix("...\n").strip()


def _assert_one_line_naming(err: pytest.ExceptionInfo, *fragments: str) -> None:
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message, message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


# --------------------------------------------------------------------------- numbers


def test_the_walk_finds_the_safety_fields():
    keys = {leaf.key for leaf in LEAVES}
    assert {"robot.controller.stiffness", "robot.controller.watchdog_s", "robot.workspace.pos_high",
            "robot.reset_pos", "sim.physics_hz", "env.control_hz", "task.params.cube_mass",
            "robot.hardware.collision.collision_torque", "cameras.front.hardware.exposure",
            "intervention.spacemouse.buttons"} <= keys
    assert len(LEAVES) > 150


@pytest.mark.parametrize("leaf", LEAVES, ids=str)
def test_every_number_refuses_nan_inf_and_huge(tmp_path, leaf):
    path = tmp_path / "config.yaml"
    base = list(leaf.context)
    for bad in FILE_VALUES[_number_base(leaf.tp)]:
        value = _sample(leaf.tp, bad)
        path.write_text(yaml.safe_dump(_nest(base + [(leaf.key, value)])))
        with pytest.raises(ConfigError) as err:
            load_config(path)
        _assert_one_line_naming(err, str(path), f"'{leaf.key}")

        path.write_text(yaml.safe_dump(_nest(base)))
        with pytest.raises(ConfigError) as err:
            load_config(path, [f"{leaf.key}={_flow(value)}"])
        _assert_one_line_naming(err, f"'{leaf.key}")


def _relies_on_backstop(leaf: Leaf) -> bool:
    lo, hi = leaf.field.metadata.get("min"), leaf.field.metadata.get("max")
    return hi is None or (lo is None and leaf.field.metadata.get("finite", True))


def test_fields_without_a_range_are_known():
    unranged = {leaf.key for leaf in LEAVES if _relies_on_backstop(leaf)
                and not leaf.key.startswith(tuple(BACKSTOPPED_PREFIXES))}
    assert unranged <= BACKSTOPPED, f"give these fields a min and max: {sorted(unranged - BACKSTOPPED)}"


def test_defaults_and_examples_sit_inside_their_ranges():
    for path in sorted((REPO / "configs").glob("*.yaml")):
        load_config(path)
    load_config(REPO / "configs" / "pick_cube.yaml", ["robot.hardware={}"])


def test_reset_pos_nan_fails_at_load_not_in_ik(tmp_path):
    path = tmp_path / "nan_reset.yaml"
    path.write_text("robot:\n  reset_pos: [.nan, 0, 0.2]\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    _assert_one_line_naming(err, str(path), "robot.reset_pos", "finite")


@pytest.mark.parametrize("override,fragment", [
    ("robot.controller.watchdog_s=.nan", "'robot.controller.watchdog_s' must be a finite number, got nan"),
    ("robot.workspace.pos_high=[.inf, 0.25, 0.45]", "'robot.workspace.pos_high[0]' must be a finite number"),
    ("robot.controller.nullspace_damping=2147483648", "'robot.controller.nullspace_damping' = 2147483648.0 "
                                                      "is out of range"),
    ("sim.physics_hz=.nan", "'sim.physics_hz' must be a finite number"),
    ("seed=4294967296", "'seed' = 4294967296 is out of range [0, 4294967295]"),
    ("cameras.front.hardware.device=5000", "'cameras.front.hardware.device' = 5000 is out of range"),
    ("env.control_hz=" + "9" * 400, "'env.control_hz' = 999"),
])
def test_issue_examples_are_refused(override, fragment):
    overrides = [override]
    if "hardware.device" in override:
        overrides.insert(0, "cameras.front.backend=opencv")
    with pytest.raises(ConfigError) as err:
        load_config(REPO / "configs" / "pick_cube.yaml", overrides)
    _assert_one_line_naming(err, fragment)


@dataclass
class _Demo:
    stiffness: tuple[float, float, float, float] = param((1.0, 1.0, 1.0, 1.0), min=0.0, max=(5000, 5000, 500, 500))
    gain: float = param(1.0, finite=False)
    table: dict[str, float] = param(default_factory=dict, min=-1.0, max=1.0)


def test_per_element_bounds_finite_opt_out_and_mapping_values():
    assert build(_Demo, {"stiffness": [5000, 5000, 500, 0]}, file="f").stiffness == (5000, 5000, 500, 0)
    with pytest.raises(ConfigError, match=r"'stiffness\[2\]' = 501.0 is out of range \[0.0, 500\]"):
        build(_Demo, {"stiffness": [1, 1, 501, 1]}, file="f")
    assert build(_Demo, {"gain": float("inf")}, file="f").gain == float("inf")
    with pytest.raises(ConfigError, match="'table.x' must be a finite number"):
        build(_Demo, {"table": {"x": float("nan")}}, file="f")
    with pytest.raises(ConfigError, match=r"'table.y' = 2.0 is out of range \[-1.0, 1.0\]"):
        build(_Demo, {"table": {"y": 2}}, file="f")


@dataclass
class _Bare:
    x: float = 0.0
    n: int = 0


def test_unranged_numbers_are_held_by_the_backstop():
    assert build(_Bare, {"x": -UNBOUNDED_MAGNITUDE, "n": int(UNBOUNDED_MAGNITUDE)}, file="f").x == -UNBOUNDED_MAGNITUDE
    with pytest.raises(ConfigError, match=r"'x' = -2000000000.0 is out of range \[-1e\+09, 1e\+09\]"):
        build(_Bare, {"x": -2 * UNBOUNDED_MAGNITUDE}, file="f")
    with pytest.raises(ConfigError, match=r"'n' = 1000000001 is out of range"):
        build(_Bare, {"n": int(UNBOUNDED_MAGNITUDE) + 1}, file="f")


def test_keys_that_read_the_same_as_text_are_duplicates(tmp_path):
    path = tmp_path / "cams.yaml"
    path.write_text("cameras:\n  1: {width: 64}\n  '1': {width: 32}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    _assert_one_line_naming(err, str(path), "duplicate key 'cameras.1'")


# --------------------------------------------------------------------------- YAML hazards


def _alias_bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "robot:\n  hardware:\n" + "".join(f"    {line}\n" for line in lines)


HAZARDS = {
    "binary": (bytes(range(256)) * 8, "is not UTF-8 text"),
    "nul": (b"seed: 1\x00\n", "is not valid YAML (character #x0000"),
    "deep": (("robot: {hardware: {x: " + "[" * 1000 + "]" * 1000 + "}}\n").encode(),
             f"is nested more than {MAX_YAML_DEPTH} levels deep"),
    "deep_block": ("".join(f"{'  ' * i}k{i}:\n" for i in range(200)).encode(), "'k0.k1.k2."),
    "bomb": (_alias_bomb().encode(), f"holds more than {MAX_YAML_NODES} values once its aliases are expanded"),
    "recursive": (b"robot:\n  hardware: &h {self: *h}\n", "alias *h refers to a value that contains it"),
    "duplicate": (b"seed: 1\nrobot:\n  controller:\n    watchdog_s: 0.5\n    watchdog_s: 5\n",
                  "line 5: duplicate key 'robot.controller.watchdog_s' (first given on line 4)"),
    "duplicate_top": (b"seed: 1\nenv: {}\nseed: 2\n", "line 3: duplicate key 'seed'"),
    "huge": (b"# padding\n" * (MAX_CONFIG_BYTES // 10 + 1), "is larger than 1024 KiB"),
}


@pytest.mark.parametrize("name", HAZARDS)
def test_yaml_hazards_are_one_line(tmp_path, name):
    data, fragment = HAZARDS[name]
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(data)
    start = time.monotonic()
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert time.monotonic() - start < 5.0
    _assert_one_line_naming(err, str(path), fragment)


@pytest.mark.parametrize("loader", sorted({yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)},
                                           key=lambda c: c.__name__), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", ["deep", "deep_block", "bomb", "recursive", "duplicate"])
def test_yaml_refusals_are_robot_rls_own_whatever_the_loader(tmp_path, monkeypatch, loader, name):
    """The user reads robot_rl's words, not the YAML library's: libyaml (PyYAML's C loader) refuses
    some hazards itself, in words that changed between PyYAML releases, and the pure-Python loader
    refuses none of them."""
    monkeypatch.setattr(yaml_text, "_FAST_LOADER", loader)
    data, fragment = HAZARDS[name]
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    _assert_one_line_naming(err, str(path), fragment)
    assert "YAML" not in str(err.value), "the refusal is robot_rl's, not the loader's"


@pytest.mark.parametrize("override,fragment", [
    ("robot.hardware=" + "[" * 1000 + "]" * 1000, "is nested more than 50 levels deep"),
    ("robot.hardware." + ".".join(["x"] * 60) + "=1", "must be 1 to 49 dot-separated names"),
    ("robot.hardware=" + _flow(yaml.safe_load(_alias_bomb(4))["robot"]["hardware"]).replace("lol", "1")
     + "", "holds more than"),
    ("robot.hardware={a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], "
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c]}",
     "--set robot.hardware: line 1: holds more than 10000 values once its aliases are expanded"),
    ("robot.hardware={a: 1, a: 2}", "--set robot.hardware: line 1: duplicate key 'robot.hardware.a'"),
    ("robot.hardware=&x [*x]", "refers to a value that contains it"),
    ("robot.hardware=\x00", "--set robot.hardware: is not valid YAML"),
    ("robot.hardware=2001-13-01", "--set robot.hardware: holds a value YAML cannot build"),
    ("robot.hardware={2001-13-01: 1}", "--set robot.hardware: holds a value YAML cannot build"),
    ("robot.reset_pos=[.nan, 0, 0.2]", "'robot.reset_pos[0]' must be a finite number"),
])
def test_set_gets_the_same_protection(override, fragment):
    with pytest.raises(ConfigError) as err:
        load_config(REPO / "configs" / "pick_cube.yaml", [override])
    _assert_one_line_naming(err, fragment)


def test_ordinary_anchors_still_work_and_become_copies(tmp_path):
    path = tmp_path / "anchors.yaml"
    path.write_text("cameras:\n  front: &cam {width: 96, height: 96}\n  wrist:\n    <<: *cam\n    width: 64\n"
                    "  side: *cam\n")
    cfg = load_config(path, ["cameras.side.height=48"])
    assert (cfg.cameras["front"].width, cfg.cameras["front"].height) == (96, 96)
    assert (cfg.cameras["wrist"].width, cfg.cameras["wrist"].height) == (64, 96)
    assert (cfg.cameras["side"].width, cfg.cameras["side"].height) == (96, 48)


def test_the_largest_accepted_config_dumps_quickly(tmp_path):
    """What passes the checks is small: writing the run's config.yaml cannot blow up."""
    path = tmp_path / "big.yaml"
    path.write_text(_alias_bomb(3))  # about 1250 values once expanded: accepted
    cfg = load_config(path)
    start = time.monotonic()
    text = yaml.safe_dump(to_dict(cfg), sort_keys=False)
    assert time.monotonic() - start < 2.0 and len(text) < 200_000


# --------------------------------------------------------------------------- the command line


@pytest.mark.parametrize("name", ["binary", "deep", "bomb", "duplicate", "huge"])
def test_cli_prints_one_line_and_fails(tmp_path, capsys, name):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(HAZARDS[name][0])
    code = cli_main(["train", "--config", str(path), "--run-dir", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code != 0
    assert err.startswith("robot-rl: ") and err.count("\n") == 1 and str(path) in err, err
    assert not (tmp_path / "run").exists()


def test_cli_set_nan_prints_one_line_and_fails(capsys, tmp_path):
    code = cli_main(["train", "--config", str(REPO / "configs" / "pick_cube.yaml"),
                     "--run-dir", str(tmp_path / "run"), "--set", "robot.controller.damping=[.nan, 1, 1, 1, 1, 1]"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1
    assert err.startswith("robot-rl: ") and "'robot.controller.damping[0]' must be a finite number" in err


def test_robot_rl_command_exits_non_zero_with_one_line(tmp_path):
    """The installed command, as a person runs it (two representative cases, run together)."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_bytes(HAZARDS["bomb"][0])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = [
        subprocess.Popen([sys.executable, "-m", "robot_rl.cli", "train", "--config", str(bomb),
                          "--run-dir", str(tmp_path / "run1")],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        subprocess.Popen([sys.executable, "-m", "robot_rl.cli", "train", "--config",
                          str(REPO / "configs" / "pick_cube.yaml"), "--run-dir", str(tmp_path / "run2"),
                          "--set", "robot.controller.watchdog_s=.nan"],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
    ]
    fragments = ["holds more than", "'robot.controller.watchdog_s' must be a finite number"]
    for proc, fragment in zip(runs, fragments):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode != 0
        assert err.startswith("robot-rl: ") and err.count("\n") == 1 and fragment in err, err
        assert out == ""
