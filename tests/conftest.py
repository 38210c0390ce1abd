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

#: The longest test files, longest first (each holds a learning run of minutes; measured with
#: ``--durations``: 8, 6, 5.5, 5, 2.3, 2 and 2 minutes on 2 loaded cores). They are collected
#: first so that ``-n auto --dist loadfile --no-loadscope-reorder`` (the README's test command)
#: starts them at once, instead of leaving one worker alone on one of them at the end of the run.
LONGEST_FIRST = (
    "tests/training/remote/test_processes.py",
    "tests/training/test_learning.py",
    "tests/training/test_pixel_learning.py",
    "tests/training/test_hil_end_to_end.py",
    "tests/envs/test_gym_env.py",
    "tests/agents/test_execution.py",
    "tests/bench/test_base_policy.py",
)


def pytest_collection_modifyitems(config, items):
    """:data:`LONGEST_FIRST` first, everything else in its collected order (the sort is stable)."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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
