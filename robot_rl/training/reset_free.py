"""Forward-backward practice: two policies take turns on one scene, no human, no teleport.

One MuJoCo world, two ``RobotEnv``s over it: the forward env runs the task, the backward
env runs its :mod:`backward task <robot_rl.reset.backward>` (each task's is in its folder,
``robot_rl/tasks/<task>/backward.py``).
:class:`ForwardBackward` steps them in turn and decides between episodes what happens
next, from the scene as it is:

* after a forward episode, the backward policy runs if the scene is a backward start
  (a pick task: the object is held up; a peg task: always);
* otherwise, and after a backward episode, the forward policy runs if the objects are
  a valid forward start (a pick task: the object rests inside its range); if not, the
  backward policy goes (again) if the scene is a backward start, or after a scripted
  *pick-up* of the object where the task has one (a pick task: the object was pushed
  out of range); at most ``max_backward_in_row`` backward episodes run in a row, then the
  forward task's reset puts everything back;
* before a forward episode: if the objects are a valid forward start, the arm is
  settled where it is (a *hand-over*) when it is in the start region, or else given a
  scripted robot reset (after a failed forward episode, letting the policy retry from
  wherever it failed would leave it practising from states it drifts into and never
  leaves, such as a corner of the box); if the objects are no valid start (the
  backward policy failed ``max_backward_in_row`` times), the scripted task reset puts
  them back (a *recovery*, ``reset.forward_backward.recovery``);
* before a backward episode: a hand-over, and the backward task draws a new goal.

Every one of those moves goes through the controller like a policy action, and every
one is counted (:class:`PracticeReport`). The sim shortcut runs exactly once, to set up
the freshly built world; :attr:`ForwardBackward.teleports` counts any later teleport
(there are none; tests assert it).

:class:`ForwardBackward` only steps envs and hands out ``Step``s; what acts (scripted
experts to record demos, or learning agents) is up to the caller, see
:func:`practice` and :class:`AgentPolicy`.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from robot_rl.config import Config
from robot_rl.data.rollout import ActingPolicy, ActorLoop
from robot_rl.data.transition import Step
from robot_rl.reset.backward import BackwardSpec, BackwardTask
from robot_rl.reset.motion import ResetError
from robot_rl.reset.stats import ResetStats

log = logging.getLogger("robot_rl.reset")

FORWARD, BACKWARD = "forward", "backward"


@dataclass
class DirectionStats:
    """Episodes of one direction: ``history`` is ``(sim time at the end, success)`` per episode."""

    episodes: int = 0
    successes: int = 0
    steps: int = 0
    history: list[tuple[float, bool]] = field(default_factory=list)

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0

    def window_rates(self, start: float, end: float, windows: int) -> list[float | None]:
        """Success rate in each of ``windows`` equal slices of sim time ``[start, end)``."""
        edges = np.linspace(start, end, windows + 1)
        out: list[float | None] = []
        for lo, hi in zip(edges[:-1], edges[1:]):
            hits = [s for t, s in self.history if lo <= t < hi or (hi == edges[-1] and t >= hi)]
            out.append(round(float(np.mean(hits)), 3) if hits else None)
        return out


@dataclass
class PracticeReport:
    forward: DirectionStats = field(default_factory=DirectionStats)
    backward: DirectionStats = field(default_factory=DirectionStats)
    handovers: int = 0  # arm settled in place, nothing moved
    robot_resets: int = 0  # scripted robot reset (the objects were fine)
    recoveries: int = 0  # scripted task reset (the robot moved the objects back)
    escalations: int = 0  # a hand-over or robot reset failed, so the task reset ran
    pick_ups: int = 0  # scripted pick-ups of objects out of range, handed to the backward policy
    reset_totals: ResetStats = field(default_factory=lambda: ResetStats(kind="total", resets=0))
    reset_sim_s: float = 0.0

    def direction(self, name: str) -> DirectionStats:
        return self.forward if name == FORWARD else self.backward


class ForwardBackward:
    """Two envs on one world, stepped in turn (see the module docstring).

    Contract: :meth:`step` runs one env step of the direction whose turn it is (starting
    that direction's episode first if needed, which runs the hand-over or reset) and
    returns ``(direction, step)``; episodes are never interleaved. Policies are set with
    :meth:`set_policies` and can be swapped between episodes.
    """

    def __init__(self, cfg: Config, seed: int = 0) -> None:
        from robot_rl.assemble import make_env
        from robot_rl.envs import EnvParts
        from robot_rl.sim import build_world
        from robot_rl.tasks import make_task

        self.cfg = cfg
        cams = list(cfg.env.cameras) if cfg.env.obs_mode != "state" else []
        self.world = world = build_world(make_task(cfg), cams)
        self.task = task = world.task
        self.spec: BackwardSpec = task.make_backward(cfg)
        self.backward_task: BackwardTask = self.spec.backward_class(task, cfg)
        self.forward_env = make_env(cfg, parts=EnvParts(world.robot, dict(world.cameras), world, task))
        bcfg = copy.deepcopy(cfg)
        bcfg.env.max_episode_steps = cfg.reset.forward_backward.backward_max_steps
        self.backward_env = make_env(bcfg, parts=EnvParts(world.robot, dict(world.cameras), world,
                                                          self.backward_task))
        self.task_reset = task.make_reset(cfg)
        self.robot_reset = self.task_reset.robot_reset
        self.report = PracticeReport()
        self.rng = np.random.default_rng(seed + 11)

        # The one teleport: set the freshly built world up. Later ones are counted.
        task.teleport(np.random.default_rng(seed))
        self.task_reset.set_up = True
        self.teleports = 0
        original = task.teleport

        def counting_teleport(rng: np.random.Generator) -> None:
            self.teleports += 1
            original(rng)

        task.teleport = counting_teleport
        task.reset_routine = self._before_forward
        self.backward_task.reset_routine = self._before_backward

        self.loops = {FORWARD: ActorLoop(self.forward_env, _Unset(), seed=seed),
                      BACKWARD: ActorLoop(self.backward_env, _Unset(), seed=seed + 1, first_episode_id=1_000_000)}
        self.turn = FORWARD
        self._pick_up_first = False
        self._backward_in_row = 0

    # --- policies ---------------------------------------------------------------------

    def set_policies(self, forward: ActingPolicy, backward: ActingPolicy) -> None:
        if any(loop.in_episode for loop in self.loops.values()):
            raise RuntimeError("policies are swapped between episodes only")
        self.loops[FORWARD].policy = forward
        self.loops[BACKWARD].policy = backward

    @property
    def in_episode(self) -> bool:
        return self.loops[self.turn].in_episode

    # --- stepping ---------------------------------------------------------------------

    def step(self) -> tuple[str, Step]:
        direction = self.turn
        loop = self.loops[direction]
        step = loop.step()
        if step.last:
            stats = self.report.direction(direction)
            stats.episodes += 1
            stats.successes += int(step.success)
            stats.steps += loop.last_episode.length
            stats.history.append((self.world.now(), bool(step.success)))
            self.turn = self._next_turn(direction)
        return direction, step

    def run_episode(self) -> tuple[str, list[Step]]:
        """Step until the current direction's episode ends."""
        direction, step = self.step()
        steps = [step]
        while not step.last:
            _, step = self.step()
            steps.append(step)
        return direction, steps

    # --- between episodes (the tasks' reset routines) -------------------------------

    def _recorded(self, routine: Callable[[], Any]) -> None:
        """Run one between-episode routine and add its statistics, even when it fails."""
        recorder = self.robot_reset.recorder
        before = recorder.stats
        try:
            routine()
        finally:
            if recorder.stats is not before:  # the routine started (and ended) a record
                self.report.reset_totals.add(recorder.stats)
                self.report.reset_sim_s += recorder.stats.duration_s

    def _settle(self) -> None:
        """Hand over: stream the pose the arm is at until it is at rest, then hold it."""
        rr = self.robot_reset
        rr.begin("handover")
        try:
            rr.runner.rest()
        finally:
            rr.end()
        self.report.handovers += 1

    def _robot_reset(self, rng: np.random.Generator) -> None:
        if self.spec.task_reset_first:
            self.task_reset.run(rng)  # e.g. pull a peg out first, then the robot reset
        else:
            self.robot_reset.run(rng, gripper=self.task.start_gripper(), release_first=True)
        self.report.robot_resets += 1

    def _before_forward(self, rng: np.random.Generator) -> None:
        if self.spec.forward_ready():
            try:
                if self.spec.arm_ready():
                    self._recorded(self._settle)
                else:
                    self._recorded(lambda: self._robot_reset(rng))
                return
            except ResetError as err:  # e.g. a peg jammed in the hole: the full task reset next
                log.warning("forward-backward: %s; trying the scripted task reset", err)
                self.report.escalations += 1
        if self.cfg.reset.forward_backward.recovery == "stop":
            raise ResetError("forward-backward: the scene is no valid start and reset.forward_backward.recovery "
                             "is 'stop'")
        log.info("forward-backward: the scene is no valid start; scripted task reset")
        self._recorded(lambda: self.task_reset.run(rng))  # a ResetError here needs a person
        self.report.recoveries += 1

    def _next_turn(self, finished: str) -> str:
        """Who goes next after an episode of ``finished`` (see the module docstring)."""
        self._backward_in_row = self._backward_in_row + 1 if finished == BACKWARD else 0
        if finished == FORWARD and self.spec.backward_ready():
            return BACKWARD
        if self.spec.forward_ready():
            return FORWARD
        if self._backward_in_row >= self.cfg.reset.forward_backward.max_backward_in_row:
            return FORWARD  # its reset routine runs the full scripted task reset
        if self.spec.backward_ready():
            return BACKWARD  # e.g. the cube is still held up: the backward policy goes on
        if self.spec.can_pick_up:
            # A scripted pick-up makes the scene a backward start, and the backward
            # policy practises putting the object back.
            self._pick_up_first = True
            return BACKWARD
        return FORWARD

    def _before_backward(self, rng: np.random.Generator) -> None:
        if self._pick_up_first:
            self._pick_up_first = False

            def pick_up() -> None:
                rr = self.robot_reset
                rr.begin("pick-up")
                try:
                    self.task_reset.pick_up()
                finally:
                    rr.end()

            self._recorded(pick_up)  # a ResetError here needs a person
            self.report.pick_ups += 1
        self._recorded(self._settle)

    def close(self) -> None:
        self.forward_env.close()


class _Unset:
    def act(self, obs: Any) -> np.ndarray:
        raise RuntimeError("ForwardBackward.set_policies() was not called")


class AgentPolicy:
    """A learner's current policy as the actor sees it: uniform random for the first
    ``random_steps`` online steps, then sampled from the SAC actor with its own generator."""

    def __init__(self, learner: Any, action_shape: tuple[int, ...], random_steps: int = 0, seed: int = 0) -> None:
        import torch

        self.learner = learner
        self.action_shape = action_shape
        self.random_steps = random_steps
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator(device=learner.agent.device)
        self.generator.manual_seed(seed)

    def act(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        if self.learner.env_steps < self.random_steps:
            return self.rng.uniform(-1.0, 1.0, self.action_shape).astype(np.float32)
        return self.learner.agent.policy.act(obs, deterministic=False, generator=self.generator)


def collect_demos(fb: ForwardBackward, forward_policy: ActingPolicy, backward_policy: ActingPolicy,
                  episodes: int, max_episodes: int | None = None) -> dict[str, list[list[Step]]]:
    """Run ``forward_policy``/``backward_policy`` (scripted experts) reset-free until each
    direction has ``episodes`` successful episodes; returns them per direction."""
    fb.set_policies(forward_policy, backward_policy)
    demos: dict[str, list[list[Step]]] = {FORWARD: [], BACKWARD: []}
    limit = max_episodes if max_episodes is not None else 6 * episodes
    played = 0
    while min(len(demos[FORWARD]), len(demos[BACKWARD])) < episodes and played < limit:
        direction, steps = fb.run_episode()
        played += 1
        if steps[-1].success and len(demos[direction]) < episodes:
            demos[direction].append(steps)
    return demos


@dataclass
class PracticeResult:
    report: PracticeReport
    sim_s: float
    wall_s: float
    updates: dict[str, int]
    env_steps: dict[str, int]


def practice(fb: ForwardBackward, learners: dict[str, Any], sim_seconds: float,
             policies: dict[str, ActingPolicy] | None = None,
             on_episode: Callable[[str, Step, ForwardBackward], None] | None = None) -> PracticeResult:
    """Practise for ``sim_seconds`` of sim time: each direction's steps go to its learner
    (``learners[direction].ingest`` then ``.train()``), which keeps its own UTD ratio.

    Ends at the first episode end after the time is up, never mid-episode.
    """
    if policies is None:
        policies = {d: AgentPolicy(learners[d], fb.loops[d].env.action_space.shape) for d in (FORWARD, BACKWARD)}
    fb.set_policies(policies[FORWARD], policies[BACKWARD])
    start_sim, start_wall = fb.world.now(), time.perf_counter()
    while fb.in_episode or fb.world.now() - start_sim < sim_seconds:
        direction, step = fb.step()
        learner = learners[direction]
        learner.ingest(step)
        learner.train()
        if step.last and on_episode is not None:
            on_episode(direction, step, fb)
    return PracticeResult(report=fb.report, sim_s=fb.world.now() - start_sim, wall_s=time.perf_counter() - start_wall,
                          updates={d: learners[d].updates_done for d in learners},
                          env_steps={d: learners[d].env_steps for d in learners})
