"""ConnectorInsert: push a held connector into its socket on a real cell (``configs/connector_insert.yaml``).

A task that lives only on a real cell: this folder holds its description and its
parameters, nothing else. There is no MuJoCo scene, scripted expert or scripted task
reset; its spaces come from the config, its success from the reward classifier
(``reward.classifier_path``), its resets from the poses in ``task.params`` (see
:mod:`robot_rl.tasks.real`) and its box from ``robot.workspace``.
"""

from robot_rl.tasks.spec import TaskSpec

SPEC = TaskSpec(
    name="ConnectorInsert",
    folder="connector_insert",
    summary="push a connector held in the closed fingers into its socket; success: the reward classifier "
            "sees it seated",
    start_gripper=0.0,  # the connector is held from the start: a reset never opens the fingers
    real_only=True,
)
