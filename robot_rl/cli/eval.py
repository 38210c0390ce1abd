"""``robot-rl eval``: run a saved policy for N episodes, report its success rate, save a video.

    robot-rl eval runs/pick_cube [--episodes 10] [--seed 0] [--set key=value ...] [--graph]

RUN_DIR is a ``robot-rl train``, ``robot-rl learner`` or ``robot-rl train-bc`` run directory
(or its ``checkpoint/`` folder): all write the one checkpoint format
(:mod:`robot_rl.training.checkpoint`). The policy acts with its mean action; a BC policy
with its temporally ensembled chunks; a residual run's on top of the base policy its
checkpoint records, which is loaded and must act as the one it learned on
(:func:`robot_rl.training.base_acting.saved_actor`).

* Direct (default): the gymnasium sim env, episode ``i`` reset with seed ``--seed + i``
  (:func:`robot_rl.training.evaluation.evaluate`, as the trainer evaluates), success by
  the task's own verdict; every rendered frame goes into ``--video`` (MP4, mp4v).
* ``--graph``: the way a robot runs it: ``robot-rl launch``'s machinery starts the sim
  node and the actor node with ``ros.policy: checkpoint`` for ``ros.episodes`` episodes
  (no person, no recording); success is what the actor node books, and the report says
  why each failed episode failed (``failures``: a robot fault such as a stale state, the
  time limit, refused actions, the task). The sim node films the episodes
  (``ros.video``) into the same ``--video`` file as the direct mode.

The env comes from the checkpoint's own config unless ``--config`` names another, with
``--set`` on top; the policy network is built from that config's ``agent`` section and
must fit the checkpoint's spaces and weights, and pass the check every loaded policy
passes (:mod:`robot_rl.agents.policy_check`: run on sampled and recorded observations,
here also the first episode's first observation, it must give finite actions inside the
action space). A missing run, no checkpoint, a damaged one, one that does not fit or one
whose policy fails the check is one line on stderr and exit status 2.

If the policy still gives an action that cannot be sent during an episode (NaN, say),
the arm holds instead and that episode ends as failed; the report names the episode and
the reason (``policy_faults``). Ends with one summary line and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from robot_rl import jsonio
from robot_rl.config import Config, to_dict
from robot_rl.errors import ConfigError, RobotRLError
from robot_rl.paths import resolve_config
from robot_rl.tasks import config_from_dict, load_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a robot-rl train, robot-rl learner or robot-rl train-bc run directory")
    parser.add_argument("--episodes", type=int, default=10, help="how many episodes (default 10)")
    parser.add_argument("--seed", type=int, help="seed of the first episode (default: train.eval_seed)")
    parser.add_argument("--config", help="build the env from this config instead of the checkpoint's own")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set env.max_episode_steps=80")
    parser.add_argument("--graph", action="store_true", help="run through the node graph (sim node + actor node)")
    parser.add_argument("--out", help="folder for the video and the graph's files (default: <run_dir>/eval)")
    parser.add_argument("--video", help="video file (default: <out>/eval.mp4)")
    parser.add_argument("--no-video", action="store_true", help="write no video")
    parser.add_argument("--stop-timeout", type=float, default=10.0, help="--graph: seconds each node gets to exit")


def run(args: argparse.Namespace) -> int:
    if args.episodes < 1:
        raise ConfigError(f"--episodes must be at least 1, got {args.episodes}")
    _check_run_path(args.run_dir)
    from robot_rl.training.saved_policy import find_run, read_run  # torch: only once the arguments are checked

    run_dir = find_run(args.run_dir)
    state, path = read_run(run_dir)
    cfg = _config(args, state, path)
    seed = cfg.train.eval_seed if args.seed is None else args.seed
    out = Path(args.out) if args.out else run_dir / "eval"
    video = None if args.no_video else Path(args.video) if args.video else out / "eval.mp4"
    if args.graph:
        result = _run_graph(cfg, state, path, run_dir, args, seed, out, video)
    else:
        result = _run_sim(cfg, state, path, args.episodes, seed, video)
    report = {"task": cfg.task.name, "run_dir": str(run_dir), "checkpoint": str(path), "kind": state.get("kind"),
              "updates": state.get("agent", {}).get("critic_updates"), "mode": "graph" if args.graph else "sim",
              "seed": seed, **result}
    faults = report.get("policy_faults") or []
    print(f"{cfg.task.name}: success {report['successes']}/{report['episodes']} ({report['success_rate']:.0%}) "
          f"in {report['mode']}, policy of the {report['kind']} run {run_dir} ({report['updates']} updates)"
          + (f"; video {report['video']}" if report.get("video") else "")
          + (f"; {len(faults)} episode(s) failed on a refused action, the first (episode {faults[0]['episode']}, "
             f"step {faults[0]['step']}): {faults[0]['reason']}" if faults else "")
          + _failure_counts(report.get("failures") or []))
    print(jsonio.dumps(report))
    return 0


def _failure_counts(failures: list[dict[str, Any]]) -> str:
    """``; failed: 2 timeout, 1 robot fault (episodes 0, 3, 5)``, or nothing when none failed."""
    if not failures:
        return ""
    kinds: dict[str, int] = {}
    for failure in failures:
        kind = failure["why"].split(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    episodes = ", ".join(str(f["episode"]) for f in failures[:10]) + (", ..." if len(failures) > 10 else "")
    return (f"; failed: {', '.join(f'{n} {kind}' for kind, n in kinds.items())} (episode {episodes}; the first: "
            f"{failures[0]['why']})")


def _check_run_path(run_dir: str) -> None:
    """Refuse a run directory that is not there in a fraction of a second, before torch is imported
    (:func:`robot_rl.training.saved_policy.find_run` checks what it holds)."""
    path = Path(run_dir)
    if not path.exists():
        runs = sorted(str(p.parent) for p in path.parent.glob("*/checkpoint")) if path.parent.is_dir() else []
        known = f" (runs there: {', '.join(runs[:5])})" if runs else ""
        raise ConfigError(f"run directory {path} does not exist{known}")
    if not path.is_dir():
        raise ConfigError(f"{path} is not a run directory (give the folder that holds checkpoint/)")


def _config(args: argparse.Namespace, state: dict[str, Any], path: Path) -> Config:
    """The config the env is built from: ``--config`` or the checkpoint's, with ``--set``."""
    if args.config:
        return load_config(resolve_config(args.config), args.overrides)
    from robot_rl.training.saved_policy import run_config

    return run_config(state, path, args.overrides)


