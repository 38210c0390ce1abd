"""The robot-rl command: a working rollout, and one-line errors for bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

ROBOT_RL = [sys.executable, "-m", "robot_rl.cli"]


def robot_rl(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*ROBOT_RL, *args], capture_output=True, text=True, timeout=300, env=full_env)


def test_rollout_reports_success_and_writes_an_image_strip(tmp_path):
    out = robot_rl("rollout", "--config", "configs/pick_cube.yaml", "--episodes", "2", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["episodes"] == 2 and result["success_rate"] == 1.0
    assert (tmp_path / "pickcube_strip.png").stat().st_size > 1000
    # off a terminal (a pipe here): plain status lines on stderr, the first as it starts, the last at the end
    assert "\r" not in out.stderr, out.stderr
    status = [line for line in out.stderr.splitlines() if line.startswith("rollout PickCube: ")]
    assert status[0] == "rollout PickCube: 0/2 episodes, success -", out.stderr
    assert status[-1] == "rollout PickCube: 2/2 episodes, success 100%", out.stderr
    assert all(re.fullmatch(r"rollout PickCube: [0-2]/2 episodes, success (-|100%)", s) for s in status), status
    import cv2
    import numpy as np

    strip = cv2.cvtColor(cv2.imread(result["image_strip"]), cv2.COLOR_BGR2RGB)
    tile = 2 * 128  # both cameras of configs/pick_cube.yaml side by side, 128 px each
    # 12 frames of the first episode, reset to last step, wrapped into 3 rows of 4 (not one 3072 px row)
    assert strip.shape == (3 * 128, 4 * tile, 3)
    last, first = strip[-128:, -tile:], strip[:128, :tile]
    assert np.abs(last[-2, 8:-8].mean(axis=0) - (0, 200, 0)).max() < 30  # the expert succeeded: a green border
    assert np.abs(first[-2, 8:-8].mean(axis=0) - (0, 200, 0)).max() > 30  # the first frame is not marked
    assert first[:10].mean() < first[20:].mean() and (first[:10] > 200).any()  # white text on a dark band


@pytest.mark.parametrize("args,env,fragment", [
    (["rollout", "--config", "configs/missing.yaml"], None, "config file not found: configs/missing.yaml"),
    (["rollout", "--config", "configs/pick_cube.yaml", "--set", "env.speed=3"], None,
     "--set env.speed=3: unknown key 'env.speed'"),
    (["rollout", "--config", "configs/pick_cube.yaml", "--set", "task.name=StackBlocks"], None,
     "robot-rl: --set task.name=StackBlocks: 'task.name' must be one of"),  # a --set value is blamed on --set
    (["rollout", "--config", "configs/pick_cube.yaml", "--episodes", "1"], {"MUJOCO_GL": "bogus"},
     "cannot load MuJoCo's renderer backend MUJOCO_GL=bogus"),
    (["rollout", "--config", "configs/pick_cube.yaml", "--episodes", "0"], None,
     "--episodes must be at least 1, got 0"),
    (["rollout", "--config", "configs/pick_cube.yaml", "--episodes", "-3"], None,
     "--episodes must be at least 1, got -3"),
])
def test_bad_input_is_one_line_and_nonzero_exit(args, env, fragment):
    out = robot_rl(*args, env=env)
    assert out.returncode != 0
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("robot-rl: ") and fragment in lines[0]
    assert "Traceback" not in out.stderr
