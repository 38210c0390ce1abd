"""robot_rl's learner side by side with LeRobot's own SAC (HIL-SERL) on gym-hil's PandaPickCube.

One command, two virtualenvs: LeRobot's SAC learner from its release (``lerobot.rl.learner`` +
``lerobot.rl.actor``, unmodified, talking gRPC on 127.0.0.1) and robot_rl's ``robot-rl train``
with ``env.gym_id``. gym-hil pins an older MuJoCo than robot_rl's, so neither runs in robot_rl's
own venv: ``--lerobot-python`` is a python with lerobot (plus grpcio and gym-hil on
``--lerobot-pythonpath`` where its venv lacks them), ``--robot-rl-python`` a python with robot_rl
and gym-hil::

    python bench/vs_lerobot.py --obs state --block fixed --seeds 0 --env-steps 2000 --eval-every 500
    python bench/vs_lerobot.py --obs state pixels --block fixed random --seeds 0 1 2   # the full table

What both sides share, per (observation, block) setting:

* **the env**: ``gym_hil/PandaPickCube-v0``'s wrappers (end-effector xyz steps of 2.5 cm, a
  gripper action in [0, 2]: open, stay, close) around ``PandaPickCubeBase-v0``, sparse reward,
  100-step episodes, registered here as ``gym_hil/BenchPickCube{Fixed,Random}{State,Pixels}-v0``
  because LeRobot's gym-hil path (``lerobot.rl.gym_manipulator.make_robot_env``) passes no block
  option and always asks for images (``image_obs=True``). The registered env seeds the global
  NumPy RNG on a seeded reset, because gym-hil draws the block's random position from it, renders
  without shadows, reflections and multisampling (about 7x faster on a CPU, the same scene), and
  renders no images in the state setting, where neither policy reads them.
  From pixels both see ``agent_pos`` (18 numbers: joints, velocities, gripper, TCP position) and
  the two cameras: LeRobot's gym-hil path has no ``environment_state`` with images on, so there
  only the images say where a random block is. From state both see ``agent_pos`` with gym-hil's
  ``environment_state`` (the block's position) after it, 21 numbers, so that a random block is
  observed there too, as gym-hil's own state env observes it (the bench env renders no images
  in the state setting, where gym-hil gives ``environment_state``; both learners get the one vector).
  ``agent_pos`` is scaled (``state_scale.json`` beside the dataset): each feature's range over
  the demos onto [-1, 1], LeRobot's MIN_MAX, a range under 0.1 of its unit widened to 0.1. gym-hil
  gives it raw: joints in radians, the TCP in metres (the pick lives within a few centimetres)
  and the gripper as its 0-255 control value. LeRobot's SAC config normalises the state with
  ``dataset_stats``, but its 0.4.4 actor and learner (``lerobot.rl.actor``/``learner``) never
  build the pre/post processors that would: ``SACPolicy`` feeds the state raw into a Linear, a
  LayerNorm and a tanh, so the gripper's 255 swamps the rest and a centimetre of TCP is lost.
  Fed raw, its critic's Q hardly varied from state to state and its actor's mean did not head
  for the block: it won 1 of 60 training episodes in 6,000 env steps (seed 0, initial
  temperature 0.01) and was at 0% at every checkpoint. Scaled, the same run won 13 of 43 in
  3,000, the first at 1,217, and was at 100% at 2,809 (robot_rl: 2,000). Scaling in the env
  gives LeRobot the normalisation its config describes; robot_rl standardises the state with
  its own running mean and std, on which a fixed per-feature scaling has no effect (beyond its
  1e-3 std floor; its seed 0 was at 0, 100, 100% at 1,000 to 3,000 env steps either way).
* **the demos**: ONE LeRobotDataset v3 folder, written by LeRobot's own ``LeRobotDataset``
  writer from a scripted expert (gym-hil has none; this file's ``expert_action`` reads the
  TCP and block positions from the simulator), its states scaled as the env's. The gripper
  action is gym-hil's own [0, 2] (0 open, 1 stay, 2 close; LeRobot's discrete critic's index
  is sent to the env as it is): the recorded actions replayed through LeRobot's actor path
  (``make_processors``, ``step_env_and_process_transition``) lift the block in every demo.
  LeRobot reads it as its offline buffer; robot_rl imports it with
  ``robot_rl.data.lerobot_import`` and then maps the actions from the env's units to its own
  [-1, 1] (the gripper's [0, 2] to [-1, 1]), which is what robot_rl's gym wrapper undoes when
  it acts.
* **the budget and the evaluation**: the same env steps, and ``--eval-episodes`` deterministic
  episodes with the block seeded ``eval_seed + i``. robot_rl evaluates inside its trainer
  every ``--eval-every`` env steps; LeRobot's learner has no evaluation, so its checkpoints
  (every ``--eval-every`` optimisation steps, each with the env step it was taken at) are
  evaluated afterwards by this file with the actor's mean action and the discrete gripper
  critic's argmax.
* **the learner settings both expose**: batch size (the same rows per update: LeRobot's learner
  concatenates a ``batch_size`` batch from its online buffer with one from its offline buffer,
  so it is given half of ``--batch-size`` and both update on ``--batch-size`` rows, half demos),
  discount, UTD ratio, learning starts, learning rates (both 3e-4), critic ensemble of 2,
  256x256 MLPs, a discrete 3-way gripper critic (``num_discrete_actions: 3`` and
  ``agent.gripper_critic``), and the initial temperature (``--init-temperature``, 0.01:
  robot_rl's default and what LeRobot's own gym-hil and HIL-SERL example configs set; its
  ``SACConfig`` default of 1.0 weighs the entropy bonus far above the sparse reward of 1: with
  the scaled state, seed 0 won 0 of 30 training episodes in 3,000 env steps, its Q about 26
  everywhere and its mean action near 0). Both run eager (robot_rl's default; LeRobot's
  ``SACConfig`` compiles its critics by default, which the equal-work figure below measures
  with ``--update-compile``). Everything else is each side's default; nothing is tuned on one
  side only.
* **the update, timed alone** (``--update-speed N``): each side's update on the same rows of
  synthetic data, one torch thread, the sides alternating over 3 rounds so a change in the
  machine's load falls on both: robot_rl's ``Learner.update()`` (sample, critic, gripper critic,
  actor, temperature, targets) and the body of ``lerobot.rl.learner``'s loop as it runs the last
  update of each UTD group (sample from both buffers, critic, discrete critic, actor,
  temperature, each with its gradient clip, then the targets). In-run, robot_rl updates its
  actor at every critic update and LeRobot at every ``utd_ratio``-th, so the in-run rates
  (``update_only_per_s``) do not compare the same work; this does.

Ends with one JSON line: per learner and setting, env steps to 80% and 95% eval success
(median over seeds; null when not reached), wall seconds per 1,000 env steps (robot_rl's
include its in-run evaluations, ``eval_env_steps_in_wall`` of them; LeRobot's include its
checkpoints, each also writing its replay buffer as a dataset), updates/s
(updates over the run's wall time), updates per env step, replay bytes per transition; and a
PNG of both curves per setting in ``--out``; and ``update_speed``, the equal-work update rates.

``--merge A B ...`` makes that line and the PNGs from the runs of earlier ``--out`` folders, for
learners or seeds run as separate bench processes at the same time (the dataset copied into each
folder first, so every run reads the same demos). It refuses runs whose specs differ in budget,
evaluation, update settings, demos, image size, LeRobot's pace or state scaling.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: What this bench reports per learner and setting, in the JSON line's order.
TARGETS = (0.8, 0.95)
OBS_MODES = ("state", "pixels")
BLOCKS = ("fixed", "random")
LEARNERS = ("robot_rl", "lerobot")
#: gym-hil's control rate (control_dt 0.1 s) and episode length (its registration).
FPS = 10
EPISODE_STEPS = 100
#: gym-hil's action bounds with the gripper on: xyz in [-1, 1], gripper 0 open, 1 stay, 2 close.
ACTION_LOW = (-1.0, -1.0, -1.0, 0.0)
ACTION_HIGH = (1.0, 1.0, 1.0, 2.0)
#: ``agent_pos``'s length, and the block position's (gym-hil's ``environment_state``) that the state
#: setting appends to it (:func:`state_dim`).
AGENT_POS_DIM = 18
BLOCK_POS_DIM = 3
#: The network both learners are given: critics in the ensemble, MLP widths (LeRobot's default), and
#: the gripper as a 3-way discrete critic.
NUM_CRITICS = 2
HIDDEN_DIMS = (256, 256)
GRIPPER_CHOICES = 3
#: The narrowest demo range :func:`state_scale_of` maps onto [-1, 1], in the feature's own units
#: (metres, radians, rad/s; the gripper's 0-255 is far wider): 1 cm of TCP travel is then at most 0.2.
STATE_RANGE_FLOOR = 0.1
IMAGE_SIZE = 128  # gym-hil's render size (its GymRenderingSpec), the --image-size default
#: --image-size bounds: LeRobot 0.4.4's default SAC image encoder (four unpadded stride-2 convs, kernels 7, 5, 3
#: and 3) needs at least 39 pixels; 32 fails in its third conv
IMAGE_SIZES = (39, 256)
TASK = "Pick up the cube"
BENCH_ENV = "gym_hil PandaPickCube (Base + EE wrappers)"  # the JSON line's "env"
USAGE_EXIT = 2


class BenchError(Exception):
    """A bench failure the command line reports in one line."""


# ---------------------------------------------------------------------------------------------
# Arguments and the summary (pure Python: the parts the CI test runs without the venvs)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; every figure checked here so a bad one is one line and exit 2."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--lerobot-python",
                   default=os.environ.get("ROBOT_RL_LEROBOT_PYTHON") or os.environ.get("LEROBOT_PYTHON"),
                   help="a python with lerobot (env ROBOT_RL_LEROBOT_PYTHON, else LEROBOT_PYTHON)")
    p.add_argument("--lerobot-pythonpath", default=os.environ.get("LEROBOT_PYTHONPATH", ""),
                   help="prepended to PYTHONPATH for LeRobot's processes: grpcio, gym-hil (env LEROBOT_PYTHONPATH)")
    p.add_argument("--robot-rl-python", default=os.environ.get("ROBOT_RL_GYMHIL_PYTHON"),
                   help="a python with robot_rl and gym-hil (env ROBOT_RL_GYMHIL_PYTHON)")
    p.add_argument("--obs", nargs="+", default=["state"], help=f"of {', '.join(OBS_MODES)}")
    p.add_argument("--block", nargs="+", default=["fixed"], help=f"of {', '.join(BLOCKS)}")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--env-steps", type=int, default=20_000, help="env-step budget of each run")
    p.add_argument("--eval-every", type=int, default=1000)
    p.add_argument("--eval-episodes", type=int, default=20)
    p.add_argument("--eval-seed", type=int, default=10_000)
    p.add_argument("--demos", type=int, default=10, help="scripted expert episodes in the shared dataset")
    p.add_argument("--lerobot-fps", type=int, default=FPS,
                   help="the wall-clock rate LeRobot's actor holds (its env.fps, an integer; gym-hil's own 10 Hz by "
                        "default): lower it where LeRobot's learner cannot make --utd updates per env step at 10 Hz")
    p.add_argument("--image-size", type=int, default=IMAGE_SIZE,
                   help="pixels: both cameras rendered N x N by gym-hil itself (its render_spec), for both learners")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--utd", type=int, default=2, help="updates per env step (robot_rl); LeRobot's utd_ratio")
    p.add_argument("--discount", type=float, default=0.97)
    p.add_argument("--learning-starts", type=int, default=100)
    p.add_argument("--init-temperature", type=float, default=0.01,
                   help="SAC's initial temperature on both sides (LeRobot's own gym-hil and HIL-SERL example "
                        "configs and robot_rl's default: 0.01; LeRobot's SACConfig default is 1.0)")
    p.add_argument("--update-speed", type=int, default=200,
                   help="updates timed per side and round for the equal-work update speed (0: skip it)")
    p.add_argument("--update-speed-pixels", type=int, default=10,
                   help="with --obs pixels: updates timed per side and round from the two cameras (0: skip it)")
    p.add_argument("--no-runs", action="store_true",
                   help="only the equal-work update speed: no demos, no learning runs")
    p.add_argument("--update-compile", action="store_true",
                   help="also time both updates under torch.compile (robot_rl's train.compile, LeRobot's "
                        "use_torch_compile)")
    p.add_argument("--learners", nargs="+", default=list(LEARNERS), help=f"of {', '.join(LEARNERS)}")
    p.add_argument("--out", default="runs/bench_vs_lerobot")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="no runs: the runs of earlier --out folders (learners or seeds run as separate bench "
                        "processes) in one summary, PNG and JSON line in --out, refused unless all were run under "
                        "one protocol; the other flags are not read")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is None and args.merge is None:
        check_args(args)
    return args


def check_args(args: argparse.Namespace) -> None:
    """Refuse what cannot make a comparison: one :class:`BenchError` line naming the flag."""
    for flag, values, allowed in (("--obs", args.obs, OBS_MODES), ("--block", args.block, BLOCKS),
                                  ("--learners", args.learners, LEARNERS)):
        bad = [v for v in values if v not in allowed]
        if bad or len(set(values)) != len(values):
            raise BenchError(f"{flag}: {bad or values} is not a list of distinct values of {', '.join(allowed)}")
    if len(set(args.seeds)) != len(args.seeds) or any(s < 0 for s in args.seeds):
        raise BenchError(f"--seeds: {args.seeds} must be distinct non-negative integers")
    for flag, value, low in (("--env-steps", args.env_steps, 1), ("--eval-every", args.eval_every, 1),
                             ("--eval-episodes", args.eval_episodes, 1), ("--demos", args.demos, 1),
                             ("--batch-size", args.batch_size, 2), ("--utd", args.utd, 1),
                             ("--update-speed", args.update_speed, 0),
                             ("--update-speed-pixels", args.update_speed_pixels, 0),
                             ("--learning-starts", args.learning_starts, 0), ("--eval-seed", args.eval_seed, 0),
                             ("--image-size", args.image_size, IMAGE_SIZES[0])):
        if value < low:
            raise BenchError(f"{flag}: {value} is below {low}")
    if args.image_size > IMAGE_SIZES[1]:
        raise BenchError(f"--image-size: {args.image_size} is above {IMAGE_SIZES[1]}")
    if args.batch_size % 2:
        raise BenchError(f"--batch-size: {args.batch_size} is odd; half of each batch comes from the demos")
    if args.eval_every > args.env_steps:
        raise BenchError(f"--eval-every: {args.eval_every} is more than --env-steps {args.env_steps}: no evaluation")
    if not (0.0 < args.discount < 1.0):  # NaN fails this too
        raise BenchError(f"--discount: {args.discount} is not in (0, 1)")
    if not (1 <= args.lerobot_fps <= 1000):
        raise BenchError(f"--lerobot-fps: {args.lerobot_fps} is not in [1, 1000]")
    if not (0.0 < args.init_temperature <= 100.0):
        raise BenchError(f"--init-temperature: {args.init_temperature} is not in (0, 100]")
    # LeRobot's python is always needed: its writer records the shared demos
    for flag, python, needed in (("--lerobot-python", args.lerobot_python, True),
                                 ("--robot-rl-python", args.robot_rl_python, "robot_rl" in args.learners)):
        if needed:
            if not python:
                raise BenchError(f"{flag}: not given (nor its environment variable)")
            if not Path(python).is_file():
                raise BenchError(f"{flag}: {python} is not a file")


def steps_to(curve: list[tuple[int, float]], target: float) -> int | None:
    """The first env step whose eval success is at least ``target`` (None: never in ``curve``)."""
    for steps, success in sorted(curve):
        if success >= target:
            return int(steps)
    return None


def median_steps(per_seed: list[int | None], budget: int) -> int | None:
    """Median over seeds of the steps to a target; a seed that never got there counts as more than
    the budget, so the median is None when half or more never did."""
    if not per_seed or 2 * sum(s is None for s in per_seed) >= len(per_seed):
        return None  # (with an even count, half short would otherwise average the budget in)
    return int(statistics.median([budget + 1 if s is None else s for s in per_seed]))


def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


def summarize(runs: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    """Runs (one per learner, setting and seed) into the JSON line's figures.

    A run: ``learner``, ``obs``, ``block``, ``seed``, ``curve`` ([env_steps, success] pairs),
    ``wall_s``, ``env_steps``, ``updates``, ``replay_bytes_per_transition``, optional ``error``.
    """
    out: dict[str, Any] = {}
    keys = sorted({(r["obs"], r["block"], r["learner"]) for r in runs})
    for obs, block, learner in keys:
        mine = [r for r in runs if (r["obs"], r["block"], r["learner"]) == (obs, block, learner)]
        ok = [r for r in mine if not r.get("error")]
        entry: dict[str, Any] = {"seeds": [r["seed"] for r in mine]}
        for target in TARGETS:
            per_seed = [steps_to([tuple(p) for p in r["curve"] if _finite(p[1]) is not None], target) for r in ok]
            entry[f"steps_to_{int(round(target * 100))}"] = median_steps(per_seed, budget) if ok else None
            entry[f"steps_to_{int(round(target * 100))}_per_seed"] = per_seed
        walls = [_finite(r["wall_s"]) for r in ok]
        steps = [r["env_steps"] for r in ok]
        updates = [r["updates"] for r in ok]
        pairs = [(w, s, u) for w, s, u in zip(walls, steps, updates) if w and s and s > 0 and u is not None]
        entry["wall_s_per_1000_env_steps"] = (round(statistics.median([w / s * 1000 for w, s, _ in pairs]), 1)
                                              if pairs else None)
        entry["updates_per_s"] = round(statistics.median([u / w for w, _, u in pairs]), 2) if pairs else None
        hz = [_finite(r.get("update_only_per_s")) for r in ok]
        hz = [h for h in hz if h is not None]
        entry["update_only_per_s"] = round(statistics.median(hz), 1) if hz else None
        entry["updates_per_env_step"] = round(statistics.median([u / s for _, s, u in pairs]), 2) if pairs else None
        rb = [_finite(r.get("replay_bytes_per_transition")) for r in ok]
        rb = [b for b in rb if b is not None]
        entry["replay_bytes_per_transition"] = round(statistics.median(rb)) if rb else None
        entry["eval_env_steps_in_wall"] = max((r.get("eval_env_steps_in_wall", 0) for r in ok), default=0)
        entry["final_success"] = [r["curve"][-1][1] if r["curve"] else None for r in ok]
        errors = [f"seed {r['seed']}: {r['error']}" for r in mine if r.get("error")]
        if errors:
            entry["errors"] = errors
        out.setdefault(f"{obs}_{block}", {})[learner] = entry
    return out


#: What every merged run must share (each run's spec, written beside its log), and what only some share:
#: the image size among the runs from pixels, LeRobot's actor pace among LeRobot's runs, and the state
#: scaling (which the demos fix) among the runs of one setting.
PROTOCOL_KEYS = ("env_steps", "eval_every", "eval_episodes", "eval_seed", "demos", "batch_size", "utd", "discount",
                 "learning_starts", "init_temperature")
#: The file in a run's folder that holds the whole spec it ran with.
SPEC_FILES = {"robot_rl": "train.spec.json", "lerobot": "eval.spec.json"}


def _check_row(row: Any, where: str) -> None:
    """One ``runs.json`` row as :func:`summarize` reads it, or a :class:`BenchError` naming the field."""
    if not isinstance(row, dict):
        raise BenchError(f"{where}: not an object")
    for key, allowed in (("learner", LEARNERS), ("obs", OBS_MODES), ("block", BLOCKS)):
        if row.get(key) not in allowed:
            raise BenchError(f"{where}: {key} {row.get(key)!r} is not one of {', '.join(allowed)}")
    seed = row.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BenchError(f"{where}: seed {seed!r} is not a non-negative integer")
    curve = row.get("curve")
    if not isinstance(curve, list):
        raise BenchError(f"{where}: curve is not a list")
    for point in curve:
        ok = (isinstance(point, list) and len(point) == 2
              and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in point)
              and isinstance(point[0], int) and point[0] >= 0 and 0.0 <= point[1] <= 1.0)  # NaN fails too
        if not ok:
            raise BenchError(f"{where}: curve point {point!r} is not [env steps, success in [0, 1]]")
    for key in ("env_steps", "updates", "eval_env_steps_in_wall", "image_size"):
        value = row.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise BenchError(f"{where}: {key} {value!r} is not a non-negative integer")


def _run_spec_files(folder: Path, row: dict[str, Any]) -> list[Path]:
    """The spec files under ``folder`` that may be a row's: its setting's folder names the image
    size, which rows written before they held ``image_size`` do not say."""
    name = f"{row['learner']}_seed{row['seed']}/{SPEC_FILES[row['learner']]}"
    setting = f"{row['obs']}_{row['block']}"
    if row["obs"] != "pixels":
        candidates = [folder / setting / name]
    elif row.get("image_size") is not None:
        candidates = [folder / f"{setting}_{row['image_size']}px" / name]
    else:
        candidates = sorted(folder.glob(f"{setting}_*px/{name}"))
    return [path for path in candidates if path.is_file()]


def _run_spec(found: list[Path], folder: Path, row: dict[str, Any], where: str) -> dict[str, Any]:
    """The spec a row's run was started with (its budget, evaluation, update settings, demos), from
    the one file :func:`_run_spec_files` found."""
    if len(found) != 1:
        raise BenchError(f"{where}: {len(found)} spec files ({SPEC_FILES[row['learner']]}) for "
                         f"{row['learner']} {row['obs']} {row['block']} seed {row['seed']} under {folder}")
    try:
        spec = json.loads(found[0].read_text())
    except (OSError, ValueError) as err:
        raise BenchError(f"{found[0]}: unreadable ({type(err).__name__})") from None
    if not isinstance(spec, dict):
        raise BenchError(f"{found[0]}: not a JSON object")
    for key in ("obs", "block", "seed"):
        if spec.get(key) != row[key]:
            raise BenchError(f"{found[0]}: {key} {spec.get(key)!r} is not the run's {row[key]!r}")
    for key in PROTOCOL_KEYS:
        value = spec.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or _finite(value) is None or value < 0 \
                or (key == "env_steps" and not (isinstance(value, int) and value > 0)):
            raise BenchError(f"{found[0]}: {key} {value!r} is not a finite non-negative number")
    return spec


def merge_runs(folders: list[Path]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The runs of several ``--out`` folders as one list, with the protocol they share.

    Running each learner (or seed) as its own bench process on a copied dataset divides the wall
    time by the cores it has; the figures are then only comparable if every run had the same
    budget, evaluation, update settings and demos, so this reads each run's own spec and refuses
    a difference in one :class:`BenchError` line naming both files. The folders are only read.
    """
    runs: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], str] = {}
    shared: dict[str, tuple[Any, str]] = {}
    for folder in folders:
        path = folder / "runs.json"
        try:
            rows = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise BenchError(f"{path}: unreadable ({type(err).__name__})") from None
        if not isinstance(rows, list):
            raise BenchError(f"{path}: not a JSON list of runs")
        for i, row in enumerate(rows):
            where = f"{path} run {i}"
            _check_row(row, where)
            key = (row["learner"], row["obs"], row["block"], row["seed"])
            if key in seen:
                raise BenchError(f"{where}: {' '.join(map(str, key))} is also in {seen[key]}")
            seen[key] = where
            found = _run_spec_files(folder, row)
            if row.get("error") and not found:
                runs.append(row)  # a run that failed before its spec was complete: an error, no figures
                continue
            spec = _run_spec(found, folder, row, where)
            scoped = [(k, k) for k in PROTOCOL_KEYS]
            if row["obs"] == "pixels":
                scoped.append(("image_size", "image_size"))
            if row["learner"] == "lerobot":
                scoped.append(("lerobot_fps", "lerobot_fps"))
            scoped.append(("state_scale", f"state_scale of {row['obs']} {row['block']}"))
            for spec_key, name in scoped:
                if spec_key not in spec:
                    raise BenchError(f"{where}: its spec has no {spec_key}")
                first = shared.setdefault(name, (spec[spec_key], where))
                if spec[spec_key] != first[0]:
                    shown = "" if spec_key == "state_scale" else f" {spec[spec_key]!r} (not {first[0]!r})"
                    raise BenchError(f"{where}: {name}{shown} differs from {first[1]}'s")
            for point in row["curve"]:
                if point[0] > spec["env_steps"]:
                    raise BenchError(f"{where}: curve point at {point[0]} env steps is past the budget "
                                     f"{spec['env_steps']}")
            runs.append({**row, **({"image_size": spec["image_size"]} if row["obs"] == "pixels" else {})})
    if "env_steps" not in shared:
        raise BenchError(f"--merge: no run with a spec in {', '.join(str(f) for f in folders)}")
    protocol = {name: value for name, (value, _) in shared.items() if not name.startswith("state_scale")}
    return runs, protocol


