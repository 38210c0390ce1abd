"""PegInsert: insert a held square peg into a hole with 2 mm clearance (``configs/peg_insert.yaml``).

Everything about the task is in this folder (see :mod:`robot_rl.tasks.spec` for the
layout); this file only describes it to the registry and imports nothing heavy.
"""

from robot_rl.tasks.spec import TaskSpec

SPEC = TaskSpec(
    name="PegInsert",
    folder="peg_insert",
    summary="insert a held 20 mm square peg into a hole with 2 mm clearance; success: peg tip 15 mm "
            "below the board's top",
    start_gripper=0.0,  # the peg is held in the closed fingers from the start
    reset_free_demos=20,
)
