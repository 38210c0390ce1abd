"""RL on top of a base policy (``agent.base``, ``agent.residual``, ``agent.warm_start``).

``agent.base.mode`` chooses how the SAC agent uses the base policy ``agent.base.source``
names (a run directory or checkpoint of ``robot-rl train-bc``, ``robot-rl train`` or
``robot-rl learner``, or a ``module:factory`` entry point):

* ``none``: RL from a random actor (RLPD), the base is not used;
* ``residual``: the executed action is ``clip(base + scale * u)``, ``u`` the SAC actor's
  tanh-squashed output; the actor (and critic) see the base action as an observation key
  and the critic is trained on the executed action (:mod:`robot_rl.agents.residual`);
* ``warm_start``: the SAC actor starts as the BC policy and only the critic learns for the
  first ``agent.warm_start.critic_steps`` updates (:mod:`robot_rl.agents.warm_start`); then
  a behaviour-cloning term (``agent.warm_start.bc_weight``, fading over ``bc_decay_updates``,
  optionally Q-filtered by ``bc_filter``) holds the actor near the BC policy while the critic
  is still young.

The agent acts in ``[-1, 1]`` per action dimension, so the action space's half-range is 1:
``agent.residual.scale`` (a scalar, or one value per action dimension in the action's own
units) must be finite and lie in ``[0, 1]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional, Union

from robot_rl.config.loader import param, show, source_of

BaseMode = Literal["none", "residual", "warm_start"]


@dataclass
class BaseConfig:
    """The base policy RL starts from, and how."""

    mode: BaseMode = param("none", doc="none: RL from scratch; residual: a bounded residual on top of the base; "
                                       "warm_start: the SAC actor starts as the BC policy")
    source: Optional[str] = param(None, doc="a BC/RL run directory or checkpoint path, a LeRobot policy folder "
                                            "(save_pretrained), or module:factory")
    lerobot_python: Optional[str] = param(None, doc="the python of LeRobot's own virtualenv, which runs a LeRobot "
                                                    "policy folder; null: $ROBOT_RL_LEROBOT_PYTHON")
    ensemble_decay: Optional[float] = param(None, min=0.0, max=10.0,
                                            doc="temporal ensembling of a chunked base; null: the checkpoint's own")

    def __post_init__(self) -> None:
        if self.mode != "none" and not (self.source or "").strip():
            raise ValueError(f"base.mode is '{self.mode}' but base.source is not set (a BC/RL run directory, "
                             "a checkpoint path, or module:factory)")


@dataclass
class ResidualConfig:
    """``agent.base.mode: residual``: how far the learned residual may move the base's action."""

    scale: Union[float, tuple[float, ...]] = param(
        0.2, min=0.0, max=1.0,
        doc="largest residual per action dimension, in the action's units (a scalar, or one value per "
            "dimension of env.active_dims); at most 1, the half-range of the agent's [-1, 1] actions")


@dataclass
class WarmStartConfig:
    """``agent.base.mode: warm_start``: the critic learns alone before the BC-initialised actor moves."""

    critic_steps: int = param(4000, min=0, max=10**8,
                              doc="critic-only updates (the actor, its temperature and the shared encoder held) "
                                  "before the first actor update")
    init_log_std: float = param(-3.0, min=-20.0, max=5.0,
                                doc="the actor's log-std at the start (small: the first rollouts are the BC "
                                    "policy's, barely perturbed); within (log_std_min, log_std_max)")
    bc_weight: float = param(0.1, min=0.0, max=100.0,
                             doc="weight of the behaviour-cloning term in the actor loss, relative to mean |Q| "
                                 "(TD3+BC's normalisation: 0.4 is its alpha 2.5); 0: none")
    bc_target: Literal["bc_policy", "demos"] = param(
        "bc_policy", doc="what the term holds the actor to: bc_policy, the BC policy's own action on every row "
                         "(a frozen copy of the actor as it started); demos, the demos' actions on demo rows")
    bc_decay_updates: int = param(0, min=0, max=10**8,
                                  doc="actor updates over which bc_weight falls linearly to 0; 0: it never falls "
                                      "(measured: the actor collapses once the term has faded)")
    bc_filter: Literal["none", "q"] = param(
        "none", doc="none: the BC term on every row it covers; q: only on rows where the critic values the BC "
                    "target's action above the actor's own (Nair et al. 2018's Q-filter); measured, it did not "
                    "bring a warm start from a poor BC policy near RLPD (docs/learning.md)")


def check_base_rl(cfg: Any, file: str = "config") -> None:
    """Settings that depend on other sections (the action dims, the gripper critic, random steps).

    One ConfigError line naming the file (or the ``--set`` item) and the key.
    """
    from robot_rl.errors import ConfigError

    agent = cfg.agent
    mode = agent.base.mode
    dims = len(cfg.env.active_dims)
    scale = agent.residual.scale
    if isinstance(scale, tuple) and len(scale) != dims:
        where = "agent.residual.scale"
        raise ConfigError(f"{source_of(file, where)}: '{where}' has {len(scale)} values but the action has {dims} "
                          f"dimensions (env.active_dims {list(cfg.env.active_dims)}); give one value per "
                          "dimension or a scalar")
    if mode == "none":
        return
    if agent.gripper_critic:
        where = "agent.gripper_critic"
        raise ConfigError(f"{source_of(file, where)}: '{where}' is true but agent.base.mode is '{mode}': the "
                          "discrete gripper critic cannot start from or add to a base policy's gripper action; "
                          "set agent.gripper_critic: false")
    if mode == "warm_start":
        if cfg.train.random_steps > 0:
            where = "train.random_steps"
            raise ConfigError(f"{source_of(file, where)}: '{where}' = {show(cfg.train.random_steps)} but "
                              "agent.base.mode is 'warm_start': the first rollouts must be the BC policy's; set 0")
        low, high, value = agent.log_std_min, agent.log_std_max, agent.warm_start.init_log_std
        if not low < value < high:
            where = "agent.warm_start.init_log_std"
            raise ConfigError(f"{source_of(file, where)}: '{where}' = {show(value)} must lie strictly between "
                              f"agent.log_std_min ({low:g}) and agent.log_std_max ({high:g})")
