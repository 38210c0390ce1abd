"""Errors raised by the node layer, each a one-line :class:`robot_rl.errors.RobotRLError`.

* :class:`MessageError`: a received message is malformed or not what the node expects
  (bad CDR, wrong image encoding, a size that does not add up, non-finite numbers). The
  node layer catches it around every subscription callback: the message is dropped with
  a warning, counted in ``node.status()``, and the node keeps running.
* :class:`BackendError`: an unknown backend name, or a backend that cannot start.
* :class:`ParameterError`: a missing required parameter, a value of the wrong type, or
  a malformed ``--ros-args`` / params file.
"""

from __future__ import annotations

from robot_rl.errors import ConfigError, RobotRLError


class MessageError(RobotRLError):
    """A message that a subscriber cannot use; it is dropped, never fatal."""


class BackendError(ConfigError):
    """The requested ROS backend does not exist or cannot be used."""


class ParameterError(ConfigError):
    """A node parameter is missing, has the wrong type, or its source is malformed."""
