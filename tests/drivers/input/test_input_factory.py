"""make_input_device: names to devices, the registry hook, merging, and the config checks."""

from __future__ import annotations

import numpy as np
import pytest

import robot_rl_drivers.input.factory as factory
from robot_rl.config.input import InterventionConfig
from robot_rl.envs.inputs import MergedInput, NullInput
from robot_rl.errors import ConfigError, DeviceError
from robot_rl.interfaces import InputCommand, InputDevice
from robot_rl.tasks import config_from_dict
from robot_rl_drivers.input import make_input_device, register_input_device


class Scripted(InputDevice):
    """A device that plays back commands, and remembers being closed."""

    def __init__(self, *commands: InputCommand, fail_after: int | None = None) -> None:
        self.commands = list(commands)
        self.closed = False
        self.fail_after = fail_after
        self.reads = 0

    def read(self) -> InputCommand:
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise DeviceError("scripted device gone")
        return self.commands.pop(0) if self.commands else InputCommand()

    def close(self) -> None:
        self.closed = True


def test_none_is_a_neutral_device():
    device = make_input_device(InterventionConfig(device="none"))
    assert isinstance(device, NullInput)
    cmd = device.read()
    assert not cmd.intervene and not np.any(cmd.twist) and cmd.close_gripper is None
    device.close()


def test_unknown_name_is_one_clear_error():
    cfg = InterventionConfig()
    cfg.device = "joystick"  # bypassing the config check, as a caller building configs in code might
    with pytest.raises(DeviceError) as err:
        make_input_device(cfg)
    msg = str(err.value)
    assert "unknown input device 'joystick'" in msg and "keyboard, none, spacemouse" in msg
    assert "\n" not in msg


def test_simulated_needs_its_provider_to_register():
    with pytest.raises(DeviceError, match="unknown input device 'simulated'"):
        make_input_device(InterventionConfig(device="simulated"), registry={"none": lambda cfg, **_: NullInput()})


def test_registry_hook_passes_config_and_context(monkeypatch):
    monkeypatch.setattr(factory, "INPUT_DEVICES", dict(factory.INPUT_DEVICES))
    seen = {}

    def build(cfg, *, env=None, **_):
        seen.update(cfg=cfg, env=env)
        return Scripted(InputCommand(intervene=True))

    register_input_device("simulated", build)
    cfg = InterventionConfig(device="simulated")
    device = make_input_device(cfg, env="the-env", hid_module=None)
    assert seen == {"cfg": cfg, "env": "the-env"}
    assert device.read().intervene
    with pytest.raises(ValueError):
        register_input_device("a+b", build)


def test_merged_devices_combine_commands():
    a = Scripted(InputCommand(twist=np.array([0.8, 0, 0, 0, 0, 0.5]), buttons=(1, 0), close_gripper=True))
    b = Scripted(InputCommand(twist=np.array([0.5, 0.2, 0, 0, 0, 0]), intervene=True, success_pressed=True,
                              close_gripper=False))
    merged = MergedInput([a, b])
    cmd = merged.read()
    np.testing.assert_allclose(cmd.twist, [1.0, 0.2, 0, 0, 0, 0.5])
    assert cmd.intervene and cmd.success_pressed and not cmd.stop_pressed
    assert cmd.close_gripper is True  # the first device's request wins
    assert cmd.buttons == (1, 0)
    merged.close()
    assert a.closed and b.closed


def test_merged_names_build_in_order_and_errors_propagate():
    built = []

    def make(name, **kw):
        def build(cfg, **_):
            built.append(name)
            return Scripted(**kw)
        return build

    registry = {"spacemouse": make("spacemouse", fail_after=1), "keyboard": make("keyboard")}
    device = make_input_device(InterventionConfig(device="spacemouse+keyboard"), registry=registry)
    assert built == ["spacemouse", "keyboard"] and isinstance(device, MergedInput)
    device.read()
    with pytest.raises(DeviceError, match="scripted device gone"):
        device.read()


def test_a_failing_second_device_closes_the_first():
    first = Scripted()

    def broken(cfg, **_):
        raise DeviceError("no display")

    registry = {"spacemouse": lambda cfg, **_: first, "keyboard": broken}
    with pytest.raises(DeviceError, match="no display"):
        make_input_device(InterventionConfig(device="spacemouse+keyboard"), registry=registry)
    assert first.closed


@pytest.mark.parametrize("section, needle", [
    ({"device": "spacemose"}, "intervention: device: unknown input device 'spacemose'"),
    ({"device": "none+keyboard"}, "'none' cannot be combined"),
    ({"device": "keyboard+keyboard"}, "names a device twice"),
    ({"axis_map": ["x", "y"]}, "'intervention.axis_map' must have 3 items"),
    ({"axis_map": ["y", "x", "z"]}, "mirrors space"),
    ({"axis_map": ["x", "x", "z"]}, "exactly once"),
    ({"intervene_mode": "latch"}, "'intervention.intervene_mode' must be one of"),
    ({"spacemouse": {"deadband": 1.5}}, "'intervention.spacemouse.deadband' = 1.5 is out of range"),
    ({"spacemouse": {"buttons": {"grip": 0}}}, "unknown action 'grip'"),
    ({"spacemouse": {"backend": "usb"}}, "'intervention.spacemouse.backend' must be one of"),
    ({"keyboard": {"keys": {"forward": "a"}}}, "key 'a' is bound to both 'forward' and 'left'"),
    ({"keyboard": {"keys": {"forward": "ctrlx"}}}, "forward: unknown key 'ctrlx'"),
    ({"keyboard": {"keyz": {}}}, "unknown key 'intervention.keyboard.keyz' (did you mean 'keys'?)"),
])
def test_config_errors_name_file_and_key(section, needle):
    with pytest.raises(ConfigError) as err:
        config_from_dict({"intervention": section}, file="hil.yaml")
    msg = str(err.value)
    assert msg.startswith("hil.yaml: ") and needle in msg and "\n" not in msg


def test_config_defaults_and_hex_ids_from_yaml(tmp_path):
    from robot_rl.tasks import load_config

    path = tmp_path / "hil.yaml"
    path.write_text("intervention:\n  device: spacemouse+keyboard\n  spacemouse:\n"
                    "    vendor_ids: [0x256f]\n    product_id: 0xc635\n")
    cfg = load_config(path).intervention
    assert cfg.spacemouse.vendor_ids == [0x256F] and cfg.spacemouse.product_id == 0xC635
    assert cfg.axis_map == ("-y", "x", "z") and cfg.intervene_mode == "toggle"
    assert InterventionConfig().device == "none"  # no human unless a config asks for one
