"""The DDS backend, initialised in a private domain on loopback for one test (``dds`` fixture)."""

from __future__ import annotations

import pytest
from domains import private_domain

from robot_rl.ros.dds import api as ros


@pytest.fixture
def dds(monkeypatch):
    monkeypatch.setenv("ROBOT_RL_ROS_BACKEND", "dds")
    monkeypatch.setenv("ROBOT_RL_DDS_LOCALHOST", "1")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(private_domain(1, 100)))
    ros.init(args=[])
    yield ros
    ros.try_shutdown()
