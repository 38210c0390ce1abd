"""Errors of the learning plane.

:class:`LearningError` reaches a person as one line (it is a RobotRLError): a refused
token, spaces that differ from the learner's, a learner that cannot bind its port.
:class:`PayloadError` is what the learner raises on a malformed message; the service
turns it into INVALID_ARGUMENT for that one call and goes on serving everyone else.
"""

from __future__ import annotations

from robot_rl.errors import RobotRLError


class LearningError(RobotRLError):
    """The learner or an actor cannot go on (refused, misconfigured, unreachable for good)."""


class SpacesMismatch(LearningError):
    """An actor's observation or action spaces differ from the learner's; names the key."""


class PayloadError(ValueError):
    """A message does not decode to what its dtype, shape and spaces promise, or can never be stored.

    ``cause`` is the short name the learner counts the refusal under.
    """

    def __init__(self, message: str, cause: str = "malformed") -> None:
        super().__init__(message)
        self.cause = cause
