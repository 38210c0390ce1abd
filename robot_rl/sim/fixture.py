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


def inserted(tip: np.ndarray, top: np.ndarray, half_xy: Sequence[float], depth: float) -> bool:
    """Whether a held part's ``tip`` is ``depth`` below an opening's ``top`` centre *within the
    opening's footprint* (``+-half_xy`` in x and y of the centre; the openings are not turned).

    The depth alone is not an insertion: the arm's workspace reaches past the board's edge, and
    there the tip goes as low, on the table beside the board. A policy that drove to a corner of
    the workspace and down scored "success" on both insertion tasks (in up to 20 of 20 episodes).
    Inside the footprint and below the top, the tip can only be in the opening."""
    off = np.abs(np.asarray(tip[:2], dtype=float) - np.asarray(top[:2], dtype=float))
    return bool(tip[2] <= top[2] - depth and np.all(off <= np.asarray(half_xy, dtype=float)))
