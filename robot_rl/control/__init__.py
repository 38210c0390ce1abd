"""Cartesian impedance control, the safety box and rotation helpers (no ROS imports)."""

from robot_rl.control.impedance import (
    ArmState,
    CartesianImpedanceController,
    ImpedanceGains,
    LawOutput,
    impedance_torque,
)
from robot_rl.control.safety import SafetyBox

__all__ = ["ArmState", "CartesianImpedanceController", "ImpedanceGains", "LawOutput", "SafetyBox",
           "impedance_torque"]
