"""LeRobot's own dataset code, run in LeRobot's own virtualenv (``ROBOT_RL_LEROBOT_PYTHON``).

The data tests compare robot_rl's v3 reader and writer with LeRobot's (``lerobot_reference.py``,
run by that python); without such a virtualenv they skip with one line.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent / "lerobot_reference.py"


def lerobot_python() -> str:
    """The python of a virtualenv with LeRobot's dataset package, or skip the test."""
    python = os.environ.get("ROBOT_RL_LEROBOT_PYTHON", "")
    if not python or not Path(python).is_file():
        pytest.skip("LeRobot's reference code is not installed beside robot_rl: set ROBOT_RL_LEROBOT_PYTHON to a "
                    "virtualenv python with lerobot-dataset")
    return python


def reference(python: str, *argv: str) -> dict:
    """Run ``lerobot_reference.py`` with LeRobot's python; its last stdout line, as JSON."""
    out = subprocess.run([python, str(REFERENCE), *argv], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
