"""PlugInsert: insert a held keyed plug into its slot, turning it to the slot's yaw (``configs/plug_insert.yaml``).

Everything about the task is in this folder (see :mod:`robot_rl.tasks.spec` for the
layout); this file only describes it to the registry and imports nothing heavy.
"""

from robot_rl.tasks.spec import TaskSpec

SPEC = TaskSpec(
    name="PlugInsert",
    folder="plug_insert",
    summary="insert a held 24 x 10 mm keyed plug, turned by up to 17 degrees, into a slot with 2 mm "
            "clearance; success: plug tip 12 mm below the board's top",
    start_gripper=0.0,  # the plug is held in the closed fingers from the start
    reset_free_demos=20,
)
