"""Imperfect demos (robot_rl/data/imperfect_demos.py): the noise, failed and hesitant fractions are what is stated."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from robot_rl.data.imperfect_demos import (
    CLEAN,
    FAILED,
    HESITANT,
    DemoFlaws,
    ImperfectDemonstrator,
    episode_kinds,
    perturb,
    record_imperfect,
)
from robot_rl.errors import ConfigError, RobotRLError

NAMES = {"noise": "--demo-noise", "failed": "--demo-failed", "hesitant": "--demo-hesitant"}


class ConstantExpert:
    """Always the same 7-D action; counts its resets; has the aim offset a ScriptedExpert has."""

    def __init__(self, action: np.ndarray) -> None:
        self.action = np.asarray(action, np.float64)
        self.aim_offset = np.zeros(3)
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def full_action(self) -> np.ndarray:
        return self.action.copy()


def fake_env(horizon: int = 50) -> SimpleNamespace:
    env = SimpleNamespace(cfg=SimpleNamespace(env=SimpleNamespace(max_episode_steps=horizon)))
    env.unwrapped = env
    return env


def demonstrator(flaws: DemoFlaws, seed: int = 0, action=(0.1, -0.2, 0.3, 0.0, 0.0, 0.05, 1.0), horizon: int = 50):
    expert = ConstantExpert(np.array(action))
    return ImperfectDemonstrator(fake_env(horizon), expert, flaws, seed, outer=lambda env, a: a), expert


# --- the stated figures ------------------------------------------------------------------


@pytest.mark.parametrize("noise", [0.05, 0.2, 0.3])
def test_the_noise_on_each_motion_component_has_the_stated_std_and_the_gripper_none(noise):
    demo, expert = demonstrator(DemoFlaws(noise=noise), seed=3)
    demo.reset()
    deltas = np.stack([demo.act() - expert.action for _ in range(20_000)])
    assert np.all(deltas[:, 6] == 0.0)  # the gripper command as the expert gave it
    std = deltas[:, :6].std(axis=0)
    assert np.all(np.abs(std - noise) < 0.05 * noise), std  # 20,000 draws: within 5% of the stated std
    assert np.all(np.abs(deltas[:, :6].mean(axis=0)) < 0.05 * noise)


def test_noise_is_clipped_to_the_action_range():
    action = np.array([0.95, -0.95, 0.0, 0.0, 0.0, 0.0, -1.0])
    rng = np.random.default_rng(0)
    out = np.stack([perturb(action, 1.0, rng) for _ in range(5000)])
    assert out[:, :6].max() == 1.0 and out[:, :6].min() == -1.0  # large noise hits both ends, never past them
    assert np.all(out[:, 6] == -1.0)
    assert np.array_equal(perturb(action, 0.0, rng), action)  # no noise: the action as it is


@pytest.mark.parametrize("count, failed, hesitant, expect", [
    (20, 0.15, 0.25, {FAILED: 3, HESITANT: 5, CLEAN: 12}),
    (5, 0.15, 0.25, {FAILED: 1, HESITANT: 1, CLEAN: 3}),
    (10, 0.5, 0.5, {FAILED: 5, HESITANT: 5, CLEAN: 0}),
    (3, 0.0, 0.0, {FAILED: 0, HESITANT: 0, CLEAN: 3}),
    (1, 0.5, 0.5, {FAILED: 0, HESITANT: 0, CLEAN: 1}),  # round half to even: 0 and 0
    (7, 0.6, 0.4, {FAILED: 4, HESITANT: 3, CLEAN: 0}),
])
def test_the_numbers_of_failed_and_hesitant_episodes_are_the_stated_fractions(count, failed, hesitant, expect):
    flaws = DemoFlaws(failed=failed, hesitant=hesitant)
    assert flaws.counts(count) == expect
    kinds = episode_kinds(count, flaws, np.random.default_rng(1))
    assert len(kinds) == count and {k: kinds.count(k) for k in expect} == expect


def test_which_episode_is_which_kind_is_seeded():
    flaws = DemoFlaws(failed=0.3, hesitant=0.3)
    orders = {tuple(episode_kinds(20, flaws, np.random.default_rng(seed))) for seed in range(6)}
    assert len(orders) > 1  # the order depends on the seed...
    assert episode_kinds(20, flaws, np.random.default_rng(4)) == episode_kinds(20, flaws, np.random.default_rng(4))


def test_a_hesitant_episode_holds_still_for_its_pauses_in_the_first_half():
    flaws = DemoFlaws(hesitant=1.0, pauses=3, pause_steps=4)
    for seed in range(20):
        demo, expert = demonstrator(flaws, seed=seed, horizon=50)
        demo.kind = HESITANT
        demo.reset()
        actions = np.stack([demo.act() for _ in range(50)])
        held = np.flatnonzero(np.all(actions == 0.0, axis=1))
        assert 4 <= len(held) <= 12  # 3 pauses of 4 steps, overlapping ones merged
        assert held.max() < 25  # the first half of the 50-step episode
        moving = np.setdiff1d(np.arange(50), held)
        assert np.array_equal(actions[moving], np.tile(expert.action, (len(moving), 1)))  # no noise asked


def test_a_clean_episode_never_pauses_and_aims_true():
    demo, expert = demonstrator(DemoFlaws(hesitant=1.0), seed=2)
    demo.kind = CLEAN
    demo.reset()
    assert not any(np.all(demo.act() == 0.0) for _ in range(50))
    assert np.array_equal(expert.aim_offset, np.zeros(3))


def test_a_failed_episode_aims_the_stated_distance_off_horizontally_in_varied_directions():
    directions = []
    for seed in range(10):
        demo, expert = demonstrator(DemoFlaws(failed=1.0, miss=0.04), seed=seed)
        demo.kind = FAILED
        demo.reset()
        assert expert.aim_offset[2] == 0.0
        assert np.linalg.norm(expert.aim_offset) == pytest.approx(0.04)
        directions.append(np.arctan2(expert.aim_offset[1], expert.aim_offset[0]))
        demo.kind = CLEAN
        demo.reset()  # the next episode aims true again
        assert np.array_equal(expert.aim_offset, np.zeros(3))
    assert np.ptp(directions) > 1.0


def test_the_same_seed_gives_the_same_actions():
    flaws = DemoFlaws(noise=0.3, hesitant=0.5)
    runs = []
    for _ in range(2):
        demo, _ = demonstrator(flaws, seed=11)
        demo.kind = HESITANT
        demo.reset()
        runs.append(np.stack([demo.act() for _ in range(30)]))
    assert np.array_equal(runs[0], runs[1])


# --- bad values --------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, fragment", [
    ({"noise": float("nan")}, "--demo-noise = nan must lie in [0, 1]"),
    ({"noise": float("inf")}, "--demo-noise = inf"),
    ({"noise": -0.1}, "--demo-noise = -0.1"),
    ({"noise": 1e300}, "--demo-noise = 1e+300"),
    ({"failed": 1.5}, "--demo-failed = 1.5"),
    ({"failed": float("-inf")}, "--demo-failed = -inf"),
    ({"hesitant": float("nan")}, "--demo-hesitant = nan"),
    ({"hesitant": "0.2"}, "--demo-hesitant = '0.2' must be a number"),
    ({"failed": True}, "--demo-failed = True must be a number"),
    ({"failed": 0.6, "hesitant": 0.5}, "--demo-failed + --demo-hesitant = 1.1: at most 1"),
    ({"pauses": 2.5}, "pauses = 2.5 must be a whole number"),
    ({"pauses": 0}, "pauses = 0 must lie in [1, 10]"),
    ({"pause_steps": 10**9}, "pause_steps = 1000000000"),
    ({"miss": 0.0}, "miss = 0.0 must lie in [0.005, 0.2]"),
])
def test_bad_values_are_one_line_naming_the_key(kwargs, fragment):
    with pytest.raises(ConfigError) as err:
        DemoFlaws(**kwargs, names=NAMES)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_without_names_the_error_names_the_field():
    with pytest.raises(ConfigError, match=r"^noise = nan"):
        DemoFlaws(noise=float("nan"))


# --- on the sim ----------------------------------------------------------------------------


@pytest.fixture
def pick_cube_env():
    pytest.importorskip("mujoco")
    from robot_rl.assemble import make_actor_env
    from robot_rl.tasks import load_config

    cfg = load_config("configs/pick_cube.yaml")
    env = make_actor_env(cfg, "demos")
    yield env
    env.close()


def test_a_recording_on_the_sim_holds_the_stated_numbers_of_failures_and_hesitations(pick_cube_env, tmp_path):
    from robot_rl.data.demos import DemoWriter, load_demos

    env = pick_cube_env
    writer = DemoWriter(tmp_path / "demos", env.observation_space, env.action_space, task="PickCube",
                        source="scripted, imperfect", force=True)
    expert = env.unwrapped.task.make_expert(env, noise=0.0, seed=0)
    flaws = DemoFlaws(noise=0.2, failed=0.2, hesitant=0.3, pause_steps=3)
    summary = record_imperfect(env, expert, writer, 10, flaws, seed=7)
    episodes = load_demos(tmp_path / "demos", env.observation_space, env.action_space)
    assert len(episodes) == 10 and summary.attempted >= 10
    outcomes = [bool(steps[-1].success) for steps in episodes]
    assert outcomes.count(False) == 2  # exactly 20% failed, on disk
    assert summary.kinds.count(HESITANT) == 3 and summary.kinds.count(FAILED) == 2
    for kind, steps in zip(summary.kinds, episodes):
        assert bool(steps[-1].success) == (kind != FAILED)
        if kind == FAILED:  # a failure runs to the time limit
            assert len(steps) == env.unwrapped.cfg.env.max_episode_steps
        held = sum(bool(np.all(step.action[:3] == 0.0)) for step in steps)
        if kind == HESITANT:
            assert held >= 3  # at least one whole pause held the arm still


def test_an_expert_that_cannot_do_it_runs_out_of_attempts_in_one_line(pick_cube_env, tmp_path):
    from robot_rl.data.demos import DemoWriter

    env = pick_cube_env
    writer = DemoWriter(tmp_path / "demos", env.observation_space, env.action_space, force=True)
    expert = env.unwrapped.task.make_expert(env, noise=0.0, seed=0)
    # every episode is to fail, but the expert aims only 5 mm off: it grasps anyway, and no attempt is kept
    with pytest.raises(RobotRLError) as err:
        record_imperfect(env, expert, writer, 2, DemoFlaws(failed=1.0, miss=0.005), seed=0, max_attempts=2)
    assert "only 0 recorded in 2 attempts" in str(err.value) and "\n" not in str(err.value)
