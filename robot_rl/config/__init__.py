"""One YAML describes one training session; this module turns it into typed objects.

``robot_rl.tasks.load_config("configs/pick_cube.yaml")`` returns a :class:`Config`.
Unknown keys, wrong types and out-of-range values raise
:class:`robot_rl.errors.ConfigError` with the file and the dotted key, e.g.
``configs/pick_cube.yaml: unknown key 'env.obs_mod' (did you mean 'obs_mode'?)``.

This package knows no task: :func:`build_config` types ``task.params`` with the
dataclass that the caller's ``task_params`` lookup returns for ``task.name``. The task
registry (:mod:`robot_rl.tasks`) passes its own, which is why configs are loaded
through ``robot_rl.tasks.load_config`` and ``robot_rl.tasks.config_from_dict``.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Union, get_args, get_origin, get_type_hints

from robot_rl.config.agent import AgentConfig, TrainConfig
from robot_rl.config.base_rl import check_base_rl
from robot_rl.config.bc import BCConfig
from robot_rl.config.hardware import UNTYPED_HARDWARE, HardwareLookups, check_hardware
from robot_rl.config.input import InterventionConfig
from robot_rl.config.learning import LearningConfig
from robot_rl.config.loader import (
    ConfigSource,
    UnknownKeyError,
    apply_overrides,
    build,
    param,
    parse_yaml,
    read_yaml,
    show,
    source_of,
    to_dict,
)
from robot_rl.config.reset import ResetConfig, check_reset_poses
from robot_rl.config.reward import RewardConfig
from robot_rl.config.ros import RosConfig, check_topic_aliasing
from robot_rl.config.sections import (
    CameraConfig,
    ControllerConfig,
    EnvConfig,
    RobotConfig,
    SimConfig,
    TaskConfig,
    WorkspaceConfig,
)
from robot_rl.config.viz import VizConfig
from robot_rl.errors import ConfigError


def _default_cameras() -> dict[str, CameraConfig]:
    return {"front": CameraConfig(), "wrist": CameraConfig()}


@dataclass
class Config:
    """A whole session: task, robot, cameras, env (and, in later sections, learning)."""

    task: TaskConfig = field(default_factory=TaskConfig)
    seed: int = param(0, min=0, max=2**32 - 1, doc="NumPy's legacy seeding takes 32 bits")
    sim: SimConfig = field(default_factory=SimConfig)
    robot: RobotConfig = field(default_factory=RobotConfig)
    cameras: dict[str, CameraConfig] = field(default_factory=_default_cameras)
    env: EnvConfig = field(default_factory=EnvConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    bc: BCConfig = field(default_factory=BCConfig)
    learning: LearningConfig = field(default_factory=LearningConfig)
    intervention: InterventionConfig = field(default_factory=InterventionConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    reset: ResetConfig = field(default_factory=ResetConfig)
    ros: RosConfig = field(default_factory=RosConfig)
    viz: VizConfig = field(default_factory=VizConfig)

    def __post_init__(self) -> None:
        missing = [c for c in self.env.cameras if c not in self.cameras]
        if self.env.obs_mode != "state" and missing:
            raise ValueError(f"env.cameras names {missing}, which 'cameras' does not define")


#: ``task.name`` -> the dataclass of that task's ``task.params``; raises ValueError (saying
#: which names exist) for a name it does not know.
TaskParamsLookup = Callable[[str], type]


def build_config(data: dict[str, Any], file: str, task_params: TaskParamsLookup,
                 hardware: HardwareLookups = UNTYPED_HARDWARE) -> Config:
    """Build a :class:`Config` from a raw mapping, typing and checking ``task.params`` too,
    and ``robot.hardware`` / ``cameras.<name>.hardware`` with the classes ``hardware``
    looks up by backend name (the drivers' registries; the default types none).

    The reset poses are checked once the task's parameters are typed: a task's start
    range is a reset perturbation as well.
    """
    try:
        cfg = build(Config, data, file=file)
    except UnknownKeyError as err:
        elsewhere = "" if err.hinted else _did_you_mean_elsewhere(err.key)
        if not elsewhere:
            raise
        raise ConfigError(f"{err}{elsewhere}") from None
    try:
        params_cls = task_params(cfg.task.name)
    except ValueError as err:
        raise ConfigError(f"{source_of(file, 'task.name')}: 'task.name' {err}") from None
    cfg.task.params = build(params_cls, cfg.task.params, file=file, where="task.params")
    check_hardware(cfg, file, hardware)
    try:
        check_reset_poses(cfg)
    except ValueError as err:
        raise ConfigError(f"{file}: config: {err}") from None
    check_topic_aliasing(cfg, file)
    check_policy_view(cfg, file)
    check_base_rl(cfg, file)
    return cfg


def check_policy_view(cfg: Config, file: str = "config") -> None:
    """Refuse a hardware config whose policy would see the sim's ground truth.

    ``env.obs_mode`` ``state`` and ``both`` put the task's privileged object state into
    ``obs["state"]``; only the sim has it. On a real cell the policy sees the robot's
    view: camera images and proprioception (``pixels``). Catching it at load time beats
    a policy trained in sim on state that then waits forever for a ``/sim/task_state``.
    """
    if cfg.robot.backend != "sim" and cfg.env.obs_mode != "pixels":
        raise ConfigError(f"{file}: env.obs_mode is '{cfg.env.obs_mode}' but robot.backend is "
                          f"'{cfg.robot.backend}': a real cell has no ground-truth object state for the policy; "
                          "use env.obs_mode: pixels (camera images + proprioception)")


def check_override_keys(overrides: list[str], task_params: TaskParamsLookup, task_name: str = "",
                        source: str = "--set") -> None:
    """Refuse an override whose key the config does not have, naming ``--set`` (not the file).

    Call it after :func:`apply_overrides` (which refuses malformed overrides). ``task_name``
    (the merged config's ``task.name``) types ``task.params``; an unknown task is left
    for :func:`build_config` to report.
    """
    for item in overrides:
        key = item.split("=", 1)[0].strip()
        parts = key.split(".")
        tp: Any = Config
        for i, part in enumerate(parts):
            if parts[:i] == ["task", "params"]:
                try:
                    tp = task_params(task_name)
                except ValueError:
                    break
            tp = _dataclass_of(tp)
            if dataclasses.is_dataclass(tp):
                names = [f.name for f in dataclasses.fields(tp) if f.init]
                if part not in names:
                    hint = difflib.get_close_matches(part, names, n=1)
                    suggestion = (f" (did you mean '{'.'.join([*parts[:i], hint[0]])}'?)" if hint
                                  else _did_you_mean_elsewhere(key))
                    shown = item if item.isprintable() and len(item) <= 80 else show(item)
                    raise ConfigError(f"{source} {shown}: unknown key '{key}'{suggestion}")
                tp = get_type_hints(tp)[part]
            elif get_origin(tp) is dict:
                args = get_args(tp)
                tp = args[1] if len(args) == 2 else Any
            else:
                break


def config_keys(tp: Any = None, prefix: str = "") -> list[str]:
    """Every dotted key of :class:`Config` (sections and values); a mapping of sections
    (``cameras``) contributes its entries' keys as ``cameras.<name>.<key>``."""
    tp = Config if tp is None else _dataclass_of(tp)
    keys: list[str] = []
    if dataclasses.is_dataclass(tp):
        hints = get_type_hints(tp)
        for f in dataclasses.fields(tp):
            if f.init:
                keys.append(f"{prefix}{f.name}")
                keys.extend(config_keys(hints[f.name], f"{prefix}{f.name}."))
    elif get_origin(tp) is dict and len(get_args(tp)) == 2 and dataclasses.is_dataclass(get_args(tp)[1]):
        keys.extend(config_keys(get_args(tp)[1], f"{prefix}<name>."))
    return keys


def _did_you_mean_elsewhere(key: str) -> str:
    """`` (did you mean 'train.device'?)`` for an unknown ``agent.device``: the keys of
    other sections that end in the same name (up to three), or ``""`` when none does."""
    last = key.rsplit(".", 1)[-1]
    found = [k for k in config_keys() if k.rsplit(".", 1)[-1] == last and k != key][:3]
    return f" (did you mean {' or '.join(repr(k) for k in found)}?)" if found else ""


def _dataclass_of(tp: Any) -> Any:
    """``tp``, or the one dataclass of an Optional/Union ``tp``."""
    if get_origin(tp) in (Union, types.UnionType):
        found = [a for a in get_args(tp) if dataclasses.is_dataclass(a) or get_origin(a) is dict]
        return found[0] if len(found) == 1 else Any
    return tp


__all__ = [
    "CameraConfig", "Config", "ConfigError", "ConfigSource", "ControllerConfig", "EnvConfig", "HardwareLookups",
    "RobotConfig",
    "SimConfig", "TaskConfig", "TaskParamsLookup", "WorkspaceConfig", "apply_overrides", "build", "build_config",
    "check_override_keys",
    "param", "parse_yaml", "read_yaml", "to_dict",
]
