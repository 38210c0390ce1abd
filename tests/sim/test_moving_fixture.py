"""The insertion boards that move between episodes (``hole_xy_range``, ``socket_xy_range``), and the rim detector.

A board that moves is the harder variants' difficulty from the robot's view: only the
images say where the hole went. It must stay within its range, carry its hole with it,
move on the teleport reset only (the sim shortcut that stands for a person; the scripted
reset does what the robot can), leave a fixed board exactly where it was, and the scripted
experts must still insert into it (their demos are the variants' demos).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from expert_runs import expert_successes  # noqa: E402

from robot_rl.assemble import make_env  # noqa: E402
from robot_rl.sim.experts import RimDetector  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402

BOARDS = [  # config, the range's key, the opening's ground truth
    ("configs/peg_insert.yaml", "hole_xy_range", "hole_top"),
    ("configs/plug_insert.yaml", "socket_xy_range", "socket_top"),
]


@pytest.mark.parametrize("config, key, opening", BOARDS)
def test_the_board_moves_within_its_range_and_carries_its_opening(config, key, opening):
    env = make_env(load_config(config, [f"task.params.{key}=[0.03,0.02]"]))
    task = env.unwrapped.task
    try:
        env.reset(seed=0)
        home = getattr(task, opening)() - np.append(task.board.offset(), 0.0)
        offsets = []
        for seed in range(1, 9):
            env.reset(seed=seed)
            offset = task.board.offset()
            offsets.append(offset)
            assert np.all(np.abs(offset) <= [0.03, 0.02]) and task.object_in_start_range()
            np.testing.assert_allclose(getattr(task, opening)()[:2], home[:2] + offset, atol=1e-9)
        offsets = np.array(offsets)
        assert np.all(offsets.max(axis=0) - offsets.min(axis=0) > [0.02, 0.013])  # it really spreads
        task.board.world.model.body_pos[task.board.body][0] += 0.05  # a board put out of range is seen
        assert not task.object_in_start_range()
    finally:
        env.close()


@pytest.mark.parametrize("config, key, opening", BOARDS)
def test_a_board_with_no_range_stays_where_the_scene_put_it_and_draws_nothing(config, key, opening):
    env = make_env(load_config(config))
    task = env.unwrapped.task
    try:
        env.reset(seed=0)
        top = getattr(task, opening)()
        state = np.random.default_rng(3)
        before = state.bit_generator.state
        task.place_objects(state)
        assert state.bit_generator.state == before  # the same random stream as before the range existed
        env.reset(seed=1)
        np.testing.assert_array_equal(getattr(task, opening)(), top)
        assert not task.board.moves
    finally:
        env.close()


@pytest.mark.parametrize("config, key, opening", BOARDS)
def test_the_scripted_reset_leaves_the_board_where_it_is(config, key, opening):
    """The scripted reset does what the robot can (pull the part out, go to a start pose); it cannot move a board."""
    cfg = load_config(config, ["reset.mode=scripted", f"task.params.{key}=[0.03,0.03]"])
    env = make_env(cfg)
    task = env.unwrapped.task
    try:
        env.reset(seed=0)
        first = task.board.offset()
        for _ in range(2):
            env.reset()
            stats = task.reset_routine.history[-1]
            assert stats.violations == 0 and stats.error_clipped_cycles == 0
            assert task.object_in_start_range()
            np.testing.assert_array_equal(task.board.offset(), first)
    finally:
        env.close()


@pytest.mark.parametrize("config, key, opening", BOARDS)
def test_the_expert_inserts_into_a_board_that_moved(config, key, opening):
    """Demos must be recordable: the noise-free expert succeeds on most boards moved up to 3 cm."""
    cfg = load_config(config, ["task.params.clearance=0.001", f"task.params.{key}=[0.03,0.03]"])
    successes = expert_successes(cfg, episodes=8, seed=2)
    assert successes >= 6, successes


@pytest.mark.parametrize("config, key, opening", BOARDS)
@pytest.mark.parametrize("value, fragment", [
    ("[.nan,0.01]", "must be a finite number"),
    ("[-0.01,0.01]", "is out of range"),
    ("[0.2,0.01]", "is out of range"),
    ("[.inf,.inf]", "must be a finite number"),
    ("wide", ""),
])
def test_a_bad_range_is_refused_naming_the_key(config, key, opening, value, fragment):
    from robot_rl.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        load_config(config, [f"task.params.{key}={value}"])
    assert f"task.params.{key}" in str(err.value) and fragment in str(err.value)


def test_the_rim_detector_counts_consecutive_steps_on_the_rim_of_one_push():
    rim = RimDetector()
    top = 0.03
    assert not any(rim.stuck(z, top) for z in (0.05, 0.04, 0.0305, 0.0295))  # two steps in the band
    assert not rim.stuck(0.02, top)  # in: the count starts again
    assert not rim.stuck(top, top) and not rim.stuck(top + 0.0009, top)
    assert rim.stuck(top - 0.0009, top)  # the third step in a row on the rim
    rim.start_push()
    assert not rim.stuck(top, top) and not rim.stuck(top, top)
    for bad in (float("nan"), float("inf")):  # a non-finite height never counts as the rim
        assert not RimDetector().stuck(bad, top)
    held = RimDetector(enabled=False)  # the reward scenarios' expert: holds where the board stops it
    assert not any(held.stuck(top, top) for _ in range(10))
