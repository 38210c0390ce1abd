"""PickCube: lift a randomly placed cube off the table (``configs/pick_cube.yaml``).

Everything about the task is in this folder (see :mod:`robot_rl.tasks.spec` for the
layout); this file only describes it to the registry and imports nothing heavy.
"""

from robot_rl.tasks.spec import TaskSpec

SPEC = TaskSpec(
    name="PickCube",
    folder="pick_cube",
    summary="lift a randomly placed 4 cm cube; success: cube bottom 5 cm above the table",
    start_gripper=1.0,
    # Learns too slowly on its full +-8 cm range for a 30-minute run on a CPU (as with
    # teleport resets): the bench narrows the range to +-3 cm and uses the discrete
    # gripper critic, a low initial temperature and two updates per step.
    reset_free_overrides=("task.params.cube_xy_range=[0.03, 0.03]", "agent.gripper_critic=true",
                          "agent.init_temperature=0.01", "train.utd_ratio=2"),
    reset_free_demos=30,
)
