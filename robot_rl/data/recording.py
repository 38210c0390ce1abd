"""Recording demonstrations from a source into a demo directory (see :mod:`robot_rl.data.demos`).

A *source* is whatever produces the actions: the scripted expert in sim, or a person
with a SpaceMouse, keyboard or gamepad. Sources are looked up by name in :data:`SOURCES`;
a module that provides a new one calls :func:`register_source`. A source factory gets
the env and the config and returns an object with ``act(obs) -> action`` (and
optionally ``reset()`` at each episode start and ``close()``).

Human sources (``spacemouse``, ``keyboard``, ``gamepad``) need the env that
:func:`robot_rl.assemble.make_recording_env` builds: the actor's env with
:class:`~robot_rl.envs.intervention.HumanIntervention` outermost, reading the device
``intervention.device`` names (:func:`human_config` makes it name the source). The
source itself is :class:`HoldPolicy` (zero motion, gripper kept), so the arm moves only
while the person moves the device, and every step the person drives is recorded with
their executed action and ``intervened`` set. The person ends an episode with the
success or failure key/button (or the time limit ends it); the stop key ends the
recording, dropping the episode in flight and keeping every one already written.

The same keep/drop rule serves the actor node on a robot (:class:`EpisodeSaver`):
successful episodes are written the moment they end, failed ones only when asked,
and an episode cut short by a stop never.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.data.demos import DemoWriter
from robot_rl.data.rollout import ActorLoop
from robot_rl.data.transition import Step
from robot_rl.errors import RobotRLError

SourceFactory = Callable[[gym.Env, Config], Any]
SOURCES: dict[str, SourceFactory] = {}
KNOWN_SOURCES = ("scripted", "spacemouse", "keyboard", "gamepad")
HUMAN_SOURCES = ("spacemouse", "keyboard", "gamepad")


def register_source(name: str, factory: SourceFactory) -> None:
    SOURCES[name] = factory


def make_source(name: str, env: gym.Env, cfg: Config) -> Any:
    if name not in SOURCES:
        if name in KNOWN_SOURCES:
            raise RobotRLError(f"demo source '{name}' is not available in this installation "
                               f"(available: {', '.join(sorted(SOURCES))})")
        raise RobotRLError(f"unknown demo source '{name}' (known: {', '.join(KNOWN_SOURCES)})")
    return SOURCES[name](env, cfg)


# --- the sources ----------------------------------------------------------------------


def _scripted(env: gym.Env, cfg: Config) -> Any:
    """The sim task's scripted expert (the env's task hands it out: data knows no task)."""
    if cfg.robot.backend != "sim":
        raise RobotRLError("the scripted source needs the sim (robot.backend: sim); use spacemouse, keyboard or "
                           "gamepad")
    return env.unwrapped.task.make_expert(env, noise=cfg.train.scripted_demo_noise, seed=cfg.seed)


class HoldPolicy:
    """The action that keeps the arm where it is: zero motion, gripper kept as it is.

    The "policy" of a human recording: only the person's device moves the arm (their
    command replaces this action while they intervene). With ``hz``, :meth:`act` also
    paces the loop at ``hz`` steps per second of wall time: an in-process sim runs as
    fast as the CPU, and a person needs the robot's real control rate to steer. Over
    topics the env paces itself; leave ``hz`` None there.
    """

    def __init__(self, env: gym.Env, hz: float | None = None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.env = env
        self.period = None if not hz else 1.0 / hz
        self._clock, self._sleep = clock, sleep
        self._next: float | None = None

    def reset(self) -> None:
        self._next = None

    def act(self, obs: Any) -> np.ndarray:
        from robot_rl.envs.wrappers import outer_action

        if self.period is not None:
            now = self._clock()
            if self._next is not None and now < self._next:
                self._sleep(self._next - now)
                now = self._next
            self._next = now + self.period
        return outer_action(self.env, np.zeros(7))  # 7-D: x y z rx ry rz gripper; 0 keeps the gripper


def _is_human_env(env: gym.Env) -> bool:
    from robot_rl.envs.intervention import HumanIntervention

    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, HumanIntervention):
            return True
        layer = layer.env
    return False


def _human(name: str) -> SourceFactory:
    def factory(env: gym.Env, cfg: Config) -> HoldPolicy:
        if not _is_human_env(env):
            raise RobotRLError(f"the {name} source needs an env that reads the {name} "
                               "(build it with robot_rl.assemble.make_recording_env)")
        return HoldPolicy(env, hz=cfg.env.control_hz if cfg.robot.backend == "sim" else None)

    return factory


register_source("scripted", _scripted)
for _name in HUMAN_SOURCES:
    register_source(_name, _human(_name))


def human_config(cfg: Config, source: str) -> Config:
    """``cfg`` with ``intervention.device`` naming ``source``.

    A device setting that already includes it (``spacemouse+keyboard`` for either source)
    is kept: the SpaceMouse moves and the keyboard labels.
    """
    if source in cfg.intervention.device.split("+"):
        return cfg
    return dataclasses.replace(cfg, intervention=dataclasses.replace(cfg.intervention, device=source))


#: Button numbers of an Xbox-layout pad under Linux's xpad driver, for the controls line.
PAD_NAMES = {0: "A", 1: "B", 2: "X", 3: "Y", 4: "LB", 5: "RB", 6: "Back", 7: "Start"}


def controls_hint(cfg: Config) -> str:
    """One line naming the keys and buttons that move, label, pause and stop (``cfg.intervention``)."""
    icfg = cfg.intervention
    devices = icfg.device.split("+")
    parts: list[str] = []
    labels: dict[str, str] = {}
    if "spacemouse" in devices:
        side = {0: "left", 1: "right"}
        buttons = ", ".join(f"{action.replace('_', ' ')}: button {i}" + (f" ({side[i]})" if i in side else "")
                            for action, i in sorted(icfg.spacemouse.buttons.items(), key=lambda kv: kv[1]))
        parts.append("SpaceMouse: move the puck to take over" + (f"; {buttons}" if buttons else ""))
        for action, i in icfg.spacemouse.buttons.items():
            labels.setdefault(action, f"SpaceMouse button {i}")
    if "gamepad" in devices:
        pad = icfg.gamepad.buttons.bound()
        buttons = ", ".join(f"{action.replace('_', ' ')}: button {i}" + (f" ({PAD_NAMES[i]})" if i in PAD_NAMES else "")
                            for action, i in sorted(pad.items(), key=lambda kv: kv[1])
                            if action not in ("success", "failure", "pause", "stop"))
        parts.append("gamepad: move a stick to take over" + (f"; {buttons}" if buttons else ""))
        for action, i in pad.items():
            labels.setdefault(action, f"gamepad button {i}" + (f" ({PAD_NAMES[i]})" if i in PAD_NAMES else ""))
    if "keyboard" in devices:
        keys = icfg.keyboard.keys
        pairs = [("forward/back", keys.forward, keys.back), ("left/right", keys.left, keys.right),
                 ("up/down", keys.up, keys.down)]
        if any(d in cfg.env.active_dims for d in ("rx", "ry", "rz")):
            pairs += [("tilt", keys.tilt_forward, keys.tilt_back), ("roll", keys.roll_left, keys.roll_right),
                      ("turn", keys.turn_left, keys.turn_right)]
        moves = ", ".join(f"{what} {a}/{b}" for what, a, b in pairs if a and b)
        extra = [f"{what} {key}" for what, key in [("take over", keys.intervene), ("gripper", keys.gripper_toggle),
                                                    ("close", keys.close_gripper), ("open", keys.open_gripper)] if key]
        parts.append("keyboard: " + ", ".join(filter(None, [moves, *extra])))
        for action in ("success", "failure", "pause", "stop"):
            key = getattr(keys, action)
            if key:
                labels[action] = f"key {key}"
    ends = [f"{action} {labels[action]}" for action in ("success", "failure", "pause", "stop") if action in labels]
    if "success" not in labels:
        ends.append("success: the task's own check")
    if "stop" not in labels:
        ends.append("stop: Ctrl-C")
    steps = cfg.env.max_episode_steps
    ends.append(f"time limit {steps} steps ({steps / cfg.env.control_hz:.3g} s)")
    return "controls: " + "; ".join(parts + [", ".join(ends)])


# --- saving episodes ------------------------------------------------------------------


class EpisodeSaver:
    """Decides which finished episodes go to disk, and writes each as it ends.

    Successful episodes are written; failed ones only with ``keep_failed``; an episode a
    stop cut short (``stopped``) never, as it is neither a success nor a failure. Feed it
    every Step in order (:meth:`add`) or whole episodes (:meth:`finish`).
    """

    def __init__(self, writer: DemoWriter, keep_failed: bool = False) -> None:
        self.writer = writer
        self.keep_failed = keep_failed
        self.saved = 0
        self._steps: list[Step] = []

    def add(self, step: Step, *, stopped: bool = False) -> Path | None:
        """Buffer ``step``; on the last step of an episode, write it if it is kept. Returns the file."""
        if step.step == 0:
            self._steps = []  # an episode that never ended (a dropped one) is gone
        self._steps.append(step)
        if not step.last:
            return None
        episode, self._steps = self._steps, []
        return self.finish(episode, stopped=stopped)

    def finish(self, episode: list[Step], *, stopped: bool = False) -> Path | None:
        if stopped or not (episode[-1].success or self.keep_failed):
            return None
        path = self.writer.write_episode(episode)
        self.saved += 1
        return path


class _EndInfo(gym.Wrapper):
    """Remembers whether the last step was a stop (``info["stop"]``, from the stop key), and
    ends the episode on the step the person's device went away (``info["input_device_lost"]``):
    nobody can steer after it, so holding the arm until the time limit would record nothing."""

    stopped = False
    lost: str | None = None

    def step(self, action: np.ndarray):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.stopped = bool(info.get("stop", False))
        if info.get("input_device_lost") and self.lost is None:
            self.lost = str(info["input_device_lost"])
            truncated = True  # a failed episode unless this very step succeeded
        return obs, reward, terminated, truncated, info


@dataclass
class RecordSummary:
    saved: int
    attempted: int
    successes: int
    steps: int
    stopped: bool = False  # the stop key or Ctrl-C ended the recording
    lost: str | None = None  # the person's device went away (its one-line error); the recording ended


def record(env: gym.Env, source: Any, writer: DemoWriter, episodes: int, *, seed: int = 0,
           only_success: bool = True, max_attempts: int | None = None,
           on_episode: Callable[[int, bool, int], None] | None = None, interruptible: bool = False) -> RecordSummary:
    """Run ``source`` until ``episodes`` episodes are saved (or ``max_attempts`` run out).

    With ``only_success``, failed episodes are discarded. Each kept episode is on disk
    the moment it ends. ``on_episode(saved, success, length)`` is called after each
    finished episode. A stop (the person's stop key, ``info["stop"]``, and with
    ``interruptible`` also Ctrl-C) ends the recording: the episode in flight is
    dropped, the saved ones stay, and the summary says ``stopped``. A person's device
    that goes away ends the episode in flight there (kept by the usual rule: a failure
    unless it succeeded) and then the recording; the summary says ``lost``.
    """
    max_attempts = max_attempts if max_attempts is not None else 3 * episodes + 5
    watch = _EndInfo(env)
    loop = ActorLoop(watch, source, seed=seed)
    saver = EpisodeSaver(writer, keep_failed=not only_success)
    attempted = successes = steps = 0
    stopped = False
    try:
        while saver.saved < episodes and attempted < max_attempts:
            episode = loop.run_episode()
            if watch.stopped:
                stopped = True
                break
            attempted += 1
            steps += len(episode)
            success = bool(episode[-1].success)
            successes += int(success)
            saver.finish(episode)
            if on_episode is not None:
                on_episode(saver.saved, success, len(episode))
            if watch.lost is not None:
                break
    except KeyboardInterrupt:
        if not interruptible:
            raise
        stopped = True
    return RecordSummary(saved=saver.saved, attempted=attempted, successes=successes, steps=steps, stopped=stopped,
                         lost=watch.lost)
