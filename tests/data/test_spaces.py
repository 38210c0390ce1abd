"""Spaces as JSON and back: :func:`box_from_spec` inverts :func:`box_spec` (demo bags rebuild spaces with it)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from robot_rl import jsonio
from robot_rl.data.spaces import box_from_spec, box_spec


@pytest.mark.parametrize("space", [
    gym.spaces.Box(0, 255, (32, 32, 3), np.uint8),
    gym.spaces.Box(-1.0, 1.0, (7,), np.float32),
    gym.spaces.Box(np.array([-np.inf, 0.0]), np.array([np.inf, 2.5]), (2,), np.float64),
    gym.spaces.Box(np.full((2, 3), -3), np.full((2, 3), 3), (2, 3), np.int16),
])
def test_a_box_survives_its_json_spec(space):
    spec = json.loads(jsonio.dumps(box_spec(space)))  # unbounded entries travel as null
    back = box_from_spec(spec)
    assert back.shape == space.shape and back.dtype == space.dtype
    assert np.array_equal(back.low, space.low) and np.array_equal(back.high, space.high)


@pytest.mark.parametrize("spec, message", [
    ({"dtype": "float32"}, "not a space description"),
    ({"shape": [2], "dtype": "no-such-dtype"}, "not a space description"),
    ({"shape": "x", "dtype": "float32"}, "not a space description"),
    ({"shape": [2], "dtype": "float32", "low": [0.0], "high": [1.0, 1.0]}, "bounds do not match the shape (2,)"),
    ({"shape": [2], "dtype": "float32", "low": ["a", "b"], "high": [1.0, 1.0]}, "bounds are not numbers"),
    ([1, 2], "not a space description"),
])
def test_what_is_not_a_box_spec_is_one_value_error(spec, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        box_from_spec(spec)
