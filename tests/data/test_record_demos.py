"""``robot-rl record-demos --source keyboard|spacemouse`` in sim, through the real drivers.

The real KeyboardInput and SpaceMouse classes run under fake pynput / hidapi libraries
(handed in through ``record_demos.DEVICE_CONTEXT``), and the command runs through the CLI
``main`` as a person would start it. The keyboard fake delivers each step's key events
from ``is_alive()``, which KeyboardInput.read() calls right before mapping the keys, so
events land on exact steps; the SpaceMouse fake plays byte-exact HID reports.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np

from robot_rl.assemble import make_env
from robot_rl.cli import main, record_demos
from robot_rl.data.demos import episode_files, load_demos, read_manifest
from robot_rl.tasks import load_config

PICK = "configs/pick_cube.yaml"


def key(name: str) -> SimpleNamespace:
    """A pynput Key (by name) or KeyCode (a character)."""
    return SimpleNamespace(char=name) if len(name) == 1 else SimpleNamespace(name=name, char=None)


class StepListener:
    """pynput.keyboard.Listener's shape; ``script(n)`` gives the events to deliver at read ``n`` (1-based)."""

    def __init__(self, script, on_press, on_release) -> None:
        self.script, self.on_press, self.on_release = script, on_press, on_release
        self.alive = False
        self.reads = 0

    def start(self) -> None:
        self.alive = True

    def wait(self) -> None:
        pass

    def stop(self) -> None:
        self.alive = False

    def join(self, timeout=None) -> None:
        pass

    def is_alive(self) -> bool:
        if self.alive:
            self.reads += 1
            for kind, name in self.script(self.reads):
                (self.on_press if kind == "press" else self.on_release)(key(name))
        return self.alive


COMPACT = {"path": b"/dev/hidraw7", "vendor_id": 0x256F, "product_id": 0xC635, "serial_number": "",
           "release_number": 0x0437, "manufacturer_string": "3Dconnexion", "product_string": "SpaceMouse Compact",
           "usage_page": 1, "usage": 8, "interface_number": 0}


class FakeHid:
    """The ``hid`` module's shape: enumerate(), device() with open_path/set_nonblocking/read/close."""

    def __init__(self, devices: list[dict]) -> None:
        self.devices = devices
        self.reports: queue.Queue = queue.Queue()

    def enumerate(self, vendor_id: int = 0, product_id: int = 0) -> list[dict]:
        return [dict(d) for d in self.devices]

    def device(self) -> "FakeHid":
        return self

    def open_path(self, path: bytes) -> None:
        pass

    def set_nonblocking(self, flag) -> int:
        return 0

    def read(self, size: int, timeout_ms: int = 0) -> list[int]:
        try:
            return list(self.reports.get(timeout=timeout_ms / 1000.0))
        except queue.Empty:
            return []

    def close(self) -> None:
        pass


