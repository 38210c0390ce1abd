"""Fixtures of the contract tests: one rig per backend, chosen by indirect parametrisation.

The rigs themselves are in ``tests/support/contract_rigs.py``; a test names its backends
with ``contract_rigs.over(...)``, so each case is ``test_<rule>[<backend>]``.
"""

from __future__ import annotations

import pytest
from contract_rigs import make_camera_rig, make_input_rig, make_robot_rig  # noqa: E402  (tests/support)


@pytest.fixture
def robot_rig(request, tmp_path, monkeypatch):
    """The Robot backend named by the (indirect) parameter, torn down after the test."""
    rig = make_robot_rig(request.param, tmp_path, monkeypatch)
    yield rig
    rig.teardown()


@pytest.fixture
def faulting_robot_rig(request, tmp_path, monkeypatch):
    """Like ``robot_rig``, built so that the arm can stop itself (the fake Franka's reflex)."""
    rig = make_robot_rig(request.param, tmp_path, monkeypatch, faulting=True)
    yield rig
    rig.teardown()


@pytest.fixture
def camera_rig(request, tmp_path):
    rig = make_camera_rig(request.param, tmp_path)
    yield rig
    rig.teardown()


@pytest.fixture
def short_lived_camera_rig(request, tmp_path):
    """A camera rig whose device is declared gone soon after its frames stop."""
    rig = make_camera_rig(request.param, tmp_path, quick_timeout=True)
    yield rig
    rig.teardown()


@pytest.fixture
def input_rig(request):
    rig = make_input_rig(request.param)
    yield rig
    rig.teardown()