def merged_summary(folders: list[Path], out: Path) -> dict[str, Any]:
    """``--merge``: the JSON line (and PNGs and ``runs.json`` in ``out``) of earlier runs together."""
    if any(f.resolve() == out for f in folders):
        raise BenchError(f"--out: {out} is one of the merged folders; its runs.json would be overwritten")
    runs, protocol = merge_runs(folders)
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs.json").write_text(json.dumps(runs, indent=1))
    return {"bench": "vs_lerobot", "env": BENCH_ENV,
            "budget": protocol["env_steps"], "eval_episodes": protocol["eval_episodes"],
            "seeds": sorted({r["seed"] for r in runs}), "demos": protocol["demos"],
            "image_size": protocol.get("image_size"), "lerobot_fps": protocol.get("lerobot_fps"),
            "results": summarize(runs, protocol["env_steps"]), "update_speed": None, "png": plot(runs, out),
            "merged": [str(f) for f in folders], "protocol": protocol}


# ---------------------------------------------------------------------------------------------
# The env both learners act in (imported in the children: gymnasium and gym-hil)


def register_bench_envs(state_scale: dict[str, list[float]] | None = None, image_size: int = IMAGE_SIZE) -> None:
    """``gym_hil/BenchPickCube{Fixed,Random}{State,Pixels}-v0``: gym-hil's PandaPickCube-v0 wrappers
    (no human input), the block fixed or random, the global NumPy RNG seeded on a seeded reset,
    ``agent_pos`` scaled by ``state_scale`` (:func:`scale_state`; None: gym-hil's raw units, which
    only the demo recorder sees), the cameras ``image_size`` square."""
    import gym_hil  # noqa: F401  (registers gym-hil's envs)
    import gymnasium as gym

    for block in BLOCKS:
        for obs in OBS_MODES:
            env_id = bench_env_id(block, obs)
            if env_id not in gym.registry:
                gym.register(id=env_id, entry_point=_make_bench_env, max_episode_steps=EPISODE_STEPS,
                             kwargs={"random_block_position": block == "random", "images": obs == "pixels",
                                     "state_scale": state_scale, "image_size": image_size})


