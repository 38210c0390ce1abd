"""SpaceMouse HID reports, as the devices send them, decode to the right axes and buttons.

Byte strings are written out the way hidapi returns them (report id first). The
"recorded" ones come from a public bug report of a SpaceMouse Compact; the others are
built to the report formats described in robot_rl_drivers.input.hid_reports.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from robot_rl_drivers.input.commands import AxisMap, apply_deadband
from robot_rl_drivers.input.hid_reports import ReportDecoder, button_levels, hid_to_operator


def hexbytes(text: str) -> bytes:
    return bytes.fromhex(text)


def test_three_report_format_recorded_compact():
    dec = ReportDecoder()
    assert dec.feed(hexbytes("01 12 00 00 00 f8 00")) == "axes"  # translation x=18, z=248
    assert dec.feed(hexbytes("02 20 00 00 00 17 00")) == "axes"  # rotation rx=32, rz=23
    np.testing.assert_array_equal(dec.axes, [18, 0, 248, 32, 0, 23])
    dec.feed(hexbytes("01 0d 00 00 00 25 01"))  # a later translation replaces the first
    np.testing.assert_array_equal(dec.axes, [13, 0, 293, 32, 0, 23])


def test_three_report_format_negative_values_are_little_endian_int16():
    dec = ReportDecoder()
    dec.feed(hexbytes("01 af 00 a2 fe ba ff"))  # x=175, y=-350, z=-70
    dec.feed(hexbytes("02 23 00 51 ff 5e 01"))  # rx=35, ry=-175, rz=350
    np.testing.assert_array_equal(dec.axes, [175, -350, -70, 35, -175, 350])
    assert hexbytes("01 af 00 a2 fe ba ff") == struct.pack("<B3h", 1, 175, -350, -70)


def test_single_report_format_carries_all_six_axes():
    dec = ReportDecoder()
    report = hexbytes("01 af 00 a2 fe ba ff 23 00 51 ff 5e 01")  # 13 bytes: wireless / Pro / Enterprise
    assert len(report) == 13
    assert dec.feed(report) == "axes"
    np.testing.assert_array_equal(dec.axes, [175, -350, -70, 35, -175, 350])
    # hidapi hands back lists of ints; the same report that way decodes the same
    dec2 = ReportDecoder()
    dec2.feed(list(report))
    np.testing.assert_array_equal(dec2.axes, dec.axes)


def test_release_report_returns_axes_to_zero():
    dec = ReportDecoder()
    dec.feed(hexbytes("01 af 00 a2 fe ba ff 23 00 51 ff 5e 01"))
    dec.feed(hexbytes("01") + bytes(12))
    np.testing.assert_array_equal(dec.axes, np.zeros(6))


def test_two_button_model_bitmask():
    dec = ReportDecoder()
    assert dec.feed(hexbytes("03 01 00")) == "buttons"  # left
    assert dec.buttons == 0b01
    dec.feed(hexbytes("03 02 00"))  # right only
    assert dec.buttons == 0b10
    dec.feed(hexbytes("03 03 00"))
    assert button_levels(dec.buttons, 2) == (1, 1)
    dec.feed(hexbytes("03 00 00"))
    assert button_levels(dec.buttons, 2) == (0, 0)


def test_pro_model_four_byte_bitmask():
    dec = ReportDecoder()
    dec.feed(hexbytes("03 01 10 00 00"))  # MENU (byte 1 bit 0) and key "1" (byte 2 bit 4)
    assert dec.buttons == (1 << 0) | (1 << 12)
    dec.feed(hexbytes("03 00 00 00 02"))  # CTRL: byte 4 bit 1
    assert dec.buttons == 1 << 25


def test_enterprise_extra_button_report_lists_usages():
    dec = ReportDecoder()
    dec.feed(hexbytes("03 01 00 00 00"))
    assert dec.feed(hexbytes("1c 05 00 1e 00 00 00 00 00 00 00 00 00")) == "buttons"
    assert dec.buttons == (1 << 0) | (1 << 4) | (1 << 29)  # usages 5 and 30 -> buttons 4 and 29
    dec.feed(hexbytes("1c") + bytes(12))
    assert dec.buttons == 1 << 0


@pytest.mark.parametrize("report", ["17 64", "04 01", "01 12 00", "02 01", "03", ""])
def test_other_and_truncated_reports_are_ignored(report):
    dec = ReportDecoder()
    dec.feed(hexbytes("01 af 00 a2 fe ba ff 23 00 51 ff 5e 01"))
    before = dec.axes.copy()
    assert dec.feed(hexbytes(report)) is None
    np.testing.assert_array_equal(dec.axes, before)
    assert dec.buttons == 0


def test_hid_frame_to_operator_frame_flips_y_and_z():
    # HID: y toward the operator, z down. Operator frame: y forward, z up.
    op = hid_to_operator(np.array([175, -350, -70, 35, -175, 350]), full_scale=350.0)
    np.testing.assert_allclose(op, [0.5, 1.0, 0.2, 0.1, 0.5, -1.0])
    # a unit that deflects past the nominal full scale still gives at most 1
    np.testing.assert_allclose(hid_to_operator(np.array([500, 0, 0, 0, 0, -500]), 350.0), [1, 0, 0, 0, 0, 1])


def test_deadband_zeroes_small_values_and_stays_continuous():
    out = apply_deadband(np.array([0.05, -0.1, 0.1001, 0.55, -1.0, 1.5]), 0.1)
    np.testing.assert_allclose(out, [0.0, 0.0, 0.0001 / 0.9, 0.5, -1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(apply_deadband(np.array([0.3, -0.2]), 0.0), [0.3, -0.2])


def test_axis_map_default_operator_facing_robot():
    # default ("-y", "x", "z"): pushing away from the operator moves the robot toward -x,
    # pushing right moves it toward +y; rotations follow the same map.
    amap = AxisMap(("-y", "x", "z"))
    np.testing.assert_allclose(amap(np.array([0, 1, 0, 0, 0, 0])), [-1, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(amap(np.array([1, 0, 0, 0, 0, 0])), [0, 1, 0, 0, 0, 0])
    np.testing.assert_allclose(amap(np.array([0, 0, 0.3, 0, 0, 0])), [0, 0, 0.3, 0, 0, 0])
    np.testing.assert_allclose(amap(np.array([0, 0, 0, 0.2, -0.4, 0.6])), [0, 0, 0, 0.4, 0.2, 0.6])


def test_axis_map_scale_per_robot_axis_and_clip():
    amap = AxisMap(("y", "-x", "z"), scale=(0.5, 2.0, 1.0, 1.0, 1.0, 0.0))
    out = amap(np.array([0.8, 0.6, 0.0, 0.0, 0.0, 1.0]))
    np.testing.assert_allclose(out, [0.3, -1.0, 0.0, 0.0, 0.0, 0.0])  # -0.8*2 clipped to -1, rz disabled


@pytest.mark.parametrize("bad", [("x", "x", "z"), ("x", "y", "-z"), ("x", "y", "w"), ("x", "--y", "z")])
def test_axis_map_rejects_bad_maps(bad):
    with pytest.raises(ValueError):
        AxisMap(bad)


def test_decode_then_map_whole_chain():
    """Reports -> operator frame -> deadband -> robot frame, by hand."""
    dec = ReportDecoder()
    dec.feed(hexbytes("01 af 00 a2 fe ba ff"))
    dec.feed(hexbytes("02 23 00 51 ff 5e 01"))
    op = apply_deadband(hid_to_operator(dec.axes, 350.0), 0.1)
    robot = AxisMap(("-y", "x", "z"))(op)
    # operator (0.5, 1, 0.2 | 0.1, 0.5, -1) -> deadband (4/9, 1, 1/9 | 0, 4/9, -1)
    np.testing.assert_allclose(robot, [-1.0, 4 / 9, 1 / 9, -4 / 9, 0.0, -1.0], atol=1e-12)
