"""Every ``--set`` error is one ``robot-rl: --set <item>: ...`` line with exit status 2, for
malformed values, wrong types, out-of-range and non-finite numbers, unknown choices and
keys inside a mapping value, whichever command takes it; the file is named only for what
it holds itself."""

from __future__ import annotations

import pytest

from robot_rl.cli import main
from robot_rl.config import ConfigSource
from robot_rl.errors import ConfigError
from robot_rl.paths import resolve_config
from robot_rl.tasks import load_config

PICK = str(resolve_config("pick_cube"))

CASES = [
    ("env.active_dims=[x,y", "--set env.active_dims: is not valid YAML (did not find expected ',' or ']')"),
    ("train.batch_size=-3", "--set train.batch_size=-3: 'train.batch_size' = -3 is out of range [1, 65536]"),
    ("env.control_hz=abc", "--set env.control_hz=abc: 'env.control_hz' must be a number, got 'abc'"),
    ("env.control_hz=.nan", "--set env.control_hz=.nan: 'env.control_hz' must be a finite number, got nan"),
    ("env.control_hz=1.0e+400", "--set env.control_hz=1.0e+400: 'env.control_hz' must be a finite number, got inf"),
    ("env.obs_mode=foo", "--set env.obs_mode=foo: 'env.obs_mode' must be one of 'state', 'pixels', 'both', got 'foo'"),
    ("env.relative_pose=maybe", "--set env.relative_pose=maybe: 'env.relative_pose' must be true or false, "
                                "got 'maybe'"),
    ("env.active_dims=[x,q]", "--set env.active_dims=[x,q]: 'env.active_dims[1]' must be one of 'x', 'y', 'z', "
                              "'rx', 'ry', 'rz', 'gripper', got 'q'"),
    ("cameras.front={width: -1}", "--set cameras.front={width: -1}: 'cameras.front.width' = -1 is out of range "
                                  "[8, 4096]"),
    ("env={foo: 1}", "--set env={foo: 1}: unknown key 'env.foo'"),
    ("task.name=Foo", "--set task.name=Foo: 'task.name' must be one of 'PickCube', 'PegInsert', 'PlugInsert', "
                      "'ConnectorInsert', got 'Foo'"),
    ("viz.rerun=on", "--set viz.rerun=on: 'viz.rerun' must be one of 'off', 'spawn', 'connect', 'file', False, "
                     "got True"),
]


def one_line(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("override,message", CASES)
def test_train_names_the_set_item_for_every_value_error(capsys, override, message):
    assert one_line(capsys, "train", "--config", "pick_cube", "--set", override) == f"robot-rl: {message}"


@pytest.mark.parametrize("command", [["rollout", "--config", "pick_cube"], ["learner", "--config", "pick_cube"],
                                     ["actor", "--config", "pick_cube"], ["launch", "pick_cube", "--dry-run"]])
@pytest.mark.parametrize("override,message", [CASES[0], CASES[1], CASES[2]])
def test_other_commands_name_it_too(capsys, command, override, message):
    assert one_line(capsys, *command, "--set", override) == f"robot-rl: {message}"


def test_the_last_item_that_set_a_key_is_named():
    with pytest.raises(ConfigError, match=r"^--set train.batch_size=0: 'train.batch_size' = 0 is out of range"):
        load_config(PICK, ["train.batch_size=7", "env.control_hz=20", "train.batch_size=0"])


def test_a_value_the_file_holds_names_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(resolve_config("pick_cube").read_text().replace("batch_size: 256", "batch_size: -256"))
    with pytest.raises(ConfigError, match=rf"^{bad}: 'train.batch_size' = -256 is out of range"):
        load_config(bad, ["env.control_hz=20"])  # another key given with --set does not take the blame


def test_a_check_across_keys_names_the_file_and_the_items_inside_its_section():
    with pytest.raises(ConfigError) as err:
        load_config(PICK, ["train.batch_size=7", "robot.reset_pos=[0.3,0,0.2]"])
    assert str(err.value) == (f"{PICK} with --set robot.reset_pos=[0.3,0,0.2]: robot: reset_pos [0.3, 0.0, 0.2] "
                              "is outside the workspace box [0.35, -0.15, 0.01]..[0.65, 0.15, 0.3]")
    with pytest.raises(ConfigError) as err:  # a check across sections: every item may have taken part
        load_config(PICK, ["train.batch_size=7", "env.obs_mode=pixels", "env.cameras=[foo]"])
    assert str(err.value) == (f"{PICK} with --set train.batch_size=7 --set env.obs_mode=pixels "
                              "--set env.cameras=[foo]: config: env.cameras names ['foo'], which 'cameras' "
                              "does not define")


def test_an_unreadable_item_is_shown_cut_short():
    item = "train.batch_size=" + "9" * 200
    with pytest.raises(ConfigError) as err:
        load_config(PICK, [item])
    line = str(err.value)
    assert line.startswith("--set 'train.batch_size=9999") and "..." in line and len(line) < 300
    assert "\n" not in line


def test_config_source_is_the_file_name_for_everything_else():
    src = ConfigSource("a.yaml", ["x.y=1", "bad item", 3, "x.z[0]=2"])
    assert src == "a.yaml" and f"{src}" == "a.yaml"
    assert src.of("x.y") == "--set x.y=1" and src.of("x.y.deeper") == "--set x.y=1"
    assert src.of("x.yz") == "a.yaml" and src.of("q") == "a.yaml"
    assert src.around("x") == "a.yaml with --set x.y=1 --set x.z[0]=2" and src.around("w") == "a.yaml"