def demo_spaces(overrides):
    env = make_env(load_config(PICK, overrides))
    spaces = env.observation_space, env.action_space
    env.close()
    return spaces


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_keyboard_demo_is_the_persons_saved_as_it_ends_and_stop_keeps_it(tmp_path, monkeypatch, capsys):
    out = tmp_path / "demos"
    seen_on_disk = {}

    def script(n):
        if n == 1:
            return [("press", "w")]  # forward: robot -x with the default axis_map
        if n == 7:
            return [("release", "w")]
        if n == 8:
            return [("press", "enter"), ("release", "enter")]  # success: ends episode 0 at step 8
        if n == 9:  # the first step of episode 1: episode 0 must already be a file
            seen_on_disk["episodes"] = [p.name for p in episode_files(out)]
            return []
        if n == 10:
            return [("press", "esc")]  # stop: ends the recording
        return []

    monkeypatch.setitem(record_demos.DEVICE_CONTEXT, "listener_factory",
                        lambda **kw: StepListener(script, **kw))
    overrides = ["env.max_episode_steps=15"]
    code = main(["record-demos", "--config", PICK, "--source", "keyboard", "--episodes", "3", "--out", str(out),
                 *[a for o in overrides for a in ("--set", o)]])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "success key enter" in captured.out and "stop key esc" in captured.out and "failure key backspace" in \
        captured.out
    # progress on stderr (not a terminal here): a line as the recording starts and one as it ends
    status = [line for line in captured.err.splitlines() if line.startswith("record-demos PickCube keyboard: ")]
    assert status[0] == "record-demos PickCube keyboard: 0/3 episodes, attempts 0", captured.err
    assert status[-1] == "record-demos PickCube keyboard: 1/3 episodes, attempts 1, last success, steps 8"
    assert "\r" not in captured.err
    summary = last_json(captured.out)
    assert summary["saved"] == 1 and summary["stopped"] and summary["attempted"] == 1
    assert seen_on_disk["episodes"] == ["episode_000000.npz"]
    assert read_manifest(out)["source"] == "keyboard"
    episodes = load_demos(out, *demo_spaces(overrides))
    assert len(episodes) == 1  # the stopped episode is not written
    ep = episodes[0]
    assert len(ep) == 8 and ep[-1].terminated and ep[-1].success and ep[-1].reward == 1.0  # the label ended it
    assert not any(s.success for s in ep[:-1])  # the cube was never lifted: only the label said success
    actions = np.stack([s.action for s in ep])
    intervened = np.array([s.intervened for s in ep])
    assert intervened[:6].all() and not intervened[6:].any()
    np.testing.assert_allclose(actions[:6, 0], -0.5, atol=0.05)  # the person's forward key, in the action's x
    np.testing.assert_allclose(actions[:6, 1:], 0.0, atol=0.05)
    np.testing.assert_allclose(actions[6:], 0.0, atol=1e-6)  # the hold policy: no motion, gripper kept
    moved = ep[-1].next_obs["state"][:3] - ep[0].obs["state"][:3]
    assert moved[0] < -0.03 and abs(moved[1]) < 0.01 and abs(moved[2]) < 0.01, moved


def test_spacemouse_deflection_moves_the_arm_that_way(tmp_path, monkeypatch, capsys):
    hid = FakeHid([COMPACT])
    hid.reports.put(bytes.fromhex("01 2c 01 00 00 00 00"))  # puck pushed right, +300 counts, held
    monkeypatch.setitem(record_demos.DEVICE_CONTEXT, "hid_module", hid)
    out = tmp_path / "demos"
    overrides = ["env.max_episode_steps=6", "env.relative_pose=false"]
    code = main(["record-demos", "--config", PICK, "--source", "spacemouse", "--episodes", "1", "--keep-failed",
                 "--out", str(out), *[a for o in overrides for a in ("--set", o)]])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "SpaceMouse" in captured.out and "success: the task's own check" in captured.out
    assert last_json(captured.out)["saved"] == 1
    [ep] = load_demos(out, *demo_spaces(overrides))
    assert len(ep) == 6 and ep[-1].truncated and not ep[-1].success  # the time limit ended it; kept as failed
    intervened = np.array([s.intervened for s in ep])
    actions = np.stack([s.action for s in ep])
    assert intervened.sum() >= 5  # the report is decoded before the first step or, at worst, the second
    # Operator right is robot +y with the default axis_map (operator facing the robot).
    assert (actions[intervened, 1] > 0.5).all() and np.abs(actions[intervened][:, [0, 2]]).max() < 0.05
    moved = ep[-1].next_obs["state"][:3] - ep[0].obs["state"][:3]
    assert moved[1] > 0.03 and abs(moved[0]) < 0.01 and abs(moved[2]) < 0.01, moved


def test_a_config_naming_spacemouse_and_keyboard_keeps_both(tmp_path, monkeypatch, capsys):
    hid = FakeHid([COMPACT])
    hid.reports.put(bytes.fromhex("01 00 00 00 00 2c 01"))  # puck pushed down: robot -z
    monkeypatch.setitem(record_demos.DEVICE_CONTEXT, "hid_module", hid)
    monkeypatch.setitem(record_demos.DEVICE_CONTEXT, "listener_factory", lambda **kw: StepListener(
        lambda n: [("press", "enter"), ("release", "enter")] if n == 4 else [], **kw))
    out = tmp_path / "demos"
    overrides = ["env.max_episode_steps=20", "env.relative_pose=false", "intervention.device=spacemouse+keyboard"]
    code = main(["record-demos", "--config", PICK, "--source", "spacemouse", "--episodes", "1", "--out", str(out),
                 *[a for o in overrides for a in ("--set", o)]])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert read_manifest(out)["source"] == "spacemouse+keyboard"
    [ep] = load_demos(out, *demo_spaces(overrides))
    assert len(ep) == 4 and ep[-1].success and ep[-1].terminated  # the keyboard's success key
    assert ep[-1].next_obs["state"][2] < ep[0].obs["state"][2] - 0.02  # the SpaceMouse moved it down


