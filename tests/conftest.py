"""Shared test setup: headless rendering, no test may reach beyond loopback, and helpers.

``tests/support`` holds what several test folders share (the point-mass env, the
node-graph harness, the fake pylibfranka); it goes on ``sys.path`` here, once, so the
tests import those helpers by name wherever they sit in the tree.
"""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
# DDS discovery stays on the loopback interface (robot_rl.ros reads this too).
os.environ.setdefault("ROBOT_RL_DDS_LOCALHOST", "1")

SUPPORT = Path(__file__).resolve().parent / "support"
sys.path.insert(0, str(SUPPORT))

from point_reach import PointExpert, PointReach, make_point_env  # noqa: E402


@pytest.fixture
def one_torch_thread():
    """Learner tests use one thread: small ops on a shared 2-core machine are slower with two."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def point_env_cls():
    return PointReach


@pytest.fixture
def point_env_fn():
    return make_point_env


@pytest.fixture
def point_expert_cls():
    return PointExpert