def _run_sim(cfg: Config, state: dict[str, Any], path: Path, episodes: int, seed: int,
             video: Path | None) -> dict[str, Any]:
    """Episodes in the gymnasium env, through the trainer's own evaluation."""
    from robot_rl.agents.policy_check import EndOnRefusal
    from robot_rl.assemble import make_env, policy_view
    from robot_rl.training.base_acting import saved_actor
    from robot_rl.training.evaluation import EpisodeVideo, evaluate

    env: Any = policy_view(make_env(cfg, render_mode="rgb_array" if video else None), cfg)
    saved = None
    try:
        first, _ = env.reset(seed=seed)  # a recorded observation for the check: the first episode's first
        saved = saved_actor(path, cfg.agent, env, recorded=[first], state=(state, path))
        env = saved.env  # a residual run's: its base acts here, the policy adds the residual
        guard = saved.guard()
        env = faults = EndOnRefusal(env, guard)
        if video is not None:
            env = EpisodeVideo(env, video)
        result = evaluate(env, guard, episodes, seed)  # the guard acts as the policy, checking each action
        written = env.finish() if video is not None else None
    finally:
        env.close()
    return {"episodes": result.episodes, "successes": round(result.success_rate * result.episodes),
            "success_rate": result.success_rate, "mean_return": result.mean_return,
            "mean_length": result.mean_length, "video": None if written is None else str(written),
            "video_frames": env.frames if video is not None else 0, "policy_faults": faults.faults,
            **_base_refusals(saved)}


