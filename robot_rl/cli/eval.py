"""``robot-rl eval``: run a saved policy for N episodes, report its success rate, save a video.

    robot-rl eval runs/pick_cube [--episodes 10] [--seed 0] [--set key=value ...] [--graph]

RUN_DIR is a ``robot-rl train`` or a ``robot-rl learner`` run directory (or its
``checkpoint/`` folder): both write the one checkpoint format
(:mod:`robot_rl.training.checkpoint`). The policy acts with its mean action.

* Direct (default): the gymnasium sim env, episode ``i`` reset with seed ``--seed + i``
  (:func:`robot_rl.training.evaluation.evaluate`, as the trainer evaluates), success by
  the task's own verdict; every rendered frame goes into ``--video`` (MP4, mp4v).
* ``--graph``: the way a robot runs it: ``robot-rl launch``'s machinery starts the sim
  node and the actor node with ``ros.policy: checkpoint`` for ``ros.episodes`` episodes
  (no person, no recording); success is what the actor node books. No video in this
  mode (the frames stay in the node graph).

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
    parser.add_argument("run_dir", help="a robot-rl train or robot-rl learner run directory")
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
    if args.graph:
        result = _run_graph(cfg, state, path, run_dir, args, seed, out)
    else:
        video = None if args.no_video else Path(args.video) if args.video else out / "eval.mp4"
        result = _run_sim(cfg, state, path, args.episodes, seed, video)
    report = {"task": cfg.task.name, "run_dir": str(run_dir), "checkpoint": str(path), "kind": state.get("kind"),
              "updates": state.get("agent", {}).get("critic_updates"), "mode": "graph" if args.graph else "sim",
              "seed": seed, **result}
    faults = report.get("policy_faults") or []
    print(f"{cfg.task.name}: success {report['successes']}/{report['episodes']} ({report['success_rate']:.0%}) "
          f"in {report['mode']}, policy of the {report['kind']} run {run_dir} ({report['updates']} updates)"
          + (f"; video {report['video']}" if report.get("video") else "")
          + (f"; {len(faults)} episode(s) failed on a refused action, the first (episode {faults[0]['episode']}, "
             f"step {faults[0]['step']}): {faults[0]['reason']}" if faults else ""))
    print(jsonio.dumps(report))
    return 0


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
    from robot_rl.agents.policy_check import ActionGuard, EndOnRefusal
    from robot_rl.assemble import make_env, policy_view
    from robot_rl.training.evaluation import EpisodeVideo, evaluate
    from robot_rl.training.saved_policy import build_policy

    env: Any = policy_view(make_env(cfg, render_mode="rgb_array" if video else None), cfg)
    try:
        first, _ = env.reset(seed=seed)  # a recorded observation for the check: the first episode's first
        saved = build_policy(state, path, cfg.agent, env.observation_space, env.action_space, recorded=[first])
        guard = ActionGuard(env, saved.policy)
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
            "video_frames": env.frames if video is not None else 0, "policy_faults": faults.faults}


def _check_fits(cfg: Config, state: dict[str, Any], path: Path) -> None:
    """Refuse a checkpoint that does not fit before any node starts: one line, not a dead node."""
    from robot_rl.assemble import config_spaces_env
    from robot_rl.training.saved_policy import build_policy

    env = config_spaces_env(cfg)  # the actor's spaces from the config alone: no sim (a real-only task has none)
    try:
        build_policy(state, path, cfg.agent, env.observation_space, env.action_space)
    finally:
        env.close()


def _run_graph(cfg: Config, state: dict[str, Any], path: Path, run_dir: Path, args: argparse.Namespace,
               seed: int, out: Path) -> dict[str, Any]:
    """Episodes through the node graph: the sim node and the actor node with ``ros.policy: checkpoint``."""
    import yaml

    from robot_rl.data.durable import durable_mkdir
    from robot_rl.nodes.description import build_graph
    from robot_rl.nodes.launcher import Launcher

    _check_fits(cfg, state, path)
    data = to_dict(cfg)
    data["ros"].update(policy="checkpoint", checkpoint=str(run_dir.resolve()), episodes=args.episodes, seed=seed,
                       demos_dir=None, reward_frames_dir=None)
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
            "success_rate": summary["successes"] / episodes if episodes else 0.0, "mean_return": None,
            "mean_length": summary["steps"] / episodes if episodes else 0.0, "video": None}


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
