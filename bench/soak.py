"""Soak: a learner and two sim actors for a long while; memory, the replay log's bound, the UTD.

    python bench/soak.py [--minutes 30] [--starve] [--replay-capacity 5000] [--log-mb 2]

Starts ``robot-rl learner`` and two ``robot-rl actor`` processes (sim, ``--config``,
pick_cube by default) on 127.0.0.1, as a session would, and every ``--sample-s`` seconds
records each process's resident memory (``/proc/<pid>/status``), the replay log's size on
disk, and the learner's status (``learner/stats.json``: effective update-to-data ratio,
backlog, warnings, what the log pruned). At the end it stops them (SIGTERM: the learner
checkpoints) and reports (the clock starts once both actors stream):

* per process, the RSS slope in MB/hour (least-squares line over the samples after the
  first ``--warmup-s`` seconds), and its first, last and largest RSS;
* the replay log's size over time against its bound (``train.replay_log.max_mb`` =
  ``--log-mb``, with ``train.replay_capacity`` = ``--replay-capacity`` frames always kept),
  and whether it stayed within the bound plus one episode;
* the effective UTD and the backlog (last, largest, growth per hour), and whether the
  backlog warning fired and how often.

``--starve`` makes the learner unable to keep its ratio on purpose (``train.utd_ratio``
20, ten critics, actors that never wait): the warning must fire. Without it the actors
wait for the learner (``learning.sync_steps``, the warning's remedy) and it must not.
Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

WARNING = "behind its update-to-data ratio"
TOKEN = "soak-token"


def rss_mb(pid: int) -> float | None:
    """Resident set size of ``pid`` in MB (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def slope_per_hour(times: list[float], values: list[float]) -> float | None:
    """Least-squares slope of ``values`` over ``times`` (seconds), per hour; None for too few points."""
    if len(times) < 3 or max(times) - min(times) <= 0:
        return None
    return float(np.polyfit(np.asarray(times), np.asarray(values), 1)[0] * 3600.0)


def log_bytes(replay: Path) -> int:
    total = 0
    for p in replay.glob("episode_*.npz"):
        try:
            total += p.stat().st_size
        except OSError:
            pass  # pruned between the listing and the stat
    return total


def read_stats(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "learner" / "stats.json").read_text())
    except (OSError, ValueError):
        return {}


def learner_overrides(args: argparse.Namespace) -> list[str]:
    window = max(2.0, min(60.0, args.minutes * 60 / 6))
    sets = [f"train.replay_capacity={args.replay_capacity}", f"train.replay_log.max_mb={args.log_mb}",
            "train.total_env_steps=1000000000", "train.eval_episodes=3", "train.eval_video_episodes=0",
            f"train.eval_every={args.eval_every}", "train.torch_threads=1", "train.scripted_demos=5",
            f"learning.utd_window_s={window}", f"learning.log_every_s={min(10.0, window)}",
            "learning.checkpoint_every_s=120"]
    if args.starve:  # a ratio it cannot keep, updates made expensive, actors that never wait
        sets += ["train.utd_ratio=20", "agent.num_critics=10", "learning.sync_steps=0"]
    else:
        sets += ["learning.sync_steps=20"]
    return sets


def start(cmd: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "ROBOT_RL_TOKEN": TOKEN, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env)


def stop(proc: subprocess.Popen, timeout: float) -> int | None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)
        return None


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.run_dir or tempfile.mkdtemp(prefix="soak-"))
    run_dir = work / "run"
    work.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "robot_rl.cli"]
    sets = [a for s in learner_overrides(args) for a in ("--set", s)]
    learner = start(cli + ["learner", "--config", args.config, "--run-dir", str(run_dir), "--port", "0", "--force",
                           "--no-tensorboard", *(["--no-eval"] if args.no_eval else []), *sets], work / "learner.log")
    port_file = run_dir / "learner" / "port"
    deadline = time.monotonic() + 300
    while not port_file.exists():
        if learner.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"soak: the learner did not start; see {work / 'learner.log'}")
        time.sleep(0.2)
    port = int(port_file.read_text())
    actor_sets = [a for s in ([f"learning.actor_max_hz={args.actor_hz}"]
                              + [s for s in learner_overrides(args) if s.startswith("learning.sync_steps")])
                  for a in ("--set", s)]
    actors = [start(cli + ["actor", "--config", args.config, "--learner", f"127.0.0.1:{port}", "--actor-id",
                           f"sim-{i}", "--seed", str(i), "--no-progress", *actor_sets], work / f"actor{i}.log")
              for i in (1, 2)]
    procs = {"learner": learner, "actor_1": actors[0], "actor_2": actors[1]}
    deadline = time.monotonic() + 300  # the soak starts once both actors stream (imports, demos, connect)
    while len(read_stats(run_dir).get("actors", {})) < 2:
        if any(p.poll() is not None for p in procs.values()) or time.monotonic() > deadline:
            for proc in procs.values():
                stop(proc, 30)
            raise SystemExit(f"soak: the actors did not connect; see the logs in {work}")
        time.sleep(0.5)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in procs}
    log_series: list[tuple[float, int]] = []
    utd_series: list[dict[str, Any]] = []
    t0 = time.monotonic()
    end = t0 + args.minutes * 60
    while time.monotonic() < end:
        now = time.monotonic() - t0
        for name, proc in procs.items():
            mb = rss_mb(proc.pid)
            if mb is not None:
                samples[name].append((now, mb))
        log_series.append((now, log_bytes(run_dir / "replay")))
        stats = read_stats(run_dir)
        if stats.get("utd"):
            utd_series.append({"t": round(now, 1), "received": stats.get("received_steps"),
                               "updates": stats.get("updates"), **stats["utd"]})
        if any(p.poll() is not None for p in procs.values()):
            break
        time.sleep(max(0.0, min(args.sample_s, end - time.monotonic())))
    elapsed = time.monotonic() - t0
    alive = {name: p.poll() is None for name, p in procs.items()}
    for proc in actors:
        stop(proc, 60)
    code = stop(learner, 180)
    stats = read_stats(run_dir)
    return report(args, work, run_dir, samples, log_series, utd_series, stats, elapsed, alive, code)


