"""Fixtures the robot backend tests share."""

from __future__ import annotations

import pytest


@pytest.fixture
def ur(tmp_path, monkeypatch):
    """Build URRobot over the fake ur_rtde (tests/support/ur_rig.py); returns make(scenario, **kw) -> (robot, log).

    Every robot made is closed when the test ends, whatever it did.
    """
    from ur_rig import make_ur  # tests/support

    made = []

    def make(scenario=None, **kw):
        robot, log = make_ur(tmp_path, monkeypatch, scenario, **kw)
        made.append(robot)
        return robot, log

    yield make
    for robot in made:
        robot.close()
