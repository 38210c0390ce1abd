"""Choosing between the rclpy backend and the DDS backend, once per process.

``ROBOT_RL_ROS_BACKEND``:

* unset, empty or ``auto``: rclpy when ``import rclpy`` works (a sourced ROS 2), else DDS;
* ``rclpy``: rclpy, and an error saying so when it cannot be imported;
* ``dds``: the DDS backend even when rclpy is available (e.g. to test it on a ROS machine);
* anything else: one clear :class:`robot_rl.ros.errors.BackendError`.

A backend is a module exposing the public names of :mod:`robot_rl.ros` (``Node``,
``init``, ``spin``, QoS and parameter types, ...) and ``message_class(name)``.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from robot_rl.ros.errors import BackendError

ENV_VAR = "ROBOT_RL_ROS_BACKEND"
BACKENDS = {"rclpy": "robot_rl.ros.rclpy_backend", "dds": "robot_rl.ros.dds.api"}

_selected: ModuleType | None = None


def _rclpy_importable() -> tuple[bool, str]:
    try:
        importlib.import_module("rclpy")
    except Exception as err:  # ImportError, or a half-sourced ROS install failing inside rclpy
        return False, f"{type(err).__name__}: {err}"
    return True, ""


def select_backend_name(env: dict[str, str] | None = None) -> str:
    """The backend the environment asks for: ``"rclpy"`` or ``"dds"`` (see module docstring)."""
    env = os.environ if env is None else env
    wanted = env.get(ENV_VAR, "").strip().lower()
    if wanted in ("", "auto"):
        return "rclpy" if _rclpy_importable()[0] else "dds"
    if wanted not in BACKENDS:
        raise BackendError(f"{ENV_VAR}={env.get(ENV_VAR)!r} is not a backend; use 'rclpy', 'dds' or 'auto'")
    if wanted == "rclpy":
        ok, why = _rclpy_importable()
        if not ok:
            raise BackendError(f"{ENV_VAR}=rclpy but rclpy cannot be imported ({why}); source a ROS 2 "
                               f"setup.bash or set {ENV_VAR}=dds")
    return wanted


def backend() -> ModuleType:
    """The backend module of this process, chosen on first use."""
    global _selected
    if _selected is None:
        _selected = importlib.import_module(BACKENDS[select_backend_name()])
    return _selected


def backend_name() -> str:
    return backend().NAME
