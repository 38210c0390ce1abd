"""``run_node``: the ``main()`` of every robot_rl node, on either backend.

It does what a ros2/demos ``main`` does (init, construct, spin, shut down on Ctrl-C or
SIGTERM) and applies robot_rl's error rule: a configuration mistake (a missing required
parameter, a parameter of the wrong type, an unknown backend, a bad ``--ros-args``) is
printed as one line, ``robot-rl: <what and where>``, and the exit status is non-zero.

A node also stops, as on Ctrl-C, when the process that started it dies
(:func:`stop_with_parent`): Jazzy's ``ros2 launch`` has no SIGTERM handler, so a plain
``kill`` of it (or systemd, ``docker stop``) ends the launcher at once and would leave the
controller and actor running on their own.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, Callable

from robot_rl.errors import RobotRLError


def stop_with_parent(sig: int = signal.SIGINT) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent dies (``PR_SET_PDEATHSIG``).

    Returns whether it is armed (Linux only). A parent that died before the call is caught
    by the parent pid having changed (to a reaper's): the signal is then sent at once. The
    kernel fires it when the parent *thread* that started this process ends; launchers
    start nodes from their main thread.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, int(sig), 0, 0, 0) != 0:  # 1: PR_SET_PDEATHSIG
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)
    return True


def run_node(factory: Callable[[], Any], args: list[str] | None = None) -> int:
    """Create the node with ``factory()`` after ``init(args)``, spin it, and return an exit status."""
    from robot_rl.ros.backend import backend

    stop_with_parent()
    node = None
    try:
        ros = backend()
        ros.init(args=args)
        try:
            node = factory()
            ros.spin(node)
        except (KeyboardInterrupt, ros.ExternalShutdownException):
            pass
        finally:
            if node is not None:
                node.destroy_node()
            ros.try_shutdown()
    except RobotRLError as err:
        return _report(err, err.exit_code)
    except Exception as err:
        user_errors = getattr(sys.modules.get("robot_rl.ros.rclpy_backend"), "USER_ERRORS", ())
        if user_errors and isinstance(err, user_errors):
            return _report(err, 2)
        raise
    return 0


def _report(err: BaseException, code: int) -> int:
    print(f"robot-rl: {err}".splitlines()[0], file=sys.stderr)
    return code
