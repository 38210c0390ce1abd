"""The reset: section: defaults, the mode rule, and reset poses outside the box refused at load."""

from __future__ import annotations

import pytest

from robot_rl.config.reset import perturbation, resolve_mode
from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config

PICK = "configs/pick_cube.yaml"
PEG = "configs/peg_insert.yaml"


def test_perturbation_defaults_to_the_task_start_range_and_can_be_set():
    cfg = load_config(PEG)
    pos, yaw = perturbation(cfg)
    assert pos.tolist() == list(cfg.task.params.start_pos_range)
    assert yaw == cfg.task.params.start_yaw_range
    cfg = load_config(PEG, ["reset.perturb_pos=[0.01, 0.02, 0.0]", "reset.perturb_yaw=0.1"])
    pos, yaw = perturbation(cfg)
    assert pos.tolist() == [0.01, 0.02, 0.0] and yaw == 0.1


def test_auto_mode_is_the_sim_shortcut_in_sim_and_scripted_on_hardware():
    assert resolve_mode(load_config(PICK)) == "teleport"
    assert resolve_mode(load_config(PICK, ["reset.mode=scripted"])) == "scripted"
    assert resolve_mode(load_config(PICK, ["robot.backend=topics", "env.obs_mode=pixels"])) == "scripted"


def test_teleport_on_hardware_is_refused():
    with pytest.raises(ConfigError, match=r"pick_cube.yaml: .*reset.mode 'teleport' is the sim shortcut"):
        load_config(PICK, ["robot.backend=topics", "env.obs_mode=pixels", "reset.mode=teleport"])


@pytest.mark.parametrize("overrides,match", [
    (["robot.reset_pos=[0.5, 0.0, 0.5]"], r"reset_pos \[0.5, 0.0, 0.5\] is outside the workspace box"),
    (["reset.perturb_pos=[0.2, 0.0, 0.0]"], r"reset poses robot.reset_pos .* leave the workspace box"),
    # reset z 0.2 + 0.11 leaves the box top at 0.30
    (["reset.perturb_pos=[0.0, 0.0, 0.11]"], r"leave the workspace box"),
    (["reset.perturb_yaw=0.7"], r"reset yaw \+-0.7 rad leaves the workspace box's rotation limits"),
    # the task's own start range is a reset perturbation too
    (["task.params.start_pos_range=[0.1, 0.0, 0.0]", "robot.workspace.pos_low=[0.45, -0.15, 0.01]"],
     r"leave the workspace box"),
])
def test_a_reset_pose_outside_the_box_is_refused_at_load(overrides, match):
    with pytest.raises(ConfigError, match=match) as err:
        load_config(PICK, overrides)
    assert str(err.value).startswith(PICK)
    assert "\n" not in str(err.value)


def test_bad_reset_values_name_the_key():
    with pytest.raises(ConfigError, match=r"'reset.speed' = 5.0 is out of range"):
        load_config(PICK, ["reset.speed=5.0"])
    with pytest.raises(ConfigError, match=r"^--set reset.forward_backward.recovry=stop: unknown key "
                                          r"'reset.forward_backward.recovry' \(did you mean "
                                          r"'reset.forward_backward.recovery'\?\)$"):
        load_config(PICK, ["reset.forward_backward.recovry=stop"])
    with pytest.raises(ConfigError, match=r"'reset.mode' must be one of"):
        load_config(PICK, ["reset.mode=magic"])
