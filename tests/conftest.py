"""Shared test setup: headless rendering, and no test may reach beyond loopback."""

import os

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
# DDS discovery stays on the loopback interface (robot_rl.ros reads this too).
os.environ.setdefault("ROBOT_RL_DDS_LOCALHOST", "1")
