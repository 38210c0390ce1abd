"""Typed config for the node graph: the ``ros:`` section of a session YAML.

It says how the nodes of a training session behave when they run as a ROS 2 graph
(``ros2 launch robot_rl ...`` or ``robot-rl launch ...``, see :mod:`robot_rl.nodes`):
where the actor's actions come from (``policy: human`` with ``demos_dir`` records a
person's demonstrations on a robot; with ``reward_frames_dir``, frames for the reward
classifier labelled by the person's keys), the controller's state rate and watchdog, and how
long the actor waits for the other nodes. The in-process sim env (``robot-rl train``,
``rollout``) ignores this section.

Two watchdogs, on purpose: ``robot.controller.watchdog_s`` is the backend's own, inside
its control loop (the 1 kHz torque loop, the in-process sim); ``ros.watchdog_s`` is the
controller node's, on the target *messages*. The actor re-sends its latest target at
``target_hz`` between its 10 Hz steps, so the node's watchdog can be short (0.1 s) and
still never fires while the actor is alive; when the actor dies, the arm holds within
about ``watchdog_s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from robot_rl.config.loader import param


@dataclass
class RosConfig:
    """The node graph: the actor's policy and episodes, rates, timeouts, which nodes run."""

    policy: Literal["learner", "checkpoint", "expert", "random", "human"] = param(
        "learner", doc="actor: weights from the learner over gRPC, a checkpoint, the scripted expert (sim), "
                       "uniform random actions, or human: the arm holds still and only the person's "
                       "intervention.device moves it (demo recording)")
    checkpoint: Optional[str] = param(None, doc="policy: checkpoint: a robot-rl train or robot-rl learner run "
                                                "directory (it holds checkpoint/state.npz)")
    demos_dir: Optional[str] = param(None, doc="actor: write each finished episode into this demo directory "
                                               "as it ends (appending; not with policy learner)")
    demos_keep_failed: bool = param(False, doc="actor: with demos_dir, keep failed episodes too "
                                               "(default: successful ones only)")
    reward_frames_dir: Optional[str] = param(
        None, doc="actor: record reward-classifier frames into this frame directory (appending), labelled by "
                  "the person's keys: success/failure set the label, pause skips frames, stop ends the session "
                  "(needs a spacemouse or keyboard intervention.device; not with policy learner or demos_dir)")
    episodes: int = param(0, min=0, max=10**9, doc="actor: stop after this many episodes (0: run until stopped)")
    seed: Optional[int] = param(None, min=0, max=2**32 - 1,
                                doc="actor: env and exploration seed; null: the session's seed")
    state_hz: float = param(125.0, min=100.0, max=1000.0,
                            doc="controller / sim: rate of /joint_states and /robot/tcp_* (and sim ground truth)")
    watchdog_s: float = param(0.1, min=0.02, max=2.0,
                              doc="controller / sim: hold the measured pose when no target arrived for this long")
    target_hz: float = param(50.0, min=2.0, max=1000.0,
                             doc="actor: re-send the latest target this often, between steps")
    state_timeout_s: float = param(0.5, min=0.05, max=10.0,
                                   doc="actor: a robot state older than this is a fault (controller gone)")
    image_timeout_s: float = param(1.0, min=0.05, max=30.0, doc="actor: an image older than this is an error")
    input_timeout_s: float = param(1.0, min=0.05, max=30.0,
                                   doc="actor: a /spacenav/twist older than this reads as zero (publisher gone)")
    startup_timeout_s: float = param(60.0, min=1.0, max=600.0,
                                     doc="actor: wait this long for the first robot state, images and the sim")
    reset_timeout_s: float = param(60.0, min=1.0, max=600.0, doc="actor: wait this long for a sim reset")
    input_hz: float = param(100.0, min=10.0, max=1000.0, doc="intervention node: publish rate")
    status_hz: float = param(1.0, min=0.1, max=50.0, doc="every node: rate of its ~/status message")
    input_node: bool = param(True, doc="start robot_rl's intervention node for a spacemouse/keyboard device; "
                                       "false when another node (e.g. spacenav_node) publishes /spacenav/*")
    frame_id: str = param("base", doc="frame of the published TCP pose, twist, wrench and targets")

    def __post_init__(self) -> None:
        if self.watchdog_s <= 2.0 / self.target_hz:
            raise ValueError(f"ros.watchdog_s {self.watchdog_s} must exceed two target periods "
                             f"(2 / ros.target_hz = {2.0 / self.target_hz:.3f} s), or a live actor trips it")
        if not self.frame_id:
            raise ValueError("ros.frame_id must not be empty")
        if self.demos_dir is not None and self.policy == "learner":
            raise ValueError("ros.demos_dir is written by an actor acting on its own (ros.policy human, expert, "
                             "checkpoint or random); with policy learner, interventions go to the learner's "
                             "demo buffer")
        if self.reward_frames_dir is not None and self.policy == "learner":
            raise ValueError("ros.reward_frames_dir is written by an actor acting on its own (ros.policy human, "
                             "expert, checkpoint or random): while it records, the success/failure keys label "
                             "frames instead of ending episodes, which a learning session needs")
        if self.reward_frames_dir is not None and self.demos_dir is not None:
            raise ValueError("ros.reward_frames_dir and ros.demos_dir: record reward frames and demos in separate "
                             "sessions (while frames are recorded, the success/failure keys label frames and do "
                             "not end episodes)")
