"""Real checkpoints of the one format, and ways to poison them that no NaN/inf check sees.

Shared by tests/training/test_policy_check.py, tests/training/test_eval_policy_check.py
and tests/nodes/test_actor_policy_check.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from robot_rl.training.checkpoint import STATE_FILE, read_tree, write_tree

PICK = "configs/pick_cube.yaml"
SMALL = ["agent.hidden_dims=[16,16]", "env.max_episode_steps=12"]


def rewrite_policy(run: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """Change ``agent.policy`` of the run's state file in place and re-mark the folder (as a bad
    writer would); returns the state file."""
    from robot_rl.data.durable import mark_complete

    path = Path(run) / "checkpoint" / STATE_FILE
    tree = read_tree(path)
    change(tree["agent"]["policy"])
    with open(path, "wb") as f:
        write_tree(f, tree)
    mark_complete(Path(run) / "checkpoint")
    return path


def variance_minus_one(policy: dict[str, Any]) -> None:
    """Every normalizer variance ``m2 / (count - 1)`` becomes exactly -1."""
    count = policy["encoder.normalizer.count"]
    policy["encoder.normalizer.m2"] = -(count - 1) * torch.ones_like(policy["encoder.normalizer.m2"])


def weights_times_1e38(policy: dict[str, Any]) -> None:
    """Every weight times 1e38, each still finite in float32 (so no NaN/inf check can see it)."""
    for key, value in policy.items():
        if key.endswith("weight") and value.is_floating_point():
            policy[key] = value.clamp(-3.0, 3.0) * 1e38


def huge_bias(policy: dict[str, Any]) -> None:
    policy["actor_head.mean.bias"] = torch.full_like(policy["actor_head.mean.bias"], 1e30)


def pick_cube_run(run: Path, overrides: list[str] | None = None) -> tuple[Any, Path]:
    """A PickCube run directory holding a checkpoint of a small policy whose state normalizer has
    seen real observations (resets and random steps of the sim env), as ``robot-rl train`` saves it."""
    from robot_rl.agents.policy import Policy
    from robot_rl.assemble import make_env, policy_view
    from robot_rl.data.spaces import spaces_spec
    from robot_rl.tasks import load_config
    from robot_rl.training.checkpoint import checkpoint_config, save_checkpoint

    cfg = load_config(PICK, [*SMALL, *(overrides or [])])
    env = policy_view(make_env(cfg), cfg)
    try:
        torch.manual_seed(0)
        policy = Policy(cfg.agent, env.observation_space, env.action_space)
        rng = np.random.default_rng(0)
        seen = []
        for seed in range(3):
            obs, _ = env.reset(seed=seed)
            seen.append(obs)
            for _ in range(5):
                obs, *_ = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
                seen.append(obs)
        policy.encoder.update_normalizer({k: np.stack([o[k] for o in seen]) for k in seen[0]})
        save_checkpoint(run, {"kind": "train", "config": checkpoint_config(cfg),
                              "spaces": spaces_spec(env.observation_space, env.action_space),
                              "agent": {"policy": policy.state_dict(), "critic_updates": 0}})
    finally:
        env.close()
    return cfg, Path(run)
