"""What a real arm reports when it stops itself, and what its caller does about it.

Contract between a hardware :class:`~robot_rl.interfaces.Robot` backend and the env /
actor that drives it:

* When the arm stops on its own (a reflex after a collision, a safety or limit error,
  a lost connection), the backend holds the newest state it measured and, from then
  on, ``state()`` and ``command()`` raise :class:`RobotFault` until ``recover()``
  succeeds. ``err.state`` is the last state measured before the fault (or None);
  ``hold()`` and ``close()`` never raise it.
* The caller ends the episode as failed (not a success, no bootstrap from a state the
  policy did not cause), keeps every transition recorded so far, and calls
  ``robot.recover()`` once. ``recover()`` is one command: the arm's automatic error
  recovery, then a fresh controller that starts from the pose it measures (no jump
  back to the last target).
* If ``recover()`` raises :class:`RobotFault` again, a person must look (user stop
  pressed, arm in a joint limit, cable out): the caller asks the human, who fixes it
  and confirms, and the caller calls ``recover()`` again.

``RobotFault`` is a :class:`~robot_rl.errors.DeviceError`, so a CLI prints it as one
line; code that cannot import this module tells it apart by ``err.recoverable``.
"""

from __future__ import annotations

from robot_rl.errors import RobotFault

__all__ = ["RobotFault"]
