"""Errors that reach a person as one line.

Every failure a user can cause or fix (a bad config, a missing camera, an unplugged
SpaceMouse, a renderer that cannot start) is raised as a :class:`RobotRLError`. The CLI
and the node entry points catch it, print ``robot-rl: <message>`` on one line and exit
non-zero, instead of showing a traceback. The message must say *what* went wrong and
*where* (file and key, device serial, topic, ...).
"""

from __future__ import annotations


class RobotRLError(Exception):
    """A user-facing error; ``str(err)`` is the one line shown to the user."""

    exit_code: int = 2


class ConfigError(RobotRLError):
    """A config file is missing, malformed, or holds an unknown key or bad value."""


class DeviceError(RobotRLError):
    """A hardware device is missing, unreachable, or refused access."""


class RenderError(RobotRLError):
    """The offscreen renderer could not start."""
