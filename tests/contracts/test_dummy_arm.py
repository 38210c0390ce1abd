"""Adding an arm is one folder and one registry line: a lab's own arm, written by this test.

The test writes a backend folder (``lab_arms/dummy_arm/``: a SPEC, a settings class and
a robot, as docs/adding-a-robot.md describes) into a temporary directory, puts it on
``sys.path`` and registers its SPEC with the registry's hook
(:func:`robot_rl_drivers.robots.register_robot_backend`, the one line). Then a config
naming ``robot.backend: dummy`` loads with its ``robot.hardware`` typed by the folder's
settings class, :func:`make_robot` builds it, and it passes every rule of the Robot
contract (tests/contracts/test_robot_contract.py), each rule on a fresh arm.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path

import pytest
from contract_rigs import RobotRig  # noqa: E402  (tests/support)

from robot_rl.errors import ConfigError
from robot_rl.tasks import config_from_dict
from robot_rl_drivers.robots import make_robot, register_robot_backend, robot_names

SPEC_PY = '''
"""A lab's arm that goes where it is told at once: ``robot.backend: dummy``."""

from lab_arms.dummy_arm.settings import DummySettings
from robot_rl_drivers.spec import RobotSpec

SPEC = RobotSpec(name="dummy", folder="dummy_arm", settings=DummySettings,
                 factory="lab_arms.dummy_arm.robot:make")
'''

SETTINGS_PY = '''
"""``robot.hardware`` of the dummy arm."""

from dataclasses import dataclass

from robot_rl.config.loader import param


@dataclass
class DummySettings:
    joints: int = param(6, min=1, max=7, doc="how many joints it reports")

    has_posture = False  # no null-space posture: set_posture raises NotImplementedError

    def arm_joints(self, default_prefix: str = "") -> list:
        return [f"dummy_joint{i}" for i in range(1, self.joints + 1)]
'''

ROBOT_PY = '''
"""The dummy arm: its measured pose is its target, clipped to the safety box."""

import time

import numpy as np

from robot_rl.control import SafetyBox
from robot_rl.control.commands import BadCommand, robot_command
from robot_rl.control.transforms import rpy_to_quat
from robot_rl.errors import RobotFault
from robot_rl.interfaces import Robot, RobotState


class DummyArm(Robot):
    def __init__(self, cfg, hw):
        self.box = SafetyBox.from_config(cfg)
        self.pos = np.array(cfg.reset_pos, dtype=np.float64)
        self.quat = rpy_to_quat(np.array(cfg.reset_rpy))
        self.joints = hw.joints
        self.gripper = 1.0
        self.rejected = 0
        self.faulted = False

    def _check(self):
        if self.faulted:
            raise RobotFault("dummy arm: it stopped itself; call recover()")

    def state(self):
        self._check()
        zeros = np.zeros(self.joints)
        return RobotState(time.time(), self.pos.copy(), self.quat.copy(), np.zeros(6), np.zeros(6), zeros,
                          zeros.copy(), zeros.copy(), self.gripper)

    def command(self, pos, quat, gripper=None):
        self._check()
        try:
            pos, quat, gripper = robot_command(pos, quat, gripper)
        except BadCommand:
            self.rejected += 1
            return False  # it holds where it is: the measured pose is already the target
        self.pos, self.quat, _ = self.box.clip(pos, quat)
        if gripper is not None:
            self.gripper = gripper
        return True

    def hold(self):
        pass

    def recover(self):
        self.faulted = False


def make(cfg, hw, *, file="<config>", node=None, lib=None):
    return DummyArm(cfg, hw)
'''


@pytest.fixture
def dummy_backend(tmp_path, monkeypatch):
    """The folder written, on sys.path, and its SPEC registered (removed again afterwards)."""
    folder = tmp_path / "lab_arms" / "dummy_arm"
    folder.mkdir(parents=True)
    (tmp_path / "lab_arms" / "__init__.py").write_text("")
    for name, text in (("__init__.py", SPEC_PY), ("settings.py", SETTINGS_PY), ("robot.py", ROBOT_PY)):
        (folder / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    register_robot_backend(importlib.import_module("lab_arms.dummy_arm").SPEC)  # the one registry line
    yield
    register_robot_backend(None, "dummy")
    for module in [m for m in sys.modules if m.startswith("lab_arms")]:
        del sys.modules[module]


def dummy_config(**hardware):
    return config_from_dict({"robot": {"backend": "dummy", "hardware": hardware},
                             "cameras": {}, "env": {"obs_mode": "pixels", "cameras": []}}, file="lab.yaml")


class DummyRig(RobotRig):
    name = "dummy"
    dof = 6
    has_posture = False

    def __init__(self) -> None:
        cfg = dummy_config(joints=6)
        self.robot = make_robot(cfg.robot, file="lab.yaml")
        s = self.robot.state()
        self.start = (s.tcp_pos.copy(), s.tcp_quat.copy())

    def settle(self, seconds: float) -> None:
        pass  # it moves at once

    def goal(self):
        return self.robot.pos.copy(), self.robot.quat.copy()

    def rejected_targets(self) -> int:
        return self.robot.rejected

    def rejected_postures(self) -> int:
        return 0

    def posture_marker(self):
        return None

    def gripper_marker(self):
        return self.robot.gripper

    def stop_itself(self) -> None:
        self.robot.faulted = True


def contract_rules():
    """Every rule of tests/contracts/test_robot_contract.py, as the plain functions they are."""
    where = importlib.util.spec_from_file_location("robot_contract_rules", Path(__file__).with_name(
        "test_robot_contract.py"))
    contract = importlib.util.module_from_spec(where)
    where.loader.exec_module(contract)
    return [fn for name, fn in inspect.getmembers(contract, inspect.isfunction)
            if name.startswith("test_") and {"robot_rig", "faulting_robot_rig"} & set(inspect.signature(fn).parameters)]


def test_a_config_types_the_new_arms_hardware_from_its_folder(dummy_backend):
    assert "dummy" in robot_names()
    cfg = dummy_config(joints=4)
    assert type(cfg.robot.hardware).__name__ == "DummySettings" and cfg.robot.hardware.joints == 4
    with pytest.raises(ConfigError) as err:
        dummy_config(joints=4, ip="10.0.0.2")  # another backend's setting
    assert str(err.value) == "lab.yaml: unknown key 'robot.hardware.ip'"
    with pytest.raises(ConfigError, match=r"lab.yaml: 'robot.hardware.joints' = 9 is out of range \[1, 7\]"):
        dummy_config(joints=9)


def test_the_new_arm_passes_every_rule_of_the_robot_contract(dummy_backend):
    rules = contract_rules()
    assert len(rules) >= 12, [r.__name__ for r in rules]
    ran, skipped = [], []
    for rule in rules:
        rig = DummyRig()
        try:
            rule(rig)
            ran.append(rule.__name__)
        except pytest.skip.Exception:
            skipped.append(rule.__name__)
        finally:
            rig.teardown()
    # only the posture rules of arms that have one are skipped, as for every 6-joint backend
    assert skipped == sorted(r.__name__ for r in rules if "valid_posture" in r.__name__ or
                             "malformed_posture" in r.__name__), skipped
    assert "test_after_the_arm_stops_itself_state_and_command_raise_until_recover" in ran


def test_without_its_registry_line_the_name_is_refused_naming_the_file_and_key():
    with pytest.raises(ConfigError) as err:
        dummy_config()
    assert str(err.value).startswith("lab.yaml: 'robot.backend' must be one of 'sim', 'topics', 'franka', 'ur', "
                                     "'ros2_control', got 'dummy'")
