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


def test_the_default_is_5_cm_and_reaches_the_box():
    cfg = load_config(CONFIG)
    assert cfg.robot.workspace.outside_margin_m == 0.05
    assert SafetyBox.from_config(cfg.robot).outside_margin == 0.05
    cfg = load_config(CONFIG, [f"{KEY}=0.12"])
    assert SafetyBox.from_config(cfg.robot).outside_margin == 0.12


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


def test_the_rotation_margin_defaults_to_0_35_rad_and_reaches_the_box():
    cfg = load_config(CONFIG)
    assert cfg.robot.workspace.outside_margin_rad == 0.35
    assert SafetyBox.from_config(cfg.robot).outside_margin_rad == 0.35
    cfg = load_config(CONFIG, [f"{ROT_KEY}=0.8"])
    assert SafetyBox.from_config(cfg.robot).outside_margin_rad == 0.8


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
