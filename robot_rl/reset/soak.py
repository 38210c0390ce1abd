"""Many auto-resets in a row, each after an episode that disturbed the scene, with checks.

The soak test of issue 7 ("50 consecutive auto-resets on each task") and its CI-sized
version both run :func:`reset_soak`: a sim env with ``reset.mode: scripted``, where
every episode is played by a disturber (the task's scripted expert, which does the
task, alternating with random actions, which push things about), and
after every scripted reset it checks

* the object is inside the task's randomization range (the task reset's ``in_range``:
  ``object_in_start_range``, plus whatever else the task checks, such as an object's yaw),
* the TCP is inside the safety box (1 mm tolerance for the measured pose),
* the reset caused no controller violation and no pose-error clipping
  (:class:`~robot_rl.reset.stats.ResetStats`), and no teleport ran.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.control.safety import SafetyBox
from robot_rl.reset.stats import ResetStats


@dataclass
class SoakResult:
    task: str
    resets: int = 0
    in_range: int = 0
    in_box: int = 0
    teleports: int = 0  # after the initial scene setup
    totals: ResetStats = field(default_factory=lambda: ResetStats(kind="total", resets=0))
    max_object_error: float = 0.0
    sim_s: float = 0.0
    wall_s: float = 0.0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (self.resets > 0 and self.in_range == self.resets and self.in_box == self.resets
                and self.totals.violations == 0 and self.totals.error_clipped_cycles == 0 and self.teleports == 0
                and not self.failures)

    def as_dict(self) -> dict[str, Any]:
        t = self.totals
        return {"task": self.task, "resets": self.resets, "in_range": self.in_range, "in_box": self.in_box,
                "violations": t.violations, "box_clipped_targets": t.box_clipped_targets,
                "rejected_targets": t.rejected_targets, "watchdog_holds": t.watchdog_holds,
                "error_clipped_cycles": t.error_clipped_cycles, "teleports": self.teleports,
                "joint_resets": t.joint_resets, "attempts": t.attempts,
                "max_tracking_error_mm": round(t.max_pos_error * 1000, 2),
                "max_rot_error_rad": round(t.max_rot_error, 4),
                "mean_reset_sim_s": round(t.duration_s / max(self.resets, 1), 2),
                "sim_s": round(self.sim_s, 1), "wall_s": round(self.wall_s, 1), "ok": self.ok,
                "failures": self.failures}


def reset_soak(cfg: Config, env: gym.Env, resets: int, seed: int = 0, disturb: str = "alternate",
               expert_noise: float = 0.3) -> SoakResult:
    """Run ``resets`` scripted resets of ``env`` (the sim env of ``cfg``), each after a disturbing episode.

    See the module docstring; the caller builds ``env`` (:func:`robot_rl.assemble.make_env`)
    and the soak closes it when done.

    ``disturb``: ``expert`` (the scripted expert plays), ``random`` (uniform random
    actions) or ``alternate`` (expert on even episodes, random on odd ones).
    """
    if cfg.reset.mode != "scripted":
        raise ValueError("reset_soak needs reset.mode: scripted")
    base = env.unwrapped
    task, world = base.task, base.task.world
    box = SafetyBox.from_config(cfg.robot)
    expert = task.make_expert(env, noise=expert_noise, seed=seed)
    rng = np.random.default_rng(seed + 7)
    teleports = 0
    original_teleport = task.teleport

    def counting_teleport(r: np.random.Generator) -> None:
        nonlocal teleports
        teleports += 1
        original_teleport(r)

    task.teleport = counting_teleport
    result = SoakResult(task=task.name)
    start_wall = time.perf_counter()
    try:
        env.reset(seed=seed)  # the first reset sets the scene up (the one teleport allowed)
        teleports = 0
        start_sim = world.now()
        for i in range(resets):
            use_expert = disturb == "expert" or (disturb == "alternate" and i % 2 == 0)
            expert.reset()
            done = False
            while not done:
                if use_expert:
                    action = expert.act()
                else:
                    action = rng.uniform(-1.0, 1.0, env.action_space.shape).astype(np.float32)
                _, _, terminated, truncated, _ = env.step(action)
                done = terminated or truncated
            try:
                env.reset()
            except Exception as err:  # noqa: BLE001 - a failed reset is a finding, reported
                result.failures.append(f"reset {i}: {err}")
                break
            stats = task.reset_routine.history[-1]
            result.resets += 1
            result.totals.add(stats)
            in_range = task.reset_routine.in_range()
            state = world.robot.state()
            in_box = box.contains(state.tcp_pos, state.tcp_quat, tol=1e-3)
            result.in_range += int(in_range)
            result.in_box += int(in_box)
            if not (in_range and in_box):
                result.failures.append(f"reset {i}: object in range {in_range}, robot in box {in_box}")
        result.sim_s = world.now() - start_sim
    finally:
        task.teleport = original_teleport
        result.teleports = teleports
        result.wall_s = time.perf_counter() - start_wall
        env.close()
    return result
