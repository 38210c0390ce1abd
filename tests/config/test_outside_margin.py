"""``robot.workspace.outside_margin_m`` and ``outside_margin_rad``: how far an external force
may push the TCP out of the box, or turn it past the box's orientation bounds, before the law
faults (robot_rl.control.guard). Bad values are refused at load in one line naming the key; a
good one reaches the box every law is built with."""

from __future__ import annotations

import pytest

from robot_rl.control.safety import SafetyBox
from robot_rl.errors import ConfigError
from robot_rl.tasks import load_config

KEY = "robot.workspace.outside_margin_m"
CONFIG = "configs/pick_cube.yaml"


@pytest.mark.parametrize("key,box_field,default,other", [
    (KEY, "outside_margin", 0.05, 0.12),  # 5 cm
    ("robot.workspace.outside_margin_rad", "outside_margin_rad", 0.35, 0.8),
])
def test_the_defaults_reach_the_box_and_so_does_a_value_set(key, box_field, default, other):
    cfg = load_config(CONFIG)
    assert getattr(cfg.robot.workspace, key.rsplit(".", 1)[1]) == default
    assert getattr(SafetyBox.from_config(cfg.robot), box_field) == default
    cfg = load_config(CONFIG, [f"{key}={other}"])
    assert getattr(SafetyBox.from_config(cfg.robot), box_field) == other


@pytest.mark.parametrize("value,fragment", [
    (".nan", "must be a finite number"),
    (".inf", "must be a finite number"),
    ("-.inf", "must be a finite number"),
    ("-0.05", "out of range"),
    ("0", "out of range"),
    ("0.001", "out of range"),  # under 5 mm a loaded arm's tracking error would fault
    ("5.0", "out of range"),
    ("1.0e+300", "out of range"),
    ("1e300", "number"),  # YAML 1.1 reads it as a string: refused, not coerced
    ("'0.05'", "number"),
    ("abc", "number"),
    ("[0.05]", "number"),
    ("true", "number"),
])
def test_bad_values_are_refused_in_one_line_naming_the_key(value, fragment):
    with pytest.raises(ConfigError) as err:
        load_config(CONFIG, [f"{KEY}={value}"])
    text = str(err.value)
    assert "\n" not in text and KEY in text and fragment in text, text


def test_a_bad_value_in_a_file_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "margin.yaml"
    path.write_text("base: pick_cube\nrobot:\n  workspace:\n    outside_margin_m: .nan\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert "\n" not in text and str(path) in text and KEY in text, text


ROT_KEY = "robot.workspace.outside_margin_rad"


@pytest.mark.parametrize("value,fragment", [
    (".nan", "must be a finite number"), (".inf", "must be a finite number"), ("-0.35", "out of range"),
    ("0", "out of range"), ("0.01", "out of range"), ("3.2", "out of range"), ("1.0e+300", "out of range"),
    ("abc", "number"), ("[0.35]", "number"), ("true", "number"),
])
def test_bad_rotation_margins_are_refused_in_one_line_naming_the_key(value, fragment):
    with pytest.raises(ConfigError) as err:
        load_config(CONFIG, [f"{ROT_KEY}={value}"])
    text = str(err.value)
    assert "\n" not in text and ROT_KEY in text and fragment in text, text
