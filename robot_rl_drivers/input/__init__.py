"""Human input devices: SpaceMouse (hidapi), keyboard (pynput), gamepad (Linux joystick API), the factory.

``make_input_device(cfg.intervention)`` returns a :class:`robot_rl.interfaces.InputDevice`;
hardware libraries are imported only when their device is built. A control loop wraps
the device in :class:`robot_rl.envs.inputs.FailSafeInput`: an unplugged device then ends
the intervention with one warning instead of stopping the loop.
"""

from .commands import AxisMap, CommandBuilder, apply_deadband
from .factory import INPUT_DEVICES, make_input_device, register_input_device
from .hid_reports import ReportDecoder

__all__ = [
    "INPUT_DEVICES", "AxisMap", "CommandBuilder", "ReportDecoder", "apply_deadband", "make_input_device",
    "register_input_device",
]
