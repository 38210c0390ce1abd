"""``robot-rl record-rewards`` on a robot config: one line naming the actor-node command, which works."""

import shlex

from robot_rl.cli import main
from robot_rl.tasks import load_config

ROBOT = "configs/franka_peg_insert.yaml"  # intervention.device: spacemouse+keyboard
PICK = "configs/pick_cube.yaml"


def _command(err: str) -> list[str]:
    """The ``robot-rl launch ...`` command inside the error line, as arguments after ``launch``."""
    start = err.index("robot-rl launch ") + len("robot-rl launch ")
    return shlex.split(err[start:err.index(" (", start)])


def test_a_robot_config_is_sent_to_the_session_graph(tmp_path, capsys):
    out = tmp_path / "frames"
    code = main(["record-rewards", "--config", ROBOT, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in err
    assert err.startswith("robot-rl: robot.backend is 'franka': record-rewards drives the sim only")
    assert f"robot-rl launch {ROBOT} --set ros.policy=human --set ros.reward_frames_dir={out} (" in err
    assert not out.exists()

    # The printed command is one `robot-rl launch` accepts: its config loads and its graph builds.
    args = _command(err)
    code = main(["launch", *args, "--dry-run", "--run-dir", str(tmp_path / "run")])
    dry = capsys.readouterr()
    assert code == 0, dry.err
    assert "actor_node" in dry.out and "image: camera/front/color/image_raw" in dry.out  # relative: /camera/...
    overrides = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    cfg = load_config(ROBOT, overrides)
    assert cfg.ros.policy == "human" and cfg.ros.reward_frames_dir == str(out)
    assert not out.exists()  # a dry run records nothing


def test_a_config_without_the_persons_device_is_told_to_name_it(tmp_path, capsys):
    code = main(["record-rewards", "--config", PICK, "--out", str(tmp_path / "f"), "--set", "robot.backend=topics",
                 "--set", "env.obs_mode=pixels"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in err
    assert "--set ros.reward_frames_dir=" in err and "--set intervention.device=keyboard" in err
    told = [a for a in _command(err)[1:] if a != "--set"]
    cfg = load_config(PICK, ["robot.backend=topics", "env.obs_mode=pixels", *told])
    assert cfg.intervention.device == "keyboard" and cfg.ros.policy == "human"