def _base_refusals(saved: Any) -> dict[str, Any]:
    """A residual run's base actions and residuals refused (the arm held), when it has a base."""
    status = saved.status() if saved is not None else {}
    return {k: status[k] for k in ("base_refused", "residual_refused") if k in status}


def _check_fits(cfg: Config, state: dict[str, Any], path: Path) -> None:
    """Refuse a checkpoint that does not fit before any node starts: one line, not a dead node."""
    from robot_rl.assemble import config_spaces_env
    from robot_rl.training.base_acting import saved_actor

    env = config_spaces_env(cfg)  # the actor's spaces from the config alone: no sim (a real-only task has none)
    try:
        saved_actor(path, cfg.agent, env, state=(state, path))  # a residual run's base too, or a BC policy
    finally:
        env.close()


def _run_graph(cfg: Config, state: dict[str, Any], path: Path, run_dir: Path, args: argparse.Namespace,
               seed: int, out: Path, video: Path | None = None) -> dict[str, Any]:
    """Episodes through the node graph: the sim node and the actor node with ``ros.policy: checkpoint``."""
    import yaml

    from robot_rl.data.durable import durable_mkdir
    from robot_rl.nodes.description import build_graph
    from robot_rl.nodes.launcher import Launcher

    _check_fits(cfg, state, path)
    data = to_dict(cfg)
    data["ros"].update(policy="checkpoint", checkpoint=str(run_dir.resolve()), episodes=args.episodes, seed=seed,
                       demos_dir=None, reward_frames_dir=None,
                       video=str(video.resolve()) if video is not None else None)  # the sim node films
    data["intervention"]["device"] = "none"  # the policy alone is evaluated
    session_cfg = config_from_dict(data, file="robot-rl eval --graph")
    durable_mkdir(out)
    session = out / "session.yaml"
    session.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    lines = _Lines(echo=bool(getattr(args, "verbose", False)))
    code = Launcher(build_graph(session_cfg, session), out, out=lines, stop_timeout_s=args.stop_timeout).run()
    summary = lines.actor_summary()
    if summary is None or code != 0:
        raise RobotRLError(f"the node graph ended with exit status {code} before the actor's summary: "
                           f"{lines.last_error()} (its output: robot-rl -v eval ... --graph)")
    episodes = int(summary["episodes"])
    return {"episodes": episodes, "successes": int(summary["successes"]),
            "refused_actions": int(summary.get("refused_actions", 0)),
            **{k: int(summary[k]) for k in ("base_refused", "residual_refused") if k in summary},
            "success_rate": summary["successes"] / episodes if episodes else 0.0, "mean_return": None,
            "mean_length": summary["steps"] / episodes if episodes else 0.0,
            "failures": list(summary.get("failures", [])),
            "video": str(video) if video is not None and video.is_file() else None}


class _Lines:
    """The launcher's output: kept to find the actor node's summary, echoed to stderr with ``-v``."""

    def __init__(self, echo: bool) -> None:
        self.lines: list[str] = []
        self.echo = echo

    def write(self, text: str) -> int:
        self.lines.extend(text.splitlines())
        if self.echo:
            sys.stderr.write(text)
        return len(text)

    def flush(self) -> None:
        if self.echo:
            sys.stderr.flush()

    def actor_summary(self) -> dict[str, Any] | None:
        """The JSON line the actor node prints when it has run its episodes."""
        for line in reversed(self.lines):
            if line.startswith("[actor_node] {"):
                try:
                    return json.loads(line.split("] ", 1)[1])
                except ValueError:
                    return None
        return None

    def last_error(self) -> str:
        """The line that says what went wrong: a node's ``robot-rl:`` error, else the last line."""
        for line in reversed(self.lines):
            if "robot-rl:" in line or "Error" in line:
                return line.strip()
        return self.lines[-1].strip() if self.lines else "no output"