def report(args, work, run_dir, samples, log_series, utd_series, stats, elapsed, alive, code) -> dict[str, Any]:
    rss = {}
    for name, series in samples.items():
        after = [(t, m) for t, m in series if t >= min(args.warmup_s, elapsed / 3)]
        slope = slope_per_hour([t for t, _ in after], [m for _, m in after])
        values = [m for _, m in series]
        rss[name] = {"slope_mb_per_hour": None if slope is None else round(slope, 1),
                     "first_mb": round(values[0], 1) if values else None,
                     "last_mb": round(values[-1], 1) if values else None,
                     "max_mb": round(max(values), 1) if values else None, "samples": len(values)}
    files = sorted((run_dir / "replay").glob("episode_*.npz"))
    one_episode = max((p.stat().st_size for p in files), default=0)
    bound = args.log_mb * 1e6
    sizes = [b for _, b in log_series]
    plog = stats.get("replay_log", {})
    text = (work / "learner.log").read_text(errors="replace")
    warnings = text.count(WARNING)
    utd = stats.get("utd", {})
    keep = len(log_series) // 10 or 1
    return {
        "bench": "soak", "minutes": round(elapsed / 60, 2), "starve": args.starve, "config": args.config,
        "processes_alive_to_the_end": alive, "learner_exit": code,
        "rss": rss,
        "replay_log": {
            "bound_mb": args.log_mb, "replay_capacity_frames": args.replay_capacity,
            "max_mb": round(max(sizes, default=0) / 1e6, 3), "final_mb": round(plog.get("bytes", 0) / 1e6, 3),
            "one_episode_mb": round(one_episode / 1e6, 4),
            "held_within_bound": bool(sizes) and max(sizes) <= bound + one_episode,
            "kept_episodes": plog.get("episodes"), "kept_steps": plog.get("steps"),
            "pruned_episodes": plog.get("pruned_episodes"), "pruned_steps": plog.get("pruned_steps"),
            "pruned_mb": round(plog.get("pruned_bytes", 0) / 1e6, 3), "prunes": plog.get("prunes"),
            "size_over_time_mb": [[round(t), round(b / 1e6, 3)] for t, b in log_series[::keep]],
        },
        "utd": {
            "configured": utd.get("configured"), "effective_last_window": utd.get("effective"),
            "overall": round(stats["updates"] / max(1, stats["received_steps"]), 4) if stats.get("updates") else None,
            "backlog_last": utd.get("backlog"), "backlog_max": utd.get("max_backlog"),
            "backlog_growth_per_hour": utd.get("backlog_growth_per_hour"), "window_s": utd.get("window_s"),
            "behind_at_end": utd.get("behind"),
            "over_time": [[u["t"], u.get("effective"), u.get("backlog")] for u in utd_series[::keep]],
        },
        "warning_fired": warnings > 0, "warnings_logged": warnings, "warnings_counted": utd.get("warnings"),
        "warning_names_remedy": "learning.sync_steps" in text.split(WARNING, 1)[1][:600] if warnings else None,
        "received_steps": stats.get("received_steps"), "updates": stats.get("updates"),
        "evals": [[e.get("grid_steps"), e.get("env_steps"), e.get("updates"), e.get("success_rate")]
                  for e in stats.get("evals", [])],
        "work_dir": str(work),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="how long the actors run (default 30)")
    parser.add_argument("--starve", action="store_true", help="a learner that cannot keep its ratio: it must warn")
    parser.add_argument("--config", default="configs/pick_cube.yaml")
    parser.add_argument("--replay-capacity", type=int, default=5000, help="online buffer frames (always kept)")
    parser.add_argument("--log-mb", type=float, default=2.0, help="train.replay_log.max_mb")
    parser.add_argument("--eval-every", type=int, default=5000, help="train.eval_every")
    parser.add_argument("--actor-hz", type=float, default=0.0, help="learning.actor_max_hz (0: as fast as they go)")
    parser.add_argument("--sample-s", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--warmup-s", type=float, default=120.0, help="samples before this are left out of slopes")
    parser.add_argument("--no-eval", action="store_true", help="the learner does not evaluate")
    parser.add_argument("--run-dir", help="working folder (default: a new temporary one, kept)")
    args = parser.parse_args()
    if not (args.minutes > 0 and args.sample_s > 0 and args.log_mb > 0 and args.replay_capacity >= 2):
        print("soak: --minutes, --sample-s and --log-mb must be > 0, --replay-capacity >= 2", file=sys.stderr)
        raise SystemExit(2)
    figures = run(args)
    rl, utd = figures["replay_log"], figures["utd"]
    for name, r in figures["rss"].items():
        print(f"{name}: RSS {r['first_mb']} -> {r['last_mb']} MB (max {r['max_mb']}), slope {r['slope_mb_per_hour']} "
              "MB/hour")
    print(f"replay log: max {rl['max_mb']} MB, final {rl['final_mb']} MB against a bound of {rl['bound_mb']} MB "
          f"(held: {rl['held_within_bound']}); pruned {rl['pruned_episodes']} episodes, {rl['pruned_mb']} MB")
    print(f"UTD: effective {utd['effective_last_window']} of {utd['configured']}, backlog {utd['backlog_last']} "
          f"(max {utd['backlog_max']}); warning fired: {figures['warning_fired']} ({figures['warnings_logged']}x)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
