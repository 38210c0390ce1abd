"""Fingerprints that show a refactor of the hardware backends changed no behaviour.

Two kinds, each a SHA-256 of a canonical text:

* **configs**: every ``configs/*.yaml`` loaded through the task registry (hardware
  settings typed by the backend registries), dumped with sorted keys (``all``);
  ``robot+cameras`` is the same over those two sections, and ``hardware`` over the robot
  section and each camera's backend and typed ``hardware`` block only: what the backends
  decide, unmoved by a change of image size or of the learner;
* **command streams**: each real arm backend built through the drivers' ``make_robot``
  (the public way in, so the script runs on any layout of the driver modules), driven
  through one fixed sequence (start, a target with the gripper closed, a target with it
  open, hold, close) over the fakes in tests/support, and what reaches the fake library
  recorded: the Franka torque loop's libfranka calls and gripper calls (through
  :mod:`recording_pylibfranka`), the UR loop's ur_rtde calls other than the per-cycle
  motion commands (fake_rtde's call log), and the topics and messages a ros2_control
  backend publishes on a recording node (stamps dropped). Per-cycle torques and
  twists depend on the loop's timing and are checked against the control law by the
  backends' own tests instead.

``python tests/support/backend_fingerprints.py [configs] [streams] [--dump DIR]`` prints
one JSON object; tests/drivers/test_fingerprints.py compares the command streams and the
``hardware`` hashes with tests/drivers/fingerprints.json (regenerate that file with
``python tests/support/backend_fingerprints.py > /tmp/fp.json`` and copy those keys, only
after a change that is meant to change what reaches an arm or how a block is typed).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = Path(__file__).resolve().parent


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(value: Any) -> Any:
    """JSON-able, floats rounded to 9 digits, stamps dropped."""
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
                if k not in ("stamp", "sec", "nanosec")}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, np.ndarray):
        return _canonical(value.tolist())
    if isinstance(value, (bool, str, type(None))):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return round(float(value), 9)
    fields = getattr(value, "__slots__", None) or getattr(value, "__dataclass_fields__", None)
    if fields is None and hasattr(value, "__dict__"):
        fields = vars(value)
    if fields is not None:
        names = [f.lstrip("_") if isinstance(f, str) else f for f in fields]
        return {n: _canonical(getattr(value, n, getattr(value, f"_{n}", None))) for n in sorted(names)
                if n not in ("stamp", "sec", "nanosec")}
    return repr(value)


# --------------------------------------------------------------------------- configs


def config_fingerprints() -> dict[str, dict[str, str]]:
    """``{file: {"all": sha, "robot+cameras": sha}}`` for every configs/*.yaml."""
    import yaml

    from robot_rl.config import to_dict
    from robot_rl.tasks import load_config

    out = {}
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        data = to_dict(load_config(path))
        cameras = {n: {"backend": c["backend"], "hardware": c["hardware"]} for n, c in data["cameras"].items()}
        hardware = {"robot": data["robot"], "cameras": cameras}
        out[path.name] = {
            "all": _sha(yaml.safe_dump(data, sort_keys=True)),
            "robot+cameras": _sha(yaml.safe_dump({"robot": data["robot"], "cameras": data["cameras"]},
                                                 sort_keys=True)),
            "hardware": _sha(yaml.safe_dump(hardware, sort_keys=True)),
        }
    return out


# --------------------------------------------------------------------------- command streams

HOME = np.array([0.45, 0.0, 0.30])
DOWN = np.array([0.0, 1.0, 0.0, 0.0])  # (w, x, y, z): the tool pointing down
STEP = np.array([0.0, 0.0, -0.005])


def _drive(robot: Any, settle: Any) -> None:
    """The fixed sequence every backend is driven through."""
    s = robot.state()
    pos, quat = s.tcp_pos.copy(), s.tcp_quat.copy()
    robot.command(pos + STEP, quat, 0.2)
    settle()
    robot.command(pos + 2 * STEP, quat, 1.0)
    settle()
    robot.hold()
    settle()
    robot.close()


def _robot_config(backend: str, hardware: dict, pos=(0.35, 0.0, 0.45)) -> Any:
    from robot_rl.config.sections import ControllerConfig, RobotConfig, WorkspaceConfig

    return RobotConfig(backend=backend, reset_pos=tuple(pos), reset_rpy=(np.pi, 0.0, 0.0),
                       workspace=WorkspaceConfig(pos_low=(0.2, -0.25, 0.1), pos_high=(0.6, 0.2, 0.6)),
                       controller=ControllerConfig(watchdog_s=2.0), hardware=hardware)


def _wait_file(path: Path, count: int, timeout: float = 20.0) -> list:
    deadline = time.monotonic() + timeout
    calls: list = []
    while time.monotonic() < deadline:
        if path.exists():
            calls = json.loads(path.read_text())
            if len(calls) >= count:
                return calls
        time.sleep(0.02)
    return calls


def franka_torque_stream(tmp: Path) -> list:
    import fake_pylibfranka as fakelib

    from robot_rl_drivers.robots import make_robot

    scenario = tmp / "franka.json"
    scenario.write_text(json.dumps({"log": str(tmp / "franka")}))
    os.environ[fakelib.SCENARIO_ENV] = str(scenario)
    os.environ["RECORDING_PYLIBFRANKA_LOG"] = str(tmp / "franka-lib.json")
    cfg = _robot_config("franka", {"ip": "172.16.0.2", "connect_timeout_s": 60.0,
                                   "loop": {"realtime": "ignore", "rt_priority": 0}})
    robot = make_robot(cfg, file="fingerprint.yaml", lib="recording_pylibfranka")
    _drive(robot, lambda: time.sleep(0.3))
    lib = _wait_file(tmp / "franka-lib.json", 1)
    gripper = _wait_file(tmp / "franka-gripper.json", 2)
    return [["lib", *_canonical(lib)], ["gripper", *_canonical(gripper)]]


def ur_stream(tmp: Path) -> list:
    import fake_rtde

    from robot_rl_drivers.robots import make_robot

    scenario = tmp / "ur.json"
    scenario.write_text(json.dumps({"log": str(tmp / "ur")}))
    os.environ[fake_rtde.SCENARIO_ENV] = str(scenario)
    cfg = _robot_config("ur", {"ip": "10.0.0.2", "connect_timeout_s": 60.0, "state_timeout_s": 1.0,
                               "rtde_watchdog_hz": 2.0, "tcp_offset": [0.0, 0.0, 0.1, 0.0, 0.0, 0.0],
                               "loop": {"rt_priority": 0, "first_state_timeout_s": 30.0}},
                        pos=(0.4, -0.1, 0.3))
    robot = make_robot(cfg, file="fingerprint.yaml", lib="fake_rtde")
    _drive(robot, lambda: time.sleep(0.3))
    calls = json.loads((tmp / "ur-calls.json").read_text())
    # [name, args, time, motion commands so far]: keep what was called and with what
    return _canonical([[c[0], c[1]] for c in calls if c[0] not in ("kickWatchdog",)])


def _ros2_stream(backend: str, hardware: dict, joints: list[str], pose_topic: str, frame: str,
                 wrench_topic: str | None) -> list:
    from fake_ros_node import RecordingNode

    from robot_rl.ros import convert
    from robot_rl_drivers.robots import make_robot

    node = RecordingNode()
    cfg = _robot_config(backend, hardware, pos=HOME)

    def send_state() -> None:
        t = time.time()
        node.deliver(pose_topic, convert.pose_stamped_msg(HOME, DOWN, t, frame))
        q = np.linspace(0.1, 0.6, len(joints))
        node.deliver("/joint_states", convert.joint_state_msg(joints, q, q * 0.0, q * 2.0, t))
        if wrench_topic:
            node.deliver(wrench_topic, convert.wrench_stamped_msg(np.array([0.5, -0.2, 3.0, 0.01, 0.0, 0.02]), t,
                                                                  "tool0"))

    def settle() -> None:
        for _ in range(3):
            send_state()
            node.tick()

    robot = make_robot(cfg, file="fingerprint.yaml", node=node, lib="fake_pylibfranka")
    send_state()
    _drive(robot, settle)
    return _canonical({"subscribed": sorted(node.callbacks), "published": node.published})


def franka_ros2_stream(tmp: Path) -> list:
    import fake_pylibfranka as fakelib

    scenario = tmp / "franka_ros2.json"
    scenario.write_text(json.dumps({"log": str(tmp / "franka_ros2")}))
    os.environ[fakelib.SCENARIO_ENV] = str(scenario)
    return _ros2_stream("franka", {"ip": "172.16.0.2", "mode": "ros2_control", "gripper": {"enabled": False},
                                   "ros2_control": {"wrench_topic": "/wrench", "state_timeout_s": 10.0}},
                        [f"fr3_joint{i}" for i in range(1, 8)], "/current_pose", "base", "/wrench")


def ros2_control_stream(tmp: Path) -> list:
    joints = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
              "wrist_3_joint"]
    prefix = "/cartesian_compliance_controller"
    return _ros2_stream("ros2_control", {"contract": "cartesian_controllers", "joint_names": joints,
                                         "state_timeout_s": 10.0},
                        joints, f"{prefix}/current_pose", "base_link", f"{prefix}/ft_sensor_wrench")


STREAMS = {"franka_torque": franka_torque_stream, "franka_ros2": franka_ros2_stream,
           "ros2_control": ros2_control_stream, "ur": ur_stream}


def command_stream_fingerprints(dump: Path | None = None) -> dict[str, str]:
    """``{backend: sha}`` of the command stream each arm backend sends its library
    (each stream also written to ``dump/<backend>.json`` when given, to compare by eye)."""
    if str(SUPPORT) not in sys.path:
        sys.path.insert(0, str(SUPPORT))  # the spawned loop processes import the fakes by name
    out = {}
    saved = dict(os.environ)
    try:
        for name, stream in STREAMS.items():
            with tempfile.TemporaryDirectory() as tmp:
                text = json.dumps(stream(Path(tmp)), sort_keys=True)
                out[name] = _sha(text)
                if dump is not None:
                    dump.mkdir(parents=True, exist_ok=True)
                    (dump / f"{name}.json").write_text(json.dumps(json.loads(text), indent=1) + "\n")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return out


def main() -> None:
    """``[configs] [streams] [--dump DIR]``: print the fingerprints as one JSON object."""
    args = sys.argv[1:]
    dump = None
    if "--dump" in args:
        at = args.index("--dump")
        dump = Path(args[at + 1])
        del args[at:at + 2]
    which = args or ["configs", "streams"]
    result: dict[str, Any] = {}
    if "configs" in which:
        result["configs"] = config_fingerprints()
    if "streams" in which:
        result["streams"] = command_stream_fingerprints(dump)
    print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(SUPPORT))
    main()
