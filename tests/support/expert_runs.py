"""How often a task's scripted expert succeeds: the check that a config's demos can be recorded.

The harder variants and the moving insertion boards both need it (their demos come from the
expert), so the loop lives here once: noise-free expert, seeded episodes, successes counted.
"""

from __future__ import annotations

from robot_rl.config import Config


def expert_successes(cfg: Config, episodes: int, seed: int) -> int:
    """Successful episodes of ``cfg``'s noise-free scripted expert over ``episodes`` seeded episodes."""
    from robot_rl.assemble import make_actor_env
    from robot_rl.data.rollout import ActorLoop

    env = make_actor_env(cfg, "demos")
    try:
        loop = ActorLoop(env, env.unwrapped.task.make_expert(env, noise=0.0, seed=0), seed=seed)
        return sum(bool(loop.run_episode()[-1].success) for _ in range(episodes))
    finally:
        env.close()
