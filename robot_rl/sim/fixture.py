"""A fixture that moves between episodes: the board with a hole or a socket, placed anew each reset.

The insertion tasks build their board as a static body (no joint: nothing the arm does
moves it). Moving its ``body_pos`` between episodes stands in for a person or a fixture
stage that puts the board somewhere else, so only the board's place in the camera
images tells a policy from the robot's view where to go: the difficulty of a real cell
whose part is never twice in the same place. A range of zero keeps the board where the
scene put it, exactly as before the range existed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from robot_rl.sim.world import SimWorld


class MovingFixture:
    """A static body of ``world`` moved within ``+-xy_range`` (metres, x and y) of where the scene put it."""

    def __init__(self, world: "SimWorld", body: str, xy_range: Sequence[float]) -> None:
        self.world = world
        self.body = world.model.body(body).id
        self.home = world.model.body_pos[self.body].copy()
        self.xy_range = np.asarray(xy_range, dtype=float)

    @property
    def moves(self) -> bool:
        return bool(np.any(self.xy_range > 0))

    def place(self, rng: np.random.Generator) -> None:
        """A new place, uniform in the range (no draw from ``rng`` where the fixture does not move)."""
        if not self.moves:
            return
        offset = rng.uniform(-1.0, 1.0, 2) * self.xy_range
        self.world.model.body_pos[self.body] = self.home + np.append(offset, 0.0)
        self.world.forward()

    def offset(self) -> np.ndarray:
        """Where the fixture is now relative to its home (x, y; metres)."""
        return (self.world.model.body_pos[self.body] - self.home)[:2].copy()

    def in_range(self) -> bool:
        return bool(np.all(np.abs(self.offset()) <= self.xy_range + 1e-9))
