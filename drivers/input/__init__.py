"""Human input devices: SpaceMouse (hidapi), keyboard (pynput), and the factory.

``make_input_device(cfg.intervention)`` returns a :class:`robot_rl.interfaces.InputDevice`;
hardware libraries are imported only when their device is built. Wrap the device in
:class:`FailSafeInput` in a control loop: an unplugged device then ends the intervention
with one warning instead of stopping the loop.
"""

from .commands import AxisMap, CommandBuilder, apply_deadband
from .factory import INPUT_DEVICES, MergedInput, NullInput, make_input_device, register_input_device
from robot_rl.envs.intervention import FailSafeInput  # core: the actor wraps every device in it
from .hid_reports import ReportDecoder

__all__ = [
    "INPUT_DEVICES", "AxisMap", "CommandBuilder", "FailSafeInput", "MergedInput", "NullInput",
    "ReportDecoder", "apply_deadband", "make_input_device", "register_input_device",
]
