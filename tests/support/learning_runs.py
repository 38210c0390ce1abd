"""The settings every CI learning test shares: seeded, 20 scripted demos, quiet, no checkpoints."""

from __future__ import annotations


def ci_learning_overrides(budget: int, eval_every: int, stop_at: float = 0.8) -> list[str]:
    """``--set`` items for a CI-sized run: a fixed seed and budget, 10-episode evaluations
    every ``eval_every`` env steps, stopping at the first that reaches ``stop_at``."""
    return [
        "seed=0",
        "train.scripted_demos=20",
        "train.demos=null",
        f"train.total_env_steps={budget}",
        f"train.eval_every={eval_every}",
        "train.eval_episodes=10",
        f"train.stop_at_success={stop_at}",
        "train.checkpoint_every=0",
        "train.torch_threads=1",
        "train.progress=false",
    ]
