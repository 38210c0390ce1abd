"""Behaviour cloning (``bc:``): how ``robot-rl train-bc`` fits a base policy to demos.

The network is the learner's own observation encoder (``agent.encoder``,
``agent.normalize_state``) and an MLP of ``agent.hidden_dims``, so a BC policy sees
exactly what the RL agent sees. With ``chunk`` > 1 it predicts that many future actions
per observation (ACT's action chunks); at run time overlapping chunks are averaged with
ACT's temporal-ensembling weights ``exp(-ensemble_decay * i)``, ``i = 0`` the oldest
prediction (0: a plain average).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from robot_rl.config.loader import param

#: The longest action chunk a BC policy may predict (ACT uses up to 100 at 50 Hz; at 10 Hz
#: 64 steps is over 6 s of open-loop plan, longer than any task's useful horizon here).
MAX_CHUNK = 64


@dataclass
class BCConfig:
    """``robot-rl train-bc``: steps, batch, learning rate and the action chunk."""

    chunk: int = param(1, min=1, max=MAX_CHUNK,
                       doc="future actions predicted per observation; > 1 ensembles overlapping chunks at run time")
    ensemble_decay: float = param(0.01, min=0.0, max=10.0,
                                  doc="temporal ensembling: chunk i (0 the oldest) weighs exp(-ensemble_decay * i)")
    episodes: Literal["successful", "all"] = param(
        "successful", doc="successful: learn only from demo episodes that succeed; all: from every episode "
                          "(a failed demo's mistakes are learned as readily as a good one's skill)")
    steps: int = param(3000, min=1, max=10**7, doc="gradient steps")
    batch_size: int = param(256, min=1, max=65_536)
    learning_rate: float = param(1e-3, min=1e-8, max=1.0)
    weight_decay: float = param(0.0, min=0.0, max=1.0, doc="AdamW weight decay")
    run_dir: Optional[str] = param(None, doc="where the BC run goes; null: <train.run_dir>_bc")
