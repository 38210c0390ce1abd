"""robot_rl: learn precise manipulation skills on a real arm, with sim mode on MuJoCo.

Importing robot_rl is cheap and needs no ROS, DDS, gRPC, GPU, MuJoCo, torch or hardware
library; heavier parts are imported where they are used. It registers the gymnasium ids
``robot_rl/<Task>-v0`` of every task with a scene (gymnasium's convention: importing the
package registers its envs), with string entry points, so that
``gymnasium.make("robot_rl/PickCube-v0")`` works after ``import robot_rl`` and builds
the sim only then. Where gymnasium is missing (the ``ros2`` command's Python, which runs
launch files and has only numpy and PyYAML), it registers nothing.
"""

from robot_rl.version import __version__

__all__ = ["__version__", "register_envs"]


def register_envs() -> None:
    """Register ``robot_rl/<Task>-v0`` for every task in the registry that has a scene (a
    real-only task has no sim to make); ``gymnasium.make`` imports robot_rl.assemble."""
    import gymnasium as gym

    from robot_rl.tasks import sim_tasks

    for spec in sim_tasks():
        if spec.env_id not in gym.registry:
            gym.register(spec.env_id, entry_point="robot_rl.assemble:make_registered_env", kwargs={"task": spec.name})



try:
    import gymnasium  # noqa: F401
except ImportError:  # the `ros2` command's Python running a launch file: only numpy and PyYAML, no envs to make
    pass
else:
    register_envs()
