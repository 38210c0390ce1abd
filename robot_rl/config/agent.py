"""Typed config sections for the learner: the agent (``agent:``) and training (``train:``).

Defaults follow HIL-SERL / RLPD: batch 256, discount 0.97, 50/50 demo/online
sampling, 2 LayerNorm critics, learned temperature. A task YAML overrides only what it
needs (``configs/pick_cube.yaml`` holds the settings that make sim training fast on a CPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from robot_rl.config.base_rl import BaseConfig, ResidualConfig, WarmStartConfig
from robot_rl.config.loader import param


@dataclass
class EncoderConfig:
    """How each camera image becomes a feature vector (used only when the obs has images).

    ``kind: small`` is a conv net trained from scratch by the critic loss. ``kind:
    resnet10`` is a ResNet-10 backbone, frozen, with weights from ``pretrained_path``
    and a trainable spatial-embedding head per camera. With ``cache_features`` the frozen
    backbone runs once per frame when the frame enters replay, and replay keeps the
    float16 feature map instead of the image; pixel augmentation is then not applied.

    ``pretrained_path`` is a local file; nothing is ever downloaded or unpickled. Best is
    the project format that ``robot-rl encoder convert IN OUT`` writes (a safetensors
    file, verified once, that says its variant). The other layouts load directly through
    the same reader and checks, detected from their key names: torchvision ResNet names,
    Hugging Face transformers ``ResNetModel`` names, and the LeRobot/HIL-SERL ResNet-10
    (``helper2424/resnet10``), as safetensors or as a PyTorch zip archive read with
    ``torch.load(weights_only=True)``; see :mod:`robot_rl.agents.pretrained`. A file
    that does not fit is one error line naming the file and the first key that differs.

    ``resnet_variant`` must match the weights: ``torchvision`` (BatchNorm; torchvision
    and transformers files) or ``hil_serl`` (GroupNorm and JAX ``SAME`` padding;
    LeRobot/HIL-SERL files). Without ``pretrained_path`` the backbone starts random.
    """

    kind: Literal["small", "resnet10"] = "small"
    pretrained_path: Optional[str] = None
    resnet_variant: Literal["torchvision", "hil_serl"] = param(
        "torchvision", doc="resnet10 network: torchvision (BatchNorm) or hil_serl (GroupNorm, SAME padding; LeRobot)")
    freeze_backbone: bool = True
    cache_features: bool = True
    channels: tuple[int, ...] = param((32, 32, 32, 32), min=1, max=1024, doc="small encoder conv widths")
    strides: tuple[int, ...] = param((2, 2, 2, 1), min=1, max=4, doc="small encoder conv strides")
    latent_dim: int = param(256, min=1, max=4096, doc="per-camera feature size after the trainable head")
    spatial_features: int = param(8, min=1, max=256, doc="learned spatial embeddings per channel (resnet10 head)")
    augment: Literal["shift", "none"] = "shift"
    shift_pad: int = param(4, min=0, max=32, doc="DrQ random-shift padding in pixels")

    def __post_init__(self) -> None:
        if len(self.channels) != len(self.strides):
            raise ValueError("encoder.channels and encoder.strides must have the same length")


@dataclass
class AgentConfig:
    """SAC with the RLPD choices, plus an optional discrete gripper critic."""

    hidden_dims: tuple[int, ...] = param((256, 256), min=1, max=4096)
    num_critics: int = param(2, min=1, max=64, doc="size of the critic ensemble")
    num_min_qs: int = param(2, min=1, max=64, doc="random subset of target critics the backup takes the min over")
    critic_layer_norm: bool = True
    critic_actor_ratio: int = param(1, min=1, max=100, doc="critic updates per actor/temperature update")
    actor_lr: float = param(3e-4, min=0.0, max=1.0)
    critic_lr: float = param(3e-4, min=0.0, max=1.0)
    temperature_lr: float = param(3e-4, min=0.0, max=1.0)
    discount: float = param(0.97, min=0.0, max=1.0)
    tau: float = param(0.005, min=0.0, max=1.0, doc="polyak factor of the target critics")
    n_step: int = param(1, min=1, max=20, doc="n-step TD targets (1: plain SAC/RLPD)")
    init_temperature: float = param(0.01, min=1e-8, max=100.0,
                                    doc="HIL-SERL: 0.01; a high start keeps early policies random "
                                        "for thousands of updates")
    target_entropy: Optional[float] = param(None, min=-100.0, max=100.0, doc="null means -(continuous action dims) / 2")
    backup_entropy: bool = param(False,
                                 doc="add the entropy bonus to the TD target (off: HIL-SERL; it swamps sparse rewards)")
    log_std_min: float = param(-5.0, min=-20.0, max=2.0, doc="lower clip of the policy's log std")
    log_std_max: float = param(2.0, min=-5.0, max=5.0, doc="upper clip of the policy's log std")
    normalize_state: bool = param(True, doc="standardise the state vector with running statistics")
    gripper_critic: bool = param(False, doc="a 3-action DQN critic (close, stay, open) drives the last action dim")
    gripper_epsilon: float = param(0.0, min=0.0, max=1.0, doc="random gripper action probability while collecting")
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    base: BaseConfig = field(default_factory=BaseConfig)  # RL on top of a base policy (robot_rl.config.base_rl)
    residual: ResidualConfig = field(default_factory=ResidualConfig)
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)

    def __post_init__(self) -> None:
        if self.num_min_qs > self.num_critics:
            raise ValueError(f"num_min_qs ({self.num_min_qs}) cannot exceed num_critics ({self.num_critics})")
        if self.log_std_min >= self.log_std_max:
            raise ValueError(f"log_std_min ({self.log_std_min}) must be below log_std_max ({self.log_std_max})")


@dataclass
class WandbConfig:
    """Weights & Biases logging (``train.wandb``): off by default and never required.

    On, the run's config, every scalar that goes to TensorBoard and each evaluation's
    video also go to one W&B run per process (a resumed run starts another, named the
    same). It needs the ``wandb`` extra: ``scripts/setup.sh wandb``.
    """

    enabled: bool = param(False, doc="also log to W&B (needs the wandb extra: scripts/setup.sh wandb)")
    project: str = param("robot_rl", doc="W&B project the runs go to")
    entity: Optional[str] = param(None, doc="W&B user or team; null: the logged-in user's default")
    name: Optional[str] = param(None, doc="W&B run name; null: the run directory's name")
    mode: Literal["online", "offline"] = param(
        "online", doc="online: stream to the W&B server (after 'wandb login'); offline: write only under dir, "
                      "upload later with 'wandb sync'")
    dir: Optional[str] = param(None, doc="folder W&B writes its wandb/ files in; null: the run directory")

    def __post_init__(self) -> None:
        if not self.project.strip():
            raise ValueError("project must not be empty")


@dataclass
class ReplayLogConfig:
    """How much of the replay log (``<run_dir>/replay/``, one file per finished episode) stays on disk.

    Never pruned, whatever the bounds: the newest episodes that fill the online buffer
    (``train.replay_capacity`` frames: what a resume reads back), every episode with an
    intervened step (human data, the scarcest there is: it also feeds the demo buffer), and
    episodes a resume still needs (those logged after the last checkpoint). Older
    episodes are deleted, whole files, oldest first, while the log is larger than
    ``max_mb`` or they are older than ``max_age_steps``. Null for both: keep what the
    buffers can hold and nothing more. ``keep_all`` keeps every episode forever (the log
    then grows with the run: 181 B per step from state, about 6.4 KB at 2x32^2 pixels).
    """

    max_mb: Optional[float] = param(None, min=0.001, max=1e9,
                                    doc="keep older episodes too while the log is at most this many MB "
                                        "(null: only what the buffers can hold)")
    max_age_steps: Optional[int] = param(None, min=1, max=10**12,
                                         doc="keep older episodes too while fewer env steps than this were "
                                             "logged after them (null: no age bound)")
    keep_all: bool = param(False, doc="never prune (the log grows with the run)")


@dataclass
class TrainConfig:
    """One single-process training run (and the learner half of the learning plane).

    ``utd_ratio`` is critic updates per online env step; it is enforced by counting,
    so results do not depend on machine speed. Each critic update samples its own
    batch (``batch_size``, ``demo_fraction`` of it from the demo buffer).
    """

    total_env_steps: int = param(20_000, min=0, max=10**9)
    utd_ratio: float = param(2.0, min=0.0, max=100.0)
    learning_starts: int = param(100, min=0, max=10**9, doc="online steps collected before the first update")
    random_steps: int = param(0, min=0, max=10**9, doc="uniform random actions at the start of a fresh run")
    batch_size: int = param(256, min=1, max=65_536)
    demo_fraction: float = param(0.5, min=0.0, max=1.0)
    replay_capacity: int = param(200_000, min=2, max=10**7, doc="online buffer size, in frames")
    demo_capacity: int = param(50_000, min=2, max=10**7, doc="demo buffer size, in frames (demos + interventions)")
    demos: Optional[str] = param(None, doc="a demo directory written by 'robot-rl record-demos'")
    scripted_demos: int = param(20, min=0, max=10_000,
                                doc="when demos is null: record this many scripted demos first (sim)")
    scripted_demo_noise: float = param(0.0, min=0.0, max=1.0, doc="action noise of those scripted demos")
    eval_every: int = param(2000, min=0, max=10**9, doc="env steps between evaluations; 0 disables")
    eval_episodes: int = param(10, min=0, max=10_000)
    eval_seed: int = param(10_000, min=0, max=2**32 - 1, doc="eval episode i resets with seed eval_seed + i")
    eval_video_episodes: int = param(2, min=0, max=10_000,
                                     doc="record the first N episodes of each evaluation (all cameras side by side, "
                                         "outcome marked) to <run_dir>/videos/eval_<env steps>.mp4, TensorBoard "
                                         "and W&B; 0: no video")
    checkpoint_every: int = param(5000, min=0, max=10**9,
                                  doc="env steps between checkpoints (taken at episode ends); 0: only at the end")
    log_every: int = param(500, min=1, max=10**9, doc="env steps between TensorBoard scalar writes of losses")
    run_dir: str = "runs/default"
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    torch_threads: int = param(1, min=0, max=1024,
                               doc="1 suits a small CPU the env shares (small matmuls gain nothing from 2); "
                                   "0: PyTorch default")
    prefetch: Literal["auto", "on", "off"] = param(
        "auto", doc="prepare the next batches (replay copy, pinned memory, device copy) on background threads "
                    "while the update runs; the run is the same either way. auto: on with CUDA, off on a CPU")
    prefetch_depth: int = param(2, min=1, max=16, doc="batches prepared ahead when prefetching (one thread each)")
    compile: bool = param(False, doc="torch.compile the update's loss computations (the first updates wait "
                                     "for compilation: tens of seconds)")
    precision: Literal["float32", "bf16"] = param(
        "float32", doc="bf16: autocast the encoder and hidden layers to bfloat16 (GPUs with compute capability "
                       ">= 8.0, or a CPU); Q outputs, log-probs, losses and optimizer state stay float32")
    progress: bool = True
    stop_at_success: Optional[float] = param(None, min=0.0, max=1.0,
                                             doc="stop once an evaluation reaches this success rate")
    wandb: WandbConfig = field(default_factory=WandbConfig)
    replay_log: ReplayLogConfig = field(default_factory=ReplayLogConfig)


def check_agent_env(agent: AgentConfig, active_dims: list[str], file: str = "config") -> None:
    """Settings that only make sense with the env's action layout (raises ConfigError)."""
    from robot_rl.errors import ConfigError

    if agent.gripper_critic and "gripper" not in active_dims:  # the env puts the gripper last
        raise ConfigError(f"{file}: agent.gripper_critic needs 'gripper' in env.active_dims "
                          f"(they are {list(active_dims)})")
