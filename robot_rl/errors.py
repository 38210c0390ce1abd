"""Errors that reach a person as one line.

Every failure a user can cause or fix (a bad config, a missing camera, an unplugged
SpaceMouse, a renderer that cannot start) is raised as a :class:`RobotRLError`. The CLI
and the node entry points catch it, print ``robot-rl: <message>`` on one line and exit
non-zero, instead of showing a traceback. The message must say *what* went wrong and
*where* (file and key, device serial, topic, ...).
"""

from __future__ import annotations


def one_line(err: BaseException) -> str:
    """An exception as ``Type: message`` on one line, for errors that quote a library's."""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def install_extra(extra: str) -> str:
    """How to install one of setup.py's extras (``real``, ``ur``, ``wandb``, ...) into a checkout's
    virtualenv: the one form every message and page gives. The setup script installs it at the
    tested versions (scripts/constraints.txt) and keeps what is already installed."""
    return f"scripts/setup.sh {extra}, from the checkout"


class RobotRLError(Exception):
    """A user-facing error; ``str(err)`` is the one line shown to the user."""

    exit_code: int = 2


class ConfigError(RobotRLError):
    """A config file is missing, malformed, or holds an unknown key or bad value."""


class DeviceError(RobotRLError):
    """A hardware device is missing, unreachable, or refused access."""


class RenderError(RobotRLError):
    """The offscreen renderer could not start."""


class RobotFault(DeviceError):
    """The arm stopped itself (a reflex, a safety or limit error, a lost connection).

    ``state`` is the last state measured before the fault (or None). The contract
    (robot_rl_drivers.robots.faults): the episode ends as failed with its data kept,
    ``robot.recover()`` is tried once, and a person is asked when that fails too.
    """

    recoverable = True

    def __init__(self, message: str, state: object | None = None) -> None:
        super().__init__(message)
        self.state = state
