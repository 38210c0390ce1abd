"""Cartesian impedance and admittance control, the safety box and rotation helpers (no ROS imports)."""

from robot_rl.control.admittance import AdmittanceOutput, CartesianAdmittanceController, TcpState
from robot_rl.control.impedance import (
    ArmState,
    CartesianImpedanceController,
    ImpedanceGains,
    LawOutput,
    impedance_torque,
)
from robot_rl.control.safety import SafetyBox

__all__ = ["AdmittanceOutput", "ArmState", "CartesianAdmittanceController", "CartesianImpedanceController",
           "ImpedanceGains", "LawOutput", "SafetyBox", "TcpState", "impedance_torque"]
