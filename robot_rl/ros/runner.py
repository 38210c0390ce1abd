"""``run_node``: the ``main()`` of every robot_rl node, on either backend.

It does what a ros2/demos ``main`` does (init, construct, spin, shut down on Ctrl-C or
SIGTERM) and applies robot_rl's error rule: a configuration mistake (a missing required
parameter, a parameter of the wrong type, an unknown backend, a bad ``--ros-args``) is
printed as one line, ``robot-rl: <what and where>``, and the exit status is non-zero.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from robot_rl.errors import RobotRLError


def run_node(factory: Callable[[], Any], args: list[str] | None = None) -> int:
    """Create the node with ``factory()`` after ``init(args)``, spin it, and return an exit status."""
    from robot_rl.ros.backend import backend

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