def state_dim(obs: str) -> int:
    """The length of the state both learners see in setting ``obs``: ``agent_pos``, and from state the
    block's position after it (from pixels the images show the block)."""
    return AGENT_POS_DIM + (BLOCK_POS_DIM if obs == "state" else 0)


def state_scale_of(states: Any, dim: int) -> dict[str, list[float]]:
    """The scaling of the state from the demos' states ``(N, dim)``: LeRobot's MIN_MAX (each
    feature's demo range onto [-1, 1]), a range narrower than ``STATE_RANGE_FLOOR`` widened to it.

    The floor is there because the scripted demos hold some features almost constant (with the
    block fixed, the TCP's y and four joints move by under a millimetre or milliradian in every
    demo); MIN_MAX over that range would blow the first centimetre of exploration up to hundreds."""
    import numpy as np

    x = np.asarray(states, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != dim or x.shape[0] == 0 or not np.isfinite(x).all():
        raise BenchError(f"demo states: shape {x.shape} is not (N>0, {dim}) of finite numbers")
    low, high = x.min(0), x.max(0)
    return {"center": ((low + high) / 2).tolist(),
            "half_range": (np.maximum(high - low, STATE_RANGE_FLOOR) / 2).tolist()}


def scale_state(agent_pos: Any, scale: dict[str, list[float]] | None) -> Any:
    """``agent_pos`` in the bench's units: ``(x - center) / half_range`` (float32); as it is when
    ``scale`` is None."""
    import numpy as np

    x = np.asarray(agent_pos, dtype=np.float32)
    if scale is None:
        return x
    return ((x - np.asarray(scale["center"], np.float32)) / np.asarray(scale["half_range"], np.float32)) \
        .astype(np.float32)


def _make_bench_env(random_block_position: bool, images: bool = True, image_obs: bool = True,
                    use_gripper: bool = True, gripper_penalty: float = 0.0, render_mode: Any = None,
                    state_scale: dict[str, list[float]] | None = None, image_size: int = IMAGE_SIZE, **_: Any):
    """The env of one bench run. ``render_mode`` is ignored (LeRobot asks for 'human', robot_rl for
    none: both get gym-hil's offscreen renderer); the gripper is always on (a 4-number action).

    ``images`` False (the state setting) renders no images whatever the caller's ``image_obs``
    (LeRobot's ``make_robot_env`` always passes True): neither learner's policy reads them there,
    and the two cameras cost 3/4 of an env step on this CPU. Its observation is then ``agent_pos``
    with gym-hil's ``environment_state`` (the block's position, which gym-hil gives with images off)
    appended (:func:`state_dim`): one vector, which LeRobot's gym-hil path passes on as the state
    (it maps ``agent_pos`` only). ``agent_pos`` is scaled by ``state_scale`` (:func:`scale_state`),
    in both settings. The cameras are ``image_size`` square, rendered at that size by gym-hil's own
    ``render_spec`` (not resized afterwards)."""
    import gymnasium as gym
    import numpy as np
    from gym_hil import GymRenderingSpec
    from gym_hil.wrappers.factory import make_env

    class ScaledState(gym.ObservationWrapper):
        """``agent_pos`` in the bench's units (the space stays gym-hil's unbounded Box)."""

        def observation(self, observation: Any) -> Any:
            return {**observation, "agent_pos": scale_state(observation["agent_pos"], state_scale)}

    class BlockInAgentPos(gym.ObservationWrapper):
        """The state setting's observation: ``agent_pos`` with the block's position after it."""

        def __init__(self, env: Any) -> None:
            super().__init__(env)
            self.observation_space = gym.spaces.Dict(
                {"agent_pos": gym.spaces.Box(-np.inf, np.inf, (state_dim("state"),), np.float32)})

        def observation(self, observation: Any) -> Any:
            return {"agent_pos": np.concatenate([observation["agent_pos"], observation["environment_state"]])
                    .astype(np.float32)}

    class SeedsBlock(gym.Wrapper):
        """gym-hil draws the random block from ``np.random``: a seeded reset seeds it."""

        def reset(self, *, seed: int | None = None, options: Any = None):
            if seed is not None:
                np.random.seed(seed)
            return self.env.reset(seed=seed, options=options)

    env = make_env("gym_hil/PandaPickCubeBase-v0", use_inputs_control=False, use_gripper=use_gripper,
                   gripper_penalty=gripper_penalty, image_obs=image_obs and images,
                   random_block_position=random_block_position,
                   render_spec=GymRenderingSpec(height=image_size, width=image_size))
    _fast_renderer(env.unwrapped)
    return SeedsBlock(ScaledState(env if images else BlockInAgentPos(env)))


def _fast_renderer(base: Any) -> None:
    """Give gym-hil's env a renderer without shadows, reflections and multisampling.

    gym-hil renders both cameras every step with MuJoCo's defaults, which a CPU renderer draws at
    about 2 env steps/s here; without those three it draws the same scene at the same size about
    25x faster. Both learners act in this same env, so the comparison stays the same for both."""
    import mujoco

    old = base._viewer
    height, width = old.height, old.width
    old.close()
    base.model.vis.quality.shadowsize = 0
    base.model.vis.quality.offsamples = 0
    renderer = mujoco.Renderer(base.model, height=height, width=width)
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
    base._viewer = renderer


def bench_env_id(block: str, obs: str) -> str:
    return f"gym_hil/BenchPickCube{block.capitalize()}{obs.capitalize()}-v0"


def spec_env_id(spec: dict[str, Any]) -> str:
    """The env id of one child's setting."""
    return bench_env_id(spec["block"], spec["obs"])


def expert_action(env: Any) -> Any:
    """A scripted pick from the simulator's state: above the block, down, close, lift."""
    import numpy as np

    u = env.unwrapped
    tcp = np.array(u._data.sensor("2f85/pinch_pos").data)
    block = np.array(u._data.sensor("block_pos").data)
    closed = u._data.ctrl[u._gripper_ctrl_id] / 255.0
    action = np.array([0.0, 0.0, 0.0, 1.0])
    dxy = block[:2] - tcp[:2]
    if closed < 0.05 and np.linalg.norm(dxy) > 0.008:
        action[:3] = [*(dxy / 0.025), (block[2] + 0.04 - tcp[2]) / 0.025]
        action[3] = 0.0
    elif closed < 0.05 and tcp[2] - block[2] > 0.01:
        action[:3] = [*(dxy / 0.025), (block[2] - tcp[2]) / 0.025]
        action[3] = 0.0
    elif closed < 0.6:
        action[3] = 2.0
    else:
        action[2], action[3] = 1.0, 2.0
    action[:3] = np.clip(action[:3], -1.0, 1.0)
    return action.astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Children: each runs in one of the two pythons


def child_record(spec: dict[str, Any]) -> dict[str, Any]:
    """(LeRobot's python) the shared demos, written by LeRobot's own LeRobotDataset writer, and the
    state scaling taken from them (:func:`state_scale_of`): the demos are run in gym-hil's raw units,
    then written scaled, as the bench env shows ``agent_pos`` to both learners from then on."""
    import gymnasium as gym
    import numpy as np
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    register_bench_envs(None, spec["image_size"])
    size = spec["image_size"]
    pixels = spec["obs"] == "pixels"
    features: dict[str, Any] = {
        "observation.state": {"dtype": "float32", "shape": (state_dim(spec["obs"]),), "names": None},
        "action": {"dtype": "float32", "shape": (4,), "names": None},
        "next.reward": {"dtype": "float32", "shape": (1,), "names": None},
        "next.done": {"dtype": "bool", "shape": (1,), "names": None},
        "complementary_info.discrete_penalty": {"dtype": "float32", "shape": (1,), "names": None},
    }
    if pixels:
        for cam in ("front", "wrist"):
            features[f"observation.images.{cam}"] = {"dtype": "video", "shape": (size, size, 3),
                                                     "names": ["height", "width", "channels"]}
    ds = LeRobotDataset.create(repo_id="local/bench_pick_cube", fps=FPS, root=spec["dataset"], features=features,
                               use_videos=True)
    env = gym.make(spec_env_id(spec), image_obs=True)
    successes = 0
    episodes: list[list[dict[str, Any]]] = []
    for ep in range(spec["demos"]):
        obs, _ = env.reset(seed=spec["seed"] * 100_000 + ep)
        frames: list[dict[str, Any]] = []
        for _ in range(EPISODE_STEPS):
            action = expert_action(env)
            nxt, reward, terminated, truncated, info = env.step(action)
            frame = {"observation.state": np.asarray(obs["agent_pos"], np.float32), "action": action,
                     "next.reward": np.array([reward], np.float32),
                     "next.done": np.array([terminated or truncated]),
                     "complementary_info.discrete_penalty": np.array([info.get("discrete_penalty", 0.0)],
                                                                     np.float32),
                     "task": TASK}
            if pixels:
                for cam in ("front", "wrist"):
                    frame[f"observation.images.{cam}"] = obs["pixels"][cam]
            frames.append(frame)
            obs = nxt
            if terminated or truncated:
                break
        successes += bool(info.get("succeed"))
        episodes.append(frames)
    scale = state_scale_of([f["observation.state"] for frames in episodes for f in frames], state_dim(spec["obs"]))
    for frames in episodes:
        for frame in frames:
            ds.add_frame({**frame, "observation.state": scale_state(frame["observation.state"], scale)})
        ds.save_episode()
    ds.finalize()
    return {"episodes": spec["demos"], "expert_successes": successes, "state_scale": scale}


def child_robot_rl_demos(spec: dict[str, Any]) -> dict[str, Any]:
    """(robot_rl's python) the shared dataset into a robot_rl demo folder: robot_rl's own import,
    then the actions from the env's units into robot_rl's [-1, 1] (its gym wrapper's inverse)."""
    import dataclasses
    import tempfile

    import gymnasium as gym
    import numpy as np

    from robot_rl.data.demos import DemoWriter, load_demos
    from robot_rl.data.lerobot_import import import_lerobot
    from robot_rl.envs.gym_env import make_gym_env

    register_bench_envs(spec["state_scale"], spec["image_size"])
    env = make_gym_env(spec_env_id(spec), kwargs={"image_obs": True}, obs_map=gym_obs(spec["obs"]),
                       max_episode_steps=EPISODE_STEPS)
    obs_space, agent_space = env.observation_space, env.action_space
    env.close()
    low, high = np.array(ACTION_LOW, np.float32), np.array(ACTION_HIGH, np.float32)
    env_space = gym.spaces.Box(low, high, dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        report = import_lerobot(spec["dataset"], Path(tmp) / "demos", obs_space=obs_space, action_space=env_space,
                                fps=FPS, task=TASK)
        episodes = load_demos(Path(tmp) / "demos", obs_space, env_space)
    writer = DemoWriter(spec["demo_dir"], obs_space, agent_space, task=TASK, source="lerobot", force=True)
    for steps in episodes:
        writer.write_episode([dataclasses.replace(s, action=(2.0 * (np.asarray(s.action) - low) / (high - low) - 1.0)
                                                  .astype(np.float32)) for s in steps])
    return {"episodes": report.episodes, "filled": list(report.filled)}


def read_state_scale(path: Path, dim: int) -> dict[str, list[float]]:
    """A setting's ``state_scale.json`` (written with its dataset) for a state of ``dim`` numbers,
    checked: one BenchError line."""
    try:
        scale = json.loads(path.read_text())
        parts = [[float(v) for v in scale[k]] for k in ("center", "half_range")]
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise BenchError(f"{path}: not a state scaling ({type(err).__name__}: {err})") from None
    if any(len(p) != dim for p in parts) or not all(math.isfinite(v) for p in parts for v in p) \
            or min(parts[1]) < STATE_RANGE_FLOOR / 2:
        raise BenchError(f"{path}: center and half_range must be {dim} finite numbers, half_range at least "
                         f"{STATE_RANGE_FLOOR / 2}")
    return {"center": parts[0], "half_range": parts[1]}


def recorded_dim(path: Path) -> int | None:
    """The state length a ``state_scale.json`` was written for; None where there is none to read
    (a later :func:`read_state_scale` says what is wrong with one that is there)."""
    try:
        return len(json.loads(path.read_text())["center"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def gym_obs(obs: str) -> dict[str, list[str]]:
    """robot_rl's observation map: what LeRobot's gym-hil path gives its policy."""
    if obs == "state":
        return {"state": ["agent_pos"]}
    return {"state": ["agent_pos"], "front": ["pixels/front"], "wrist": ["pixels/wrist"]}


def robot_rl_overrides(spec: dict[str, Any]) -> list[str]:
    """``robot-rl train --set`` values of one robot_rl run."""
    kwargs = "{image_obs: true, use_gripper: true, gripper_penalty: 0.0}"
    obs_map = "{" + ", ".join(f"{k}: [{', '.join(v)}]" for k, v in gym_obs(spec["obs"]).items()) + "}"
    sets = [f"env.gym_id={spec_env_id(spec)}", f"env.gym_kwargs={kwargs}", f"env.gym_obs={obs_map}",
            f"env.max_episode_steps={EPISODE_STEPS}", f"env.control_hz={FPS}", f"seed={spec['seed']}",
            f"env.obs_mode={'state' if spec['obs'] == 'state' else 'pixels'}",
            f"train.total_env_steps={spec['env_steps']}", f"train.eval_every={spec['eval_every']}",
            f"train.eval_episodes={spec['eval_episodes']}", f"train.eval_seed={spec['eval_seed']}",
            "train.eval_video_episodes=0", f"train.demos={spec['demo_dir']}", "train.scripted_demos=0",
            "train.demo_fraction=0.5", f"train.batch_size={spec['batch_size']}", f"train.utd_ratio={spec['utd']}",
            f"train.learning_starts={spec['learning_starts']}", f"agent.discount={spec['discount']}",
            f"agent.hidden_dims={list(HIDDEN_DIMS)}", f"agent.num_critics={NUM_CRITICS}", "agent.gripper_critic=true",
            f"train.run_dir={spec['run_dir']}"]
    if spec.get("init_temperature") is not None:
        sets.append(f"agent.init_temperature={spec['init_temperature']}")
    return [x for s in sets for x in ("--set", s)]


def child_robot_rl_train(spec: dict[str, Any]) -> dict[str, Any]:
    """(robot_rl's python) ``robot-rl train`` on the bench env; its evals.jsonl is the curve."""
    import numpy as np

    from robot_rl.cli import main
    from robot_rl.data.replay import ReplayBuffer
    from robot_rl.envs.gym_env import make_gym_env

    register_bench_envs(spec["state_scale"], spec["image_size"])
    start = time.monotonic()
    rc = main(["train", "--config", spec["config"], *robot_rl_overrides(spec)])
    wall = time.monotonic() - start
    evals = [json.loads(line) for line in (Path(spec["run_dir"]) / "evals.jsonl").read_text().splitlines() if line]
    env = make_gym_env(spec_env_id(spec), kwargs={"image_obs": True}, obs_map=gym_obs(spec["obs"]),
                       max_episode_steps=EPISODE_STEPS)
    buf = ReplayBuffer(env.observation_space, int(np.prod(env.action_space.shape)), 1000)
    env.close()
    last = evals[-1] if evals else {}
    return {"rc": rc, "update_only_per_s": _tb_median(Path(spec["run_dir"]) / "tb", "perf/updates_per_s"),
            "wall_s": wall, "curve": [[e["env_steps"], e["success_rate"]] for e in evals],
            "env_steps": last.get("env_steps", 0), "updates": last.get("updates", 0),
            # robot_rl evaluates inside its run, so its wall time holds these; LeRobot's does not
            "eval_env_steps_in_wall": sum(sum(e.get("lengths", [])) for e in evals),
            "replay_bytes_per_transition": buf.bytes_per_transition(EPISODE_STEPS)}


def _tb_median(log_dir: Path, tag: str) -> float | None:
    """The median of a TensorBoard scalar robot_rl logged (None: not logged, e.g. a run too short)."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        return None
    acc = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})
    acc.Reload()
    if tag not in acc.Tags().get("scalars", []):
        return None
    return statistics.median(e.value for e in acc.Scalars(tag))


def lerobot_update_hz(log_text: str, utd: int) -> float | None:
    """Updates per second of update time alone, from LeRobot's learner log: each loop of its
    ``Optimization frequency loop [Hz]`` lines does ``utd_ratio`` critic updates."""
    marker = "Optimization frequency loop [Hz]:"
    hz = [_finite(line.split(marker, 1)[1].split()[0]) for line in log_text.splitlines() if marker in line
          and line.split(marker, 1)[1].split()]
    hz = [h for h in hz if h is not None and h > 0]
    return statistics.median(hz) * utd if hz else None


def lerobot_stats(dim: int) -> dict[str, Any]:
    """LeRobot's ``dataset_stats`` for the state and the continuous action (its MIN_MAX ranges).

    LeRobot 0.4.4's actor and learner never apply these (neither builds the SAC pre/post
    processors that would); the env and the dataset already hold the state scaled
    (:func:`state_scale_of`), so the state's are the identity that MIN_MAX would be on it."""
    return {"observation.state": {"min": [-1.0] * dim, "max": [1.0] * dim},
            "action": {"min": list(ACTION_LOW[:3]), "max": list(ACTION_HIGH[:3])}}


#: The image statistics both LeRobot runs and its timed update are given (ImageNet's).
LEROBOT_IMAGE_STATS = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}


def lerobot_image_keys() -> list[str]:
    """LeRobot's feature names of the two cameras."""
    return [f"observation.images.{cam}" for cam in CAMERAS]


def lerobot_config(spec: dict[str, Any]) -> dict[str, Any]:
    """LeRobot's TrainRLServerPipelineConfig of one run (its JSON, read by its own parser)."""
    dim = state_dim(spec["obs"])
    feats: dict[str, Any] = {"observation.state": {"type": "STATE", "shape": [dim]}}
    stats = lerobot_stats(dim)
    if spec["obs"] == "pixels":
        for key in lerobot_image_keys():
            feats[key] = {"type": "VISUAL", "shape": [3, spec["image_size"], spec["image_size"]]}
            stats[key] = dict(LEROBOT_IMAGE_STATS)
    action = {"action": {"type": "ACTION", "shape": [3]}}
    return {
        "output_dir": spec["run_dir"], "job_name": "vs_robot_rl", "seed": spec["seed"],
        # LeRobot's learner concatenates a batch_size batch from its online buffer with one from its
        # offline buffer: half of robot_rl's batch_size each makes the same rows per update, half demos
        "batch_size": spec["batch_size"] // 2, "log_freq": 50, "save_checkpoint": True, "save_freq": spec["eval_every"],
        "wandb": {"enable": False},
        # PyAV decodes the demos' videos: the torchcodec wheel LeRobot installs (its default backend when
        # present) needs FFmpeg's shared libraries, which a machine without a system FFmpeg lacks
        "dataset": {"repo_id": "local/bench_pick_cube", "root": spec["dataset"], "use_imagenet_stats": False,
                    "video_backend": "pyav"},
        "env": {"type": "gym_manipulator", "name": "gym_hil", "task": spec_env_id(spec).split("/", 1)[1],
                # the actor sleeps to hold env.fps (gym-hil's own 10 Hz unless --lerobot-fps), as on a real
                # cell, so its learner updates at its own pace between env steps (LeRobot's design: it does not
                # wait for updates); the simulated time per env step stays gym-hil's 0.1 s whatever the rate
                "fps": spec.get("lerobot_fps", FPS),
                # the continuous part: LeRobot's make_policy takes the policy's action from here and
                # adds the discrete gripper to it (a [4] here would be a 5-number action)
                "features": {**feats, **action},
                "features_map": {k: k for k in [*feats, "action"]},
                "processor": {"control_mode": "gamepad",
                              "gripper": {"use_gripper": True, "gripper_penalty": 0.0},
                              "reset": {"terminate_on_success": True}}},
        "policy": {"type": "sac", "device": "cpu", "storage_device": "cpu", "push_to_hub": False,
                   "use_torch_compile": False, "online_steps": spec["env_steps"],
                   "online_step_before_learning": spec["learning_starts"], "utd_ratio": spec["utd"],
                   "discount": spec["discount"], "num_critics": NUM_CRITICS, "num_discrete_actions": GRIPPER_CHOICES,
                   **({"temperature_init": spec["init_temperature"]} if spec.get("init_temperature") is not None
                      else {}),
                   "online_buffer_capacity": max(spec["env_steps"], 1000),
                   "offline_buffer_capacity": max(spec["demos"] * EPISODE_STEPS, 1000),
                   "input_features": feats, "output_features": action, "dataset_stats": stats,
                   "actor_learner_config": {"learner_host": "127.0.0.1", "learner_port": spec["port"]},
                   "concurrency": {"actor": "threads", "learner": "threads"}},
    }


def child_lerobot_module(spec: dict[str, Any]) -> None:
    """(LeRobot's python) ``lerobot.rl.learner`` or ``lerobot.rl.actor``'s own CLI, unmodified,
    after registering the bench envs (gym-hil ids LeRobot's ``make_robot_env`` then builds)."""
    import runpy

    register_bench_envs(spec["state_scale"], spec["image_size"])
    sys.argv = [spec["module"], f"--config_path={spec['config']}"]
    runpy.run_module(spec["module"], run_name="__main__", alter_sys=True)


def child_lerobot_eval(spec: dict[str, Any]) -> dict[str, Any]:
    """(LeRobot's python) each checkpoint of a LeRobot run, ``eval_episodes`` deterministic
    episodes: the actor's mean action (tanh-squashed), the discrete gripper critic's argmax."""
    import gymnasium as gym
    import numpy as np
    import torch
    from lerobot.envs.configs import HILSerlRobotEnvConfig  # noqa: F401  (the env config's registration)
    from lerobot.policies.sac.modeling_sac import SACPolicy
    from lerobot.processor.core import TransitionKey
    from lerobot.rl.buffer import ReplayBuffer
    from lerobot.rl.gym_manipulator import create_transition, make_processors

    register_bench_envs(spec["state_scale"], spec["image_size"])
    torch.set_num_threads(1)
    env = gym.make(spec_env_id(spec), image_obs=True, use_gripper=True, gripper_penalty=0.0)

    class _Cfg:  # the fields make_processors reads for gym-hil
        name = "gym_hil"

        class processor:  # noqa: N801
            reset = None

    env_proc, _ = make_processors(env, None, _Cfg, "cpu")
    keys = ["observation.state"] + ([f"observation.images.{c}" for c in ("front", "wrist")]
                                    if spec["obs"] == "pixels" else [])
    curve = []
    ckpts = sorted(Path(spec["run_dir"], "checkpoints").glob("[0-9]*"), key=lambda p: int(p.name))
    # the learner's own record of where it was: {"step": updates, "interaction_step": env steps}
    states = {c: torch.load(c / "training_state" / "training_state.pt", weights_only=True) for c in ckpts}
    # its "interaction_step" is 0 in every checkpoint here (learner.py keeps only the interaction message
    # of the loop it saves in, mostly none), so the env step comes from the actor's log at the
    # checkpoint's time
    steps_log = actor_steps(Path(spec["actor_log"]).read_text(errors="replace"))
    at = {c: env_step_at(steps_log, (c / "training_state" / "training_state.pt").stat().st_mtime) for c in ckpts}
    for ckpt in pick_checkpoints(at, spec["eval_every"], spec["env_steps"]):
        state = states[ckpt]
        policy = SACPolicy.from_pretrained(ckpt / "pretrained_model").eval()
        wins = 0
        for i in range(spec["eval_episodes"]):
            obs, info = env.reset(seed=spec["eval_seed"] + i)
            tr = env_proc(create_transition(observation=obs, info=info))
            for _ in range(EPISODE_STEPS):
                batch = {k: v for k, v in tr[TransitionKey.OBSERVATION].items() if k in keys}
                with torch.no_grad():
                    feats = (policy.actor.encoder.get_cached_image_features(batch)
                             if policy.actor.encoder.has_images else None)
                    _, _, means = policy.actor(batch, feats)
                    xyz = torch.tanh(means)[0].numpy()
                    grip = int(torch.argmax(policy.discrete_critic(batch, feats), dim=-1)[0])
                obs, _, terminated, truncated, info = env.step(np.array([*xyz, grip], np.float32))
                tr = env_proc(create_transition(observation=obs, info=info))
                if terminated or truncated:
                    break
            wins += bool(info.get("succeed"))
        curve.append([at[ckpt], wins / spec["eval_episodes"], int(state["step"])])
    one = {"observation.state": torch.zeros(state_dim(spec["obs"]))}
    for k in keys[1:]:
        one[k] = torch.zeros(3, spec["image_size"], spec["image_size"])
    buf = ReplayBuffer(capacity=1000, device="cpu", state_keys=keys, storage_device="cpu", optimize_memory=True)
    buf.add(state=one, action=torch.zeros(4), reward=0.0, next_state=one, done=False, truncated=False,
            complementary_info={"discrete_penalty": torch.zeros(1)})
    tensors = [buf.states[k] for k in keys] + [buf.actions, buf.rewards, buf.dones, buf.truncateds]
    tensors += list(getattr(buf, "complementary_info", {}).values())
    if not buf.optimize_memory:
        tensors += [buf.next_states[k] for k in keys]
    per = sum(t.element_size() * t.numel() for t in tensors) / buf.capacity
    return {"curve": curve, "replay_bytes_per_transition": per}


def actor_steps(log_text: str) -> list[tuple[float, int]]:
    """(time, env step) from LeRobot's actor log: its per-step "... at step N" and per-episode
    "Global step N" lines, stamped to the second."""
    out = []
    for m in re.finditer(r"^\w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) .*?(?:at step|Global step) (\d+)", log_text,
                         re.MULTILINE):
        out.append((time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")), int(m.group(2))))
    return out


def env_step_at(steps: list[tuple[float, int]], when: float) -> int:
    """The env step the actor was at, at ``when``: between two logged steps, interpolated in time
    (the actor holds gym-hil's 10 Hz and logs only at episode ends, so the last logged step alone
    would be up to an episode behind); after the last, that one; 0 before any."""
    last = None
    for i, (t, n) in enumerate(steps):
        if t > when:
            if last is None:
                return 0
            t0, n0 = steps[last]
            return max(n0, int(n0 + (n - n0) * (when - t0) / (t - t0)))
        last = i
    return steps[last][1] if last is not None else 0


def pick_checkpoints(env_step_of: dict[Any, int], every: int, budget: int) -> list[Any]:
    """The checkpoints to evaluate: per mark ``every, 2*every, ... budget``, the last one taken at
    or before it (LeRobot checkpoints by updates, which it makes as fast as it can, so it has many)."""
    order = list(env_step_of)  # in the learner's order (by update)
    picked: list[Any] = []
    for mark in [*range(every, budget + 1, every), budget]:
        before = [c for c in order if env_step_of[c] <= mark]
        if before and before[-1] not in picked:
            picked.append(before[-1])
    return picked


# ---------------------------------------------------------------------------------------------
# The same update on both sides, timed alone (synthetic data: speed does not depend on it)


def _synthetic_transitions(seed: int, count: int, dim: int) -> Any:
    """``count`` random transitions of the bench's shapes: states of ``dim`` numbers in [-1, 1],
    continuous actions in [-1, 1] and a gripper index in {0, 1, 2}, a reward of 1 now and then."""
    import numpy as np

    rng = np.random.default_rng(seed)
    state = rng.uniform(-1, 1, (count, dim)).astype(np.float32)
    next_state = rng.uniform(-1, 1, (count, dim)).astype(np.float32)
    action = np.concatenate([rng.uniform(-1, 1, (count, 3)), rng.integers(0, 3, (count, 1))], 1).astype(np.float32)
    reward = (rng.random(count) < 0.02).astype(np.float32)
    return state, action, reward, next_state


#: The cameras of the pixel settings, and how many synthetic transitions the pixel update timing
#: keeps per buffer (LeRobot's buffer holds float32 images: 300 of two 128x128 pairs are 0.2 GB).
CAMERAS = ("front", "wrist")
SYNTHETIC_IMAGE_ROWS = 300


def _synthetic_images(seed: int, count: int, size: int) -> dict[str, Any]:
    """Random ``uint8`` images ``(count, size, size, 3)`` per camera, for obs and next obs."""
    import numpy as np

    rng = np.random.default_rng(seed + 1000)
    return {f"{part}{cam}": rng.integers(0, 256, (count, size, size, 3), dtype=np.uint8)
            for part in ("", "next_") for cam in CAMERAS}


def _time_updates(update: Any, count: int, compiled: bool, warmup: int = 20) -> dict[str, float]:
    """``update`` run ``warmup`` times untimed (the compiler's first passes, with ``compiled``), then
    ``count`` times timed: updates per second and the untimed warm-up's seconds."""
    start = time.perf_counter()
    for _ in range(warmup):
        update()
    warm = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(count):
        update()
    return {"updates_per_s": count / (time.perf_counter() - start), "warmup_s": warm, "compiled": compiled}


def child_robot_rl_update_speed(spec: dict[str, Any]) -> dict[str, float]:
    """(robot_rl's python) ``Learner.update()`` as ``robot-rl train`` runs it in the bench: sample
    ``batch_size`` rows (half demos), one critic, gripper-critic, actor and temperature update. With
    ``image_size`` the observation adds the two cameras (``uint8``, as replay keeps them) and the
    update runs its default encoder with its DrQ shifts, as the bench's pixel runs do."""
    import gymnasium as gym
    import numpy as np
    import torch

    from robot_rl.config.agent import AgentConfig, TrainConfig
    from robot_rl.data.transition import Step
    from robot_rl.training.learner import Learner

    torch.set_num_threads(1)
    size = spec.get("image_size")
    dim = state_dim("pixels" if size else "state")
    spaces: dict[str, Any] = {"state": gym.spaces.Box(-np.inf, np.inf, (dim,), np.float32)}
    if size:
        spaces.update({cam: gym.spaces.Box(0, 255, (size, size, 3), np.uint8) for cam in CAMERAS})
    obs_space = gym.spaces.Dict(spaces)
    rows = SYNTHETIC_IMAGE_ROWS if size else 2000
    learner = Learner(AgentConfig(hidden_dims=HIDDEN_DIMS, num_critics=NUM_CRITICS, gripper_critic=True,
                                  discount=spec["discount"], init_temperature=spec["init_temperature"]),
                      TrainConfig(batch_size=spec["batch_size"], learning_starts=0, demo_fraction=0.5,
                                  compile=spec["compile"]),
                      obs_space, gym.spaces.Box(-1, 1, (4,), np.float32), seed=0)
    for part, seed in (("demo", 1), ("online", 2)):
        state, action, reward, next_state = _synthetic_transitions(seed, rows, dim)
        images = _synthetic_images(seed, rows, size) if size else {}
        action[:, 3] -= 1.0  # robot_rl's [-1, 1] gripper
        steps = [Step(i // EPISODE_STEPS, i % EPISODE_STEPS,
                      {"state": state[i], **{cam: images[cam][i] for cam in CAMERAS if size}}, action[i],
                      float(reward[i]), False, i % EPISODE_STEPS == EPISODE_STEPS - 1,
                      {"state": next_state[i], **{cam: images[f"next_{cam}"][i] for cam in CAMERAS if size}})
                 for i in range(len(state))]
        if part == "demo":
            learner.add_demos([steps[i:i + EPISODE_STEPS] for i in range(0, len(steps), EPISODE_STEPS)])
        else:
            for step in steps:
                learner.ingest(step)
    return _time_updates(learner.update, spec["updates"], spec["compile"], spec.get("warmup", 20))


def child_lerobot_update_speed(spec: dict[str, Any]) -> dict[str, float]:
    """(LeRobot's python) one update of ``lerobot.rl.learner``'s loop, as it runs the last of each
    ``utd_ratio`` group: half the rows from each of its two buffers (as the bench configures it),
    critic, discrete critic, actor and temperature, each with its gradient clip, then the targets.
    With ``image_size`` the observation adds the two cameras (float in [0, 1], as its actor sends
    them), its buffers are built as its learner builds them (``optimize_memory``, its DrQ shifts on
    sampling) and the update runs its default image encoder, as the bench's pixel runs do."""
    import types

    import torch
    from lerobot.configs.types import FeatureType, PolicyFeature
    from lerobot.policies.sac.configuration_sac import SACConfig
    from lerobot.policies.sac.modeling_sac import SACPolicy
    from lerobot.rl.buffer import ReplayBuffer, concatenate_batch_transitions
    from lerobot.rl.learner import make_optimizers_and_scheduler

    torch.set_num_threads(1)
    torch.manual_seed(0)
    size = spec.get("image_size")
    dim = state_dim("pixels" if size else "state")
    features = {"observation.state": PolicyFeature(FeatureType.STATE, (dim,))}
    stats = lerobot_stats(dim)
    for key in lerobot_image_keys() if size else ():
        features[key] = PolicyFeature(FeatureType.VISUAL, (3, size, size))
        stats[key] = dict(LEROBOT_IMAGE_STATS)
    keys = list(features)
    rows = SYNTHETIC_IMAGE_ROWS if size else 2000
    cfg = SACConfig(input_features=features,
                    output_features={"action": PolicyFeature(FeatureType.ACTION, (3,))},
                    dataset_stats=stats, device="cpu", storage_device="cpu", num_critics=NUM_CRITICS,
                    num_discrete_actions=GRIPPER_CHOICES,
                    discount=spec["discount"], temperature_init=spec["init_temperature"],
                    use_torch_compile=spec["compile"])
    policy = SACPolicy(cfg)
    policy.train()
    optimizers, _ = make_optimizers_and_scheduler(types.SimpleNamespace(policy=cfg), policy)
    buffers = []
    for seed in (1, 2):
        buffer = ReplayBuffer(rows, device="cpu", state_keys=keys, storage_device="cpu", optimize_memory=bool(size))
        state, action, reward, next_state = _synthetic_transitions(seed, rows, dim)
        images = _synthetic_images(seed, rows, size) if size else {}

        def obs_at(i: int, part: str, states: Any, images: dict[str, Any] = images) -> dict[str, Any]:
            one = {"observation.state": torch.from_numpy(states[i:i + 1])}
            for cam in CAMERAS if size else ():
                one[f"observation.images.{cam}"] = \
                    torch.from_numpy(images[f"{part}{cam}"][i:i + 1]).permute(0, 3, 1, 2).float() / 255.0
            return one

        for i in range(len(state)):
            buffer.add(obs_at(i, "", state), torch.from_numpy(action[i:i + 1]), float(reward[i]),
                       obs_at(i, "next_", next_state), i % EPISODE_STEPS == EPISODE_STEPS - 1, False,
                       {"discrete_penalty": torch.tensor([0.0])})
        buffers.append(buffer)
    half, clip = spec["batch_size"] // 2, cfg.grad_clip_norm
    parts = (("critic", "loss_critic", lambda: policy.critic_ensemble.parameters()),
             ("discrete_critic", "loss_discrete_critic", lambda: policy.discrete_critic.parameters()),
             ("actor", "loss_actor", lambda: policy.actor.parameters()),
             ("temperature", "loss_temperature", lambda: [policy.log_alpha]))

    def update() -> None:
        batch = concatenate_batch_transitions(buffers[0].sample(half), buffers[1].sample(half))
        forward_batch = {"action": batch["action"], "reward": batch["reward"], "state": batch["state"],
                         "next_state": batch["next_state"], "done": batch["done"], "observation_feature": None,
                         "next_observation_feature": None, "complementary_info": batch["complementary_info"]}
        for model, key, params in parts:
            loss = policy.forward(forward_batch, model=model)[key]
            optimizers[model].zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters=params(), max_norm=clip)
            optimizers[model].step()
        policy.update_target_networks()

    return _time_updates(update, spec["updates"], spec["compile"], spec.get("warmup", 20))


def run_update_speed(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Both updates timed alone on one thread, the sides alternating over 3 rounds (so a change in
    the machine's load falls on both): updates per second per round, their median, and the ratio.
    From state (eager, and compiled with ``--update-compile``), and with ``--obs pixels`` also from
    the two ``--image-size`` cameras (eager; ``pixels`` in the result)."""
    spec = {"batch_size": args.batch_size, "discount": args.discount, "init_temperature": args.init_temperature,
            "updates": args.update_speed}
    pythons = {"robot_rl": (args.robot_rl_python, ""), "lerobot": (args.lerobot_python, args.lerobot_pythonpath)}
    learners = [learner for learner in LEARNERS if learner in args.learners]
    result: dict[str, Any] = {"rows_per_update": args.batch_size, "threads": 1, "updates_timed": args.update_speed}

    def timed_rounds(spec: dict[str, Any], name: str) -> dict[str, Any]:
        rounds: dict[str, list[float]] = {learner: [] for learner in learners}
        for round_ in range(3):
            for learner in learners:
                python, pythonpath = pythons[learner]
                timed = run_child(python, f"{learner}_update_speed", spec,
                                  out / f"update_speed_{learner}_{name}_{round_}.log", pythonpath)
                rounds[learner].append(round(timed["updates_per_s"], 2))
        entry: dict[str, Any] = {learner: {"per_round": r, "median": statistics.median(r)}
                                 for learner, r in rounds.items()}
        if len(learners) == 2:
            entry["robot_rl_over_lerobot"] = round(entry["robot_rl"]["median"] / entry["lerobot"]["median"], 2)
        return entry

    if args.update_speed > 0:
        for compiled in (False, True) if args.update_compile else (False,):
            name = "compiled" if compiled else "eager"
            result[name] = timed_rounds({**spec, "compile": compiled}, name)
    if "pixels" in args.obs and args.update_speed_pixels > 0:
        result["pixels"] = {"image_size": args.image_size, "updates_timed": args.update_speed_pixels, "warmup": 3,
                            "eager": timed_rounds({**spec, "compile": False, "image_size": args.image_size,
                                                   "updates": args.update_speed_pixels, "warmup": 3},
                                                  f"pixels{args.image_size}")}
    return result


CHILDREN = {"record": child_record, "robot_rl_demos": child_robot_rl_demos, "robot_rl_train": child_robot_rl_train,
            "lerobot_module": child_lerobot_module, "lerobot_eval": child_lerobot_eval,
            "robot_rl_update_speed": child_robot_rl_update_speed, "lerobot_update_speed": child_lerobot_update_speed}


# ---------------------------------------------------------------------------------------------
# The parent: runs the children in their pythons


def _env(pythonpath: str) -> dict[str, str]:
    env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_child(python: str, child: str, spec: dict[str, Any], log: Path, pythonpath: str = "",
              wait: bool = True) -> Any:
    """This file, in ``python``, as ``child``; its last stdout line is its JSON result."""
    spec_file = log.with_suffix(".spec.json")
    spec_file.write_text(json.dumps(spec))
    cmd = [python, str(Path(__file__).resolve()), "--child", child, "--spec", str(spec_file)]
    out = open(log, "w")  # noqa: SIM115  (the child's log, closed when it ends)
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=_env(pythonpath),
                            start_new_session=True)
    if not wait:
        return proc
    rc = proc.wait()
    out.close()
    lines = log.read_text(errors="replace").splitlines()
    result = next((ln for ln in reversed(lines) if ln.startswith("{\"result\"")), None)
    if rc != 0 or result is None:
        tail = next((ln for ln in reversed(lines) if ln.strip()), "no output")
        raise BenchError(f"{child} failed (exit {rc}, log {log}): {tail.strip()[:300]}")
    return json.loads(result)["result"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_lerobot(args: argparse.Namespace, spec: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """LeRobot's learner and actor (threads inside each, gRPC between) until the actor has taken
    its ``online_steps``; then the learner is stopped and its checkpoints evaluated."""
    spec = {**spec, "run_dir": str(run_dir / "out"), "port": _free_port()}
    config = run_dir / "lerobot_config.json"
    config.write_text(json.dumps(lerobot_config(spec), indent=1))
    # the same config but its own output_dir: LeRobot's config check refuses an existing one, and the
    # learner makes its own first
    actor_config = run_dir / "lerobot_actor_config.json"
    actor_config.write_text(json.dumps({**lerobot_config(spec), "output_dir": str(run_dir / "actor_out")}, indent=1))
    start = time.monotonic()
    learner = run_child(args.lerobot_python, "lerobot_module", {"module": "lerobot.rl.learner", "config": str(config),
                                                                "state_scale": spec["state_scale"],
                                                                "image_size": spec["image_size"]},
                        run_dir / "learner.log", args.lerobot_pythonpath, wait=False)
    try:
        time.sleep(5)
        actor = run_child(args.lerobot_python, "lerobot_module",
                          {"module": "lerobot.rl.actor", "config": str(actor_config),
                           "state_scale": spec["state_scale"], "image_size": spec["image_size"]},
                          run_dir / "actor.log", args.lerobot_pythonpath, wait=False)
        rc = actor.wait()
        wall = time.monotonic() - start
        if learner.poll() is not None:
            raise BenchError(f"LeRobot's learner ended early (exit {learner.returncode}, "
                             f"log {run_dir / 'learner.log'})")
        if rc != 0:
            raise BenchError(f"LeRobot's actor failed (exit {rc}, log {run_dir / 'actor.log'})")
    finally:
        if learner.poll() is None:
            os.killpg(learner.pid, signal.SIGINT)
            try:
                learner.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(learner.pid, signal.SIGKILL)
                learner.wait()
    ev = run_child(args.lerobot_python, "lerobot_eval", {**spec, "actor_log": str(run_dir / "actor.log")},
                   run_dir / "eval.log", args.lerobot_pythonpath)
    curve = [[s, w] for s, w, _ in ev["curve"] if s <= spec["env_steps"]]
    # an update is one critic gradient step on both sides: each of LeRobot's optimisation steps
    # makes utd_ratio of them (and one actor step), each of robot_rl's one (and one actor step)
    updates = max((u for _, _, u in ev["curve"]), default=0) * spec["utd"]
    hz = lerobot_update_hz((run_dir / "learner.log").read_text(errors="replace"), spec["utd"])
    return {"wall_s": wall, "curve": curve, "env_steps": spec["env_steps"], "updates": updates, "update_only_per_s": hz,
            "replay_bytes_per_transition": ev["replay_bytes_per_transition"], "checkpoints": ev["curve"]}


def plot(runs: list[dict[str, Any]], out: Path) -> list[str]:
    """One PNG per setting: eval success against env steps, a line per learner and seed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    for key in sorted({(r["obs"], r["block"]) for r in runs}):
        fig, ax = plt.subplots(figsize=(6, 4))
        for r in runs:
            if (r["obs"], r["block"]) == key and r["curve"]:
                xs, ys = zip(*[(p[0], p[1]) for p in r["curve"]])
                ax.plot(xs, ys, "o-" if r["learner"] == "robot_rl" else "s--",
                        color="tab:blue" if r["learner"] == "robot_rl" else "tab:orange",
                        label=f"{r['learner']} seed {r['seed']}")
        ax.set(xlabel="env steps", ylabel="eval success", ylim=(-0.05, 1.05),
               title=f"gym-hil PandaPickCube, {key[0]}, {key[1]} block")
        ax.legend(fontsize=7)
        path = out / f"vs_lerobot_{key[0]}_{key[1]}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(str(path))
    return written


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except BenchError as err:
        print(f"vs_lerobot: {err}", file=sys.stderr)
        return USAGE_EXIT
    if args.child:
        result = CHILDREN[args.child](json.loads(Path(args.spec).read_text()))
        print(json.dumps({"result": result}), flush=True)
        return 0
    out = Path(args.out).resolve()
    if args.merge is not None:
        try:
            print(json.dumps(merged_summary([Path(f).resolve() for f in args.merge], out)), flush=True)
        except BenchError as err:
            print(f"vs_lerobot: {err}", file=sys.stderr)
            return USAGE_EXIT
        return 0
    out.mkdir(parents=True, exist_ok=True)
    config = Path(__file__).resolve().parents[1] / "configs" / "pick_cube.yaml"
    common = {"env_steps": args.env_steps, "eval_every": args.eval_every, "eval_episodes": args.eval_episodes,
              "eval_seed": args.eval_seed, "demos": args.demos, "batch_size": args.batch_size, "utd": args.utd,
              "discount": args.discount, "learning_starts": args.learning_starts,
              "init_temperature": args.init_temperature, "image_size": args.image_size,
              "lerobot_fps": args.lerobot_fps}
    runs: list[dict[str, Any]] = []
    demos: dict[str, Any] = {}
    for obs in args.obs if not args.no_runs else ():
        for block in args.block:
            # a dataset is reused by a later run in the same --out: its folder names what it was recorded at
            setting = out / (f"{obs}_{block}" + (f"_{args.image_size}px" if obs == "pixels" else ""))
            setting.mkdir(exist_ok=True)
            dataset, scale_file = setting / "dataset", setting / "state_scale.json"
            base = {**common, "obs": obs, "block": block, "seed": 0, "dataset": str(dataset)}
            try:
                if not ((dataset / "meta" / "info.json").is_file() and recorded_dim(scale_file) == state_dim(obs)):
                    # a dataset without its scaling, or of another state: an older bench's
                    shutil.rmtree(dataset, ignore_errors=True)
                    record = run_child(args.lerobot_python, "record", base, setting / "record.log",
                                       args.lerobot_pythonpath)
                    scale_file.write_text(json.dumps(record.pop("state_scale")))
                    demos[f"{obs}_{block}"] = record
                base["state_scale"] = read_state_scale(scale_file, state_dim(obs))
            except BenchError as err:
                print(f"vs_lerobot: {obs} {block}: {err}", file=sys.stderr)
                return 1
            demo_dir = setting / "robot_rl_demos"
            if "robot_rl" in args.learners:
                run_child(args.robot_rl_python, "robot_rl_demos", {**base, "demo_dir": str(demo_dir)},
                          setting / "robot_rl_demos.log")
            for seed in args.seeds:
                for learner in args.learners:
                    run_dir = setting / f"{learner}_seed{seed}"
                    shutil.rmtree(run_dir, ignore_errors=True)  # a rerun starts fresh (LeRobot refuses an old one)
                    run_dir.mkdir()
                    spec = {**base, "seed": seed, "demo_dir": str(demo_dir), "config": str(config),
                            "run_dir": str(run_dir / "run")}
                    row: dict[str, Any] = {"learner": learner, "obs": obs, "block": block, "seed": seed,
                                           "curve": [], "wall_s": None, "env_steps": 0, "updates": None}
                    if obs == "pixels":
                        row["image_size"] = args.image_size  # which setting folder holds the run (--merge)
                    try:
                        if learner == "robot_rl":
                            row.update(run_child(args.robot_rl_python, "robot_rl_train", spec, run_dir / "train.log"))
                        else:
                            row.update(run_lerobot(args, spec, run_dir))
                    except BenchError as err:
                        row["error"] = str(err)
                    runs.append(row)
                    (out / "runs.json").write_text(json.dumps(runs, indent=1))
                    print(f"vs_lerobot: {learner} {obs} {block} seed {seed}: curve {row['curve']} "
                          f"wall {row['wall_s']} {row.get('error', '')}", file=sys.stderr, flush=True)
    update_speed = None
    if args.update_speed > 0 or ("pixels" in args.obs and args.update_speed_pixels > 0):
        try:
            update_speed = run_update_speed(args, out)
        except BenchError as err:
            update_speed = {"error": str(err)}
        print(f"vs_lerobot: update speed {json.dumps(update_speed)}", file=sys.stderr, flush=True)
    summary = {"bench": "vs_lerobot", "env": BENCH_ENV, "budget": args.env_steps,
               "eval_episodes": args.eval_episodes, "seeds": args.seeds, "demos": demos or args.demos,
               "image_size": args.image_size if "pixels" in args.obs else None, "lerobot_fps": args.lerobot_fps,
               "results": summarize(runs, args.env_steps), "update_speed": update_speed,
               "png": plot(runs, out)}
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