def existing_demos(tmp_path):
    out = tmp_path / "demos"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"format": "robot_rl-demos", "version": 1}))
    (out / "episode_000000.npz").write_bytes(b"an earlier demo")
    return out


def test_no_display_is_one_line_and_nonzero_and_earlier_demos_stay(tmp_path, monkeypatch, capsys):
    for var in ("DISPLAY", "PYNPUT_BACKEND", "PYNPUT_BACKEND_KEYBOARD"):
        monkeypatch.delenv(var, raising=False)
    out = existing_demos(tmp_path)
    code = main(["record-demos", "--config", PICK, "--source", "keyboard", "--force", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert err.startswith("robot-rl: keyboard input needs an X display and DISPLAY is not set") and "\n" not in err
    assert (out / "episode_000000.npz").read_bytes() == b"an earlier demo"  # --force never got to delete it


def test_missing_spacemouse_is_one_line_and_nonzero(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(record_demos.DEVICE_CONTEXT, "hid_module", FakeHid([]))
    out = existing_demos(tmp_path)
    code = main(["record-demos", "--config", PICK, "--source", "spacemouse", "--append", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in err
    assert err.startswith("robot-rl: no SpaceMouse found: hid.enumerate() saw no HID devices")
    assert (out / "episode_000000.npz").read_bytes() == b"an earlier demo"


def test_unknown_device_is_a_config_error(tmp_path, capsys):
    code = main(["record-demos", "--config", PICK, "--source", "keyboard", "--out", str(tmp_path / "d"),
                 "--set", "intervention.device=joystick"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in err and "unknown input device 'joystick'" in err
    assert not (tmp_path / "d").exists()


def test_a_robot_config_is_sent_to_the_session_graph(tmp_path, capsys):
    robot = "configs/franka_peg_insert.yaml"  # intervention.device: spacemouse+keyboard
    code = main(["record-demos", "--config", robot, "--source", "spacemouse", "--out", str(tmp_path / "d")])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in err
    assert f"robot-rl launch {robot} --set ros.policy=human --set ros.demos_dir={tmp_path / 'd'} (" in err
    # A config without the device gets told to name it.
    code = main(["record-demos", "--config", PICK, "--source", "keyboard", "--out", str(tmp_path / "d"),
                 "--set", "robot.backend=topics", "--set", "env.obs_mode=pixels"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "--set ros.demos_dir=" in err and "--set intervention.device=keyboard" in err
    assert not (tmp_path / "d").exists()


def test_scripted_recording_writes_plain_status_lines_to_a_log_file(tmp_path):
    """Off a terminal (stderr is a file) progress is status lines, never carriage-return redraws."""
    log = tmp_path / "record.log"
    with log.open("w") as err:
        done = subprocess.run([sys.executable, "-m", "robot_rl.cli", "record-demos", "--config", PICK, "--episodes",
                               "2", "--out", str(tmp_path / "demos"), "--set", "learning.log_every_s=0.1"],
                              stdout=subprocess.PIPE, stderr=err, text=True, timeout=300)
    text = log.read_text()
    assert done.returncode == 0, text
    assert "\r" not in text and last_json(done.stdout)["saved"] == 2
    status = [line for line in text.splitlines() if line.startswith("record-demos PickCube scripted: ")]
    assert status[0] == "record-demos PickCube scripted: 0/2 episodes, attempts 0", text
    line = r"record-demos PickCube scripted: (\d)/2 episodes, attempts (\d+), last (success|failed), steps \d+"
    figures = [re.fullmatch(line, s) for s in status[1:]]
    assert figures and all(figures), status  # lines every 0.1 s between episodes, the last at the end
    saved = [int(m.group(1)) for m in figures]
    attempts = [int(m.group(2)) for m in figures]
    assert saved == sorted(saved) and attempts == sorted(attempts) and saved[-1] == 2, status
    assert attempts[-1] >= 2 and figures[-1].group(3) == "success", status  # the last saved one succeeded
