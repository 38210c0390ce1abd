"""A residual policy's bound, under 10^5 fuzzed residual outputs, and the arm's safety figures while it acts.

The residual actor (:class:`~robot_rl.agents.residual.ResidualActor`, as an actor process or
the actor node runs it) on PickCube's sim arm, its base an entry point
(tests/support/base_policies.py). Residual outputs are fuzzed: normal, NaN, +-inf, 1e30,
1e-30, and +-1e6 alternating every step. Checked:

* every one of the 10^5 outputs, on the base's actions for real observations of the arm:
  the executed action never leaves ``clip(base) +- scale`` nor the action space, a finite
  residual moves it by exactly ``scale * clip(u)``, a non-finite one holds the arm (zero
  motion, gripper kept) and is counted;
* the first :data:`ON_ARM` of them drive the sim arm through its RobotEnv: at every physics
  step the TCP stays inside the workspace box (within the tolerance tests/control states),
  the spring force at most K * clip, torques and their rate within their limits, no NaN in
  the physics, and the controller rejects nothing (no NaN ever reached it)
  (:class:`~robot_rl.sim.adversary.Adversary`'s measurement, the same as the safety attacks').
"""

from __future__ import annotations

import logging

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("mujoco")

from robot_rl.agents.residual import BASE_ACTION_KEY  # noqa: E402
from robot_rl.assemble import make_env  # noqa: E402
from robot_rl.envs import EnvParts  # noqa: E402
from robot_rl.sim.adversary import Adversary  # noqa: E402
from robot_rl.tasks import load_config, make_task  # noqa: E402
from robot_rl.training.base_acting import actor_base  # noqa: E402

FUZZED = 100_000
ON_ARM = 1_500  # env steps on the sim arm (each ~10 physics steps, every one measured)
BOX_TOLERANCE_MM = 3.0  # tests/control/test_command_attacks.py's stated tolerance for contact and dynamics
SCALE = np.array([0.3, 0.05, 0.0, 1.0], np.float32)  # per dimension: x, y, z, gripper


def fuzzed_residuals(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    """Rows of raw residual outputs: normal, NaN, +-inf, 1e30, 1e-30, and +-1e6 alternating row by row."""
    u = rng.standard_normal((n, dims))
    kind = rng.integers(0, 6, n)
    u[kind == 1] = np.nan
    u[kind == 2] = np.where(rng.random((int((kind == 2).sum()), dims)) < 0.5, np.inf, -np.inf)
    u[kind == 3] *= 1e30
    u[kind == 4] *= 1e-30
    alternating = np.flatnonzero(kind == 5)
    u[alternating] = np.where((alternating % 2 == 0)[:, None], 1e6, -1e6)
    one_bad = rng.random(n) < 0.05  # a single NaN among finite values
    u[one_bad, rng.integers(0, dims, int(one_bad.sum()))] = np.nan
    u[: n // 10 * 2 : 2] = 1e6  # and a stretch of fast alternation at the start, where the arm runs
    u[1: n // 10 * 2 : 2] = -1e6
    return u


class Sent(gym.Wrapper):
    """Keeps the action the env was given (what the residual actor executed)."""

    def step(self, action):
        self.last = np.array(action, np.float64)
        return self.env.step(action)


def test_a_fuzzed_residual_never_leaves_base_plus_minus_scale_and_the_arm_keeps_its_figures():
    cfg = load_config("configs/pick_cube.yaml", ["agent.base.mode=residual", "agent.base.source=base_policies:drift",
                                                 f"agent.residual.scale={SCALE.tolist()}", "env.max_episode_steps=60"])
    adv = Adversary(cfg, "robot", make_task=make_task)
    world = adv.world
    step_physics = world.physics_step

    def measured() -> None:  # every physics step the env takes, measured as the safety attacks measure it
        step_physics()
        adv._measure()

    world.physics_step = measured
    sent = Sent(make_env(cfg, parts=EnvParts(world.robot, {}, world, world.task)))
    acting = actor_base(cfg, sent)
    env, actor = acting.env, acting.residual
    low, high = sent.action_space.low, sent.action_space.high
    hold = actor.base_guard._hold()  # zero motion, gripper kept
    rng = np.random.default_rng(0)
    residuals = fuzzed_residuals(rng, FUZZED, len(SCALE))
    finite = np.isfinite(residuals).all(axis=1)
    obs, _ = env.reset(seed=0)
    observed = []  # real observations of the arm, for the rows that do not drive it
    held = worst = 0.0
    for i in range(ON_ARM):
        base = obs[BASE_ACTION_KEY]
        observed.append(obs)
        obs, _, terminated, truncated, _ = env.step(residuals[i])
        executed = sent.last
        if finite[i]:
            worst = max(worst, float((np.abs(executed - np.clip(base, low, high)) - SCALE).max()))
            np.testing.assert_allclose(executed, np.clip(base + SCALE * np.clip(residuals[i], -1, 1), low, high),
                                       atol=1e-6)
        else:
            np.testing.assert_allclose(executed, hold)
            held += 1
        assert np.all(executed >= low) and np.all(executed <= high)
        if terminated or truncated:
            obs, _ = env.reset(seed=i)
    for i in range(ON_ARM, FUZZED):  # the rest: the same actor, on the bases of those observations
        base = actor.base_action(observed[i % len(observed)])
        executed = actor.execute(base, residuals[i])
        if finite[i]:
            worst = max(worst, float((np.abs(executed - np.clip(base, low, high)) - SCALE).max()))
            assert not actor.residual_guard.holding
        else:
            assert actor.residual_guard.holding and np.array_equal(executed, hold)
            held += 1
        assert np.all(executed >= low) and np.all(executed <= high)
    assert worst <= 1e-6, worst
    assert held == int((~finite).sum()) > FUZZED // 5
    status = acting.status()
    assert status["residual_refused"] == held and status["base_refused"] == 0

    f = adv.figures
    logging.getLogger(__name__).info("figures on the arm: %s", f)
    assert f.steps >= ON_ARM * 5, f  # every physics step of the run was measured
    assert f.nonfinite_steps == 0, f
    assert f.max_box_excursion_mm <= BOX_TOLERANCE_MM, f
    assert f.max_spring_ratio <= 1.0 + 1e-9 and f.max_torque_ratio <= 1.0 + 1e-9, f
    assert f.max_torque_rate_ratio <= 1.0 + 1e-6, f
    assert adv.controller.stats.rejected_targets == 0  # nothing non-finite ever reached the controller
    env.close()
