"""The fake ur_rtde (tests/support/fake_rtde.py) keeps ur_rtde's API and behaves like a UR where the driver looks."""

from __future__ import annotations

import inspect
import json
import time

import fake_rtde
import numpy as np
import pytest

CALLS = {
    ("rtde_control", "RTDEControlInterface"): ["initPeriod", "waitPeriod", "speedL", "servoL", "speedStop",
                                               "servoStop", "zeroFtSensor", "setTcp", "setWatchdog", "kickWatchdog",
                                               "isConnected", "isProgramRunning", "reconnect", "reuploadScript",
                                               "stopScript", "disconnect"],
    ("rtde_receive", "RTDEReceiveInterface"): ["getTimestamp", "getActualTCPPose", "getActualTCPSpeed",
                                               "getActualTCPForce", "getActualQ", "getActualQd", "getSafetyMode",
                                               "getRobotMode", "isProtectiveStopped", "isConnected", "reconnect",
                                               "disconnect"],
    ("dashboard_client", "DashboardClient"): ["connect", "isConnected", "disconnect", "isInRemoteControl",
                                              "closeSafetyPopup", "unlockProtectiveStop", "polyscopeVersion"],
}


def test_the_fake_has_ur_rtde_s_api():
    pytest.importorskip("rtde_control")
    import importlib

    for (module, cls), names in CALLS.items():
        real = getattr(importlib.import_module(module), cls)
        for name in names:
            assert hasattr(real, name), f"{module}.{cls} has no {name}: the fake (and the driver) drifted"


def test_the_fake_s_own_surface_covers_what_the_driver_calls():
    for (module, cls), names in CALLS.items():
        fake = getattr(getattr(fake_rtde, module), cls)
        for name in names:
            assert callable(getattr(fake, name, None)), f"fake {module}.{cls}.{name}"
    sig = inspect.signature(fake_rtde.RTDEControlInterface.speedL)
    assert list(sig.parameters) == ["self", "xd", "acceleration", "time"]  # ur_rtde's keyword names


@pytest.fixture
def arm(tmp_path, monkeypatch):
    def make(scenario: dict):
        path = tmp_path / "s.json"
        path.write_text(json.dumps(scenario))
        monkeypatch.setenv(fake_rtde.SCENARIO_ENV, str(path))
        host = f"h{time.perf_counter_ns()}"  # a fresh arm per call
        return (fake_rtde.RTDEControlInterface(host), fake_rtde.RTDEReceiveInterface(host),
                fake_rtde.DashboardClient(host))

    return make


def sample(r) -> tuple[float, np.ndarray]:
    """The timestamp and the pose of one and the same tick: each getter reads the newest sample,
    so a tick may pass between two of them (a starved test process sees several); read again
    until the timestamp did not change around the pose."""
    deadline = time.monotonic() + 30.0
    while True:
        t, pose, t_after = r.getTimestamp(), np.array(r.getActualTCPPose()), r.getTimestamp()
        if t == t_after:
            return t, pose
        assert time.monotonic() < deadline, "no two reads within one 2 ms tick for 30 s"


def test_the_arm_moves_as_commanded_on_a_2_ms_clock(arm):
    c, r, _ = arm({})
    assert c.speedL([0.1, 0.0, 0.0, 0.0, 0.0, 0.0], 1.0, 0.002)
    # Sampled after speedL: the ticks counted from t0 on are all ticks the twist applied to.
    t0, p0 = sample(r)
    time.sleep(0.1)
    t1, p1 = sample(r)
    ticks = (t1 - t0) / fake_rtde.PERIOD
    assert round(ticks) == pytest.approx(ticks, abs=1e-6) and ticks >= 0.1 / fake_rtde.PERIOD - 1
    # The displacement is checked against the ticks the clock counted, not the time slept.
    assert p1[0] - p0[0] == pytest.approx(0.1 * (t1 - t0), abs=1e-9)
    np.testing.assert_allclose(r.getActualTCPSpeed(), [0.1, 0, 0, 0, 0, 0])


def test_a_protective_stop_refuses_commands_and_unlocks_after_its_window(arm):
    c, r, d = arm({"protective_stop_at": 1, "unlock_window_s": 0.2})
    d.connect()
    assert c.speedL([0.0] * 6) is True
    assert r.getSafetyMode() == 3 and r.isProtectiveStopped() and not c.isProgramRunning()
    assert c.speedL([0.0] * 6) is False
    with pytest.raises(RuntimeError, match="Cannot unlock protective stop until 5s after occurrence"):
        d.unlockProtectiveStop()
    time.sleep(0.2)
    d.unlockProtectiveStop()
    assert r.getSafetyMode() == 1 and c.reuploadScript() and c.isProgramRunning()


def test_a_pulled_cable_freezes_the_stream(arm):
    c, r, _ = arm({"disconnect_at": 1})
    c.speedL([0.0] * 6)
    t = r.getTimestamp()
    time.sleep(0.02)
    assert not r.isConnected() and not c.isConnected() and r.getTimestamp() == t
    assert c.speedL([0.0] * 6) is False and r.reconnect() is False


def test_the_rtde_watchdog_stops_the_script(arm):
    c, r, _ = arm({})
    c.setWatchdog(50.0)
    time.sleep(0.05)
    assert not c.isProgramRunning() and c.speedL([0.0] * 6) is False


@pytest.mark.parametrize("scenario, message", [
    ({"reachable": False}, "Timeout connecting to UR dashboard server."),
    ({"remote": False}, "ur_rtde: Please enable remote control on the robot!"),
    ({"robot_mode": 3}, "ur_rtde: Failed to start control script, before timeout of 5 seconds"),
])
def test_connecting_fails_with_ur_rtde_s_messages(arm, scenario, message):
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        arm(scenario)
