"""The GPU figures the docs give, in one run with a deadline and one JSON file.

``bench/gpu_suite.sh`` runs this (``MUJOCO_GL=egl`` unless set). Parts, in this order,
each with its own time budget inside one global deadline:

* ``learner``: ``Learner.update()`` rate (``bench/learner_speed.py``'s measurement) from
  state, from two square images with the small encoder, and with a frozen ResNet-10 whose
  features are cached in replay or computed for every sampled image; each plain, with
  ``train.prefetch: on`` and with ``train.precision: bf16``; the ResNet-10's forward
  images/s alone. On a GPU each case also records its peak device memory.
* ``render``: env steps/s of the sim env from state and with two cameras (MuJoCo
  rendering through ``MUJOCO_GL``; the GL renderer string says which device drew).
* ``sample_efficiency``: PegInsert from pixels (``configs/peg_insert_pixels.yaml`` at
  this image size), one seed, through ``bench/sample_efficiency.py`` with a short budget;
  the eval curve so far is kept if the budget runs out.
* ``compile``: the learner cases with ``train.compile: true`` and with everything on,
  most wanted first, each started only while enough time is left to compile.

Speed figures use a randomly initialised ResNet-10 of the right shape unless
``--weights`` names a local file (nothing is ever downloaded). Each part runs in a child
process, so a crash, a hang or an out-of-memory in one part costs that part only: a case
that cannot run is ``{"skipped": reason}``, one that broke is ``{"failed": reason}``.
Every figure is ``{"value": ..., "unit": ..., <its settings>}``. Usage::

    bash bench/gpu_suite.sh [--out PATH] [--device auto|cuda|cpu] [--weights PATH] [--deadline S]
                            [--parts learner render sample_efficiency compile] [--runs-dir DIR] [--tiny]

``--tiny`` uses CPU-affordable sizes (2x32x32 images, a few updates, a tiny budget) and
leaves compilation out. The file goes to ``--out`` (default ``$OUT/gpu_suite.json`` when
``OUT`` is set, else ``runs/gpu_suite/gpu_suite.json``); the last line printed is its
JSON. Exit 0 when no case failed, 1 when one did, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

T0 = time.monotonic()  # the suite's clock starts before the heavy imports: the deadline covers them
BENCH = Path(__file__).resolve().parent
FIGURE = "GPU_SUITE_FIGURE "  # how a worker hands one figure to the suite: FIGURE <name> <json>
PARTS = ("learner", "render", "sample_efficiency", "compile")
ENCODERS: dict[str, dict[str, Any] | None] = {  # learner case prefix -> agent.encoder settings (None: state)
    "state": None,
    "pixels_small": {"kind": "small"},
    "resnet10_cached": {"kind": "resnet10", "cache_features": True},
    "resnet10_per_batch": {"kind": "resnet10", "cache_features": False},
}
EAGER = ("plain", "prefetch", "bf16")
#: compiled cases, most wanted first: the deadline may leave room for only some of them
COMPILED = ("pixels_small_compile", "pixels_small_all", "resnet10_cached_compile", "state_compile",
            "resnet10_cached_all", "state_all", "resnet10_per_batch_compile", "resnet10_per_batch_all")


@dataclass(frozen=True)
class Sizes:
    """How big each part is: the full run fits 8 minutes on one H100, ``--tiny`` a CI CPU."""

    image: int  # square camera images, two cameras
    batch: int
    fill: int  # synthetic transitions in replay before timing
    state_updates: int  # timed updates at most, per case
    image_updates: int
    per_batch_updates: int
    case_seconds: float  # a case stops timing after this (at least 3 updates)
    backbone_images: int
    render_steps: int
    se_demos: int
    se_budget: int  # env steps
    se_eval_every: int
    se_eval_episodes: int
    se_extra: tuple[str, ...]  # further config overrides of the sample-efficiency run
    budgets: tuple[tuple[str, float], ...]  # part -> seconds at most
    deadline: float  # seconds for the whole suite
    compile_reserve: float  # a compiled case starts only with this much of its part's time left


FULL = Sizes(image=128, batch=256, fill=200, state_updates=300, image_updates=100, per_batch_updates=40,
             case_seconds=5.0, backbone_images=512, render_steps=500, se_demos=20, se_budget=5000,
             se_eval_every=1000, se_eval_episodes=10, se_extra=(),
             budgets=(("learner", 120.0), ("render", 40.0), ("sample_efficiency", 170.0), ("compile", 400.0)),
             deadline=450.0, compile_reserve=50.0)
TINY = Sizes(image=32, batch=16, fill=60, state_updates=10, image_updates=3, per_batch_updates=2,
             case_seconds=1.0, backbone_images=16, render_steps=15, se_demos=1, se_budget=80,
             se_eval_every=80, se_eval_episodes=1,
             se_extra=("train.batch_size=16", "train.learning_starts=40", "train.log_every=40",
                       "train.eval_video_episodes=0"),
             budgets=(("learner", 90.0), ("render", 60.0), ("sample_efficiency", 90.0), ("compile", 60.0)),
             deadline=240.0, compile_reserve=0.0)


def first_line(err: BaseException | str) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


# ---------------------------------------------------------------- workers (child processes)

def emit(name: str, record: dict[str, Any]) -> None:
    from robot_rl import jsonio

    print(f"{FIGURE}{name} {jsonio.dumps(record)}", flush=True)


def learner_cases(compiled: bool) -> list[str]:
    if compiled:
        return list(COMPILED)
    return [name if option == "plain" else f"{name}_{option}" for name in ENCODERS for option in EAGER]


def split_case(case: str) -> tuple[str, str]:
    """``resnet10_cached_bf16`` -> (``resnet10_cached``, ``bf16``)."""
    for option in ("prefetch", "bf16", "compile", "all"):
        if case.endswith("_" + option):
            return case[: -len(option) - 1], option
    return case, "plain"


def learner_figure(case: str, spec: dict[str, Any]) -> dict[str, Any]:
    """One timed learner case: ``bench/learner_speed.py``'s fill and timing at this suite's sizes."""
    import gymnasium as gym
    import numpy as np
    import torch
    from learner_speed import ACTION_DIM, EPISODE, OPTIONS, PLAIN, fill, obs_space, time_updates

    from robot_rl.config.agent import AgentConfig, EncoderConfig, TrainConfig
    from robot_rl.training.learner import Learner

    sizes = argparse.Namespace(**spec["sizes"])
    encoder_name, option = split_case(case)
    encoder = ENCODERS[encoder_name]
    execution = {**PLAIN, **(OPTIONS[option] if option != "plain" else {})}
    cameras = 0 if encoder is None else 2
    if encoder is not None and encoder["kind"] == "resnet10" and spec["weights"]:
        encoder = {**encoder, "pretrained_path": spec["weights"], "resnet_variant": spec["variant"]}
    agent_cfg = AgentConfig() if encoder is None else AgentConfig(encoder=EncoderConfig(**encoder))
    updates = (sizes.state_updates if encoder is None
               else sizes.per_batch_updates if encoder_name == "resnet10_per_batch" else sizes.image_updates)
    train_cfg = TrainConfig(batch_size=sizes.batch, replay_capacity=4 * EPISODE * 10, demo_capacity=4 * EPISODE * 10,
                            device=spec["device"], **execution)  # type: ignore[arg-type]
    space = obs_space(cameras, sizes.image)
    cuda = spec["device"] == "cuda"
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    learner = Learner(agent_cfg, train_cfg, space, gym.spaces.Box(-1, 1, (ACTION_DIM,), np.float32), seed=0)
    try:
        t0 = time.perf_counter()
        fill(learner, space, transitions=sizes.fill, rng=np.random.default_rng(0))
        fill_s = time.perf_counter() - t0
        rate, warmup_s = time_updates(learner, updates, max_seconds=sizes.case_seconds)
        replay_bytes = learner.online.bytes_per_slot()
    finally:
        learner.close()
    record: dict[str, Any] = {
        "value": rate, "unit": "updates/s", "batch": sizes.batch, "cameras": cameras,
        "image_size": sizes.image if cameras else None, "encoder": encoder["kind"] if encoder else "none",
        "cache_features": bool(encoder and encoder.get("cache_features")), **execution,
        "max_updates": updates, "max_seconds": sizes.case_seconds, "fill_transitions": sizes.fill,
        "fill_s": round(fill_s, 2), "warmup_s": round(warmup_s, 2), "replay_bytes_per_transition": replay_bytes,
    }
    if encoder is not None and encoder["kind"] == "resnet10":
        record["weights"] = spec["weights"] or "random init"
    if cuda:
        record["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return record


def backbone_figure(spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    from learner_speed import backbone_images_per_s

    size, images = spec["sizes"]["image"], spec["sizes"]["backbone_images"]
    rate = backbone_images_per_s(torch.device(spec["device"]), images=images, size=size)
    return {"value": rate, "unit": "images/s", "image_size": size, "batch": min(16, images),
            "images": images, "weights": "random init (speed does not depend on them)"}


def learner_worker(spec: dict[str, Any], compiled: bool) -> None:
    """Each case in turn, within the part's deadline; a case that cannot run is skipped, one that breaks failed."""
    from robot_rl.errors import ConfigError

    reserve = spec["sizes"]["compile_reserve"] if compiled else 0.0
    for case in spec["cases"]:
        left = spec["end_wall"] - time.time()
        if left <= max(reserve, 1.0):
            emit(case, {"skipped": f"the part's time budget had {max(left, 0):.0f} s left, "
                                   f"under the {max(reserve, 1.0):.0f} s a case needs"})
            continue
        print(f"learner {case} ...", flush=True)
        try:
            record = backbone_figure(spec) if case == "backbone_images_per_s" else learner_figure(case, spec)
        except ConfigError as err:  # what this machine cannot do (bf16 on an old GPU): a skip, not a failure
            record = {"skipped": first_line(err)}
        except Exception as err:  # noqa: BLE001 - one broken case (out of memory, a compiler error) costs itself only
            record = {"failed": f"{type(err).__name__}: {first_line(err)}"}
        shown = (f"{record['value']:.3f} {record['unit']}" if "value" in record
                 else next(f"{k}: {v}" for k, v in record.items()))
        print(f"learner {case}: {shown}", flush=True)
        emit(case, record)


def gl_renderer() -> str:
    """The GL renderer string of a MuJoCo context: which device draws (a GPU's name, or llvmpipe)."""
    try:
        import mujoco
        from OpenGL import GL

        ctx = mujoco.GLContext(16, 16)
        ctx.make_current()
        try:
            return GL.glGetString(GL.GL_RENDERER).decode()
        finally:
            ctx.free()
    except Exception as err:  # noqa: BLE001 - informative only; the figures below say whether rendering works
        return f"unknown ({type(err).__name__}: {first_line(err)})"


def render_worker(spec: dict[str, Any]) -> None:
    from sim_speed import measure

    size, steps = spec["sizes"]["image"], spec["sizes"]["render_steps"]
    task = "pick_cube"  # the scene of the CPU rendering figures (docs/troubleshooting.md), for comparison
    renderer = gl_renderer()
    print(f"render: GL renderer {renderer}", flush=True)
    cases = {"render_state": ["env.obs_mode=state"],
             f"render_pixels_2x{size}": ["env.obs_mode=pixels", "env.cameras=[front,wrist]",
                                         *(f"cameras.{c}.{d}={size}" for c in ("front", "wrist")
                                           for d in ("width", "height"))]}
    for name, overrides in cases.items():
        try:
            f = measure(task, overrides, steps)
            record = {"value": f["env_steps_per_s"], "unit": "env steps/s", "task": task, "steps": steps,
                      "real_time_factor": f["real_time_factor"], "physics_hz": f["physics_hz"],
                      "control_hz": f["control_hz"], "cameras": 0 if name == "render_state" else 2,
                      "image_size": None if name == "render_state" else size,
                      "mujoco_gl": os.environ.get("MUJOCO_GL", "egl"), "gl_renderer": renderer}
            print(f"{name}: {record['value']} env steps/s", flush=True)
        except Exception as err:  # noqa: BLE001 - a renderer that will not start costs this figure only
            record = {"failed": f"{type(err).__name__}: {first_line(err)}"}
            print(f"{name}: {record['failed']}", flush=True)
        emit(name, record)


def worker(part: str, spec_json: str) -> None:
    spec = json.loads(spec_json)
    if spec["threads"]:
        import torch

        torch.set_num_threads(spec["threads"])
    if part == "render":
        render_worker(spec)
    else:
        learner_worker(spec, compiled=part == "compile")


# ---------------------------------------------------------------- the suite (parent process)

class Child:
    """A child process whose output lines are read with a deadline; killed (its whole group) when it runs over."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                     start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def run(self, budget_s: float) -> tuple[list[str], bool]:
        """(every line, whether the budget ran out); progress lines are echoed as they come."""
        end, out, timed_out = time.monotonic() + budget_s, [], False
        while True:
            left = end - time.monotonic()
            if left <= 0:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):  # it may have exited just now
                    os.killpg(self.proc.pid, signal.SIGKILL)  # our own child's group, started above
                break
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if line is None:
                break
            out.append(line)
            if not line.startswith(FIGURE):
                print(f"  {line}", flush=True)
        self.proc.wait()
        return out, timed_out


class Suite:
    """Runs the parts in order inside one deadline and gathers their figures."""

    def __init__(self, args: argparse.Namespace, sizes: Sizes, device: str, variant: str | None) -> None:
        self.args, self.sizes, self.device, self.variant = args, sizes, device, variant
        self.start = T0
        self.deadline = args.deadline if args.deadline is not None else sizes.deadline
        self.figures: dict[str, dict[str, Any]] = {}
        self.parts: dict[str, dict[str, Any]] = {}

    def left(self) -> float:
        return self.deadline - (time.monotonic() - self.start)

    def budget(self, part: str) -> float:
        return min(dict(self.sizes.budgets)[part], self.left() - 2.0)

    def skip_all(self, names: list[str], reason: str) -> None:
        for name in names:
            self.figures[name] = {"skipped": reason}

    def spec(self, cases: list[str], budget: float) -> dict[str, Any]:
        """What a worker needs; ``end_wall`` is wall-clock time, so the child's own start-up counts against it."""
        return {"cases": cases, "end_wall": time.time() + budget, "device": self.device, "weights": self.args.weights,
                "variant": self.variant, "sizes": asdict(self.sizes), "threads": self.args.threads}

    def run_worker(self, part: str, names: list[str]) -> None:
        budget = self.budget(part)
        if budget < 3.0:
            self.skip_all(names, f"the suite's deadline ({self.deadline:.0f} s) was reached before this part")
            return
        t0 = time.monotonic()
        print(f"[{part}] {len(names)} cases, {budget:.0f} s at most", flush=True)
        # the child's own budget ends a little before the kill, so it can report its skips itself
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", part,
               "--spec", json.dumps(self.spec(names, max(budget - 2.0, 1.0)))]
        lines, timed_out = Child(cmd).run(budget)
        for line in lines:
            if line.startswith(FIGURE):
                name, payload = line[len(FIGURE):].split(" ", 1)
                self.figures[name] = json.loads(payload)
        tail = next((line for line in reversed(lines) if not line.startswith(FIGURE) and line.strip()), "no output")
        for name in names:
            if name not in self.figures:
                self.figures[name] = ({"skipped": f"the {part} part's time budget ({budget:.0f} s) ran out first"}
                                      if timed_out else {"failed": f"the {part} worker stopped: {tail.strip()}"})
        self.parts[part] = {"wall_s": round(time.monotonic() - t0, 1), "budget_s": round(budget, 1),
                            "timed_out": timed_out}

    def run_sample_efficiency(self) -> None:
        from robot_rl.training.curves import read_evals

        s = self.sizes
        name = f"sample_efficiency_peg_insert_pixels_2x{s.image}"
        budget = self.budget("sample_efficiency")
        if budget < 3.0:
            self.skip_all([name], f"the suite's deadline ({self.deadline:.0f} s) was reached before this part")
            return
        out = Path(self.args.runs_dir).resolve() / "sample_efficiency"
        if out.exists():  # a fresh folder: the curve read back below must be this run's
            shutil.rmtree(out)
        sets = [f"cameras.{c}.{d}={s.image}" for c in ("front", "wrist") for d in ("width", "height")]
        sets += list(s.se_extra)
        if self.args.weights:
            sets += ["agent.encoder.kind=resnet10", f"agent.encoder.pretrained_path={self.args.weights}",
                     f"agent.encoder.resnet_variant={self.variant}", "agent.encoder.cache_features=true"]
        cmd = [sys.executable, str(BENCH / "sample_efficiency.py"), "--pixels", "--tasks", "peg_insert",
               "--demos", str(s.se_demos), "--seeds", "0", "--budget", str(s.se_budget),
               "--eval-every", str(s.se_eval_every), "--eval-episodes", str(s.se_eval_episodes),
               "--device", self.device, "--out", str(out), *(a for kv in sets for a in ("--set", kv))]
        print(f"[sample_efficiency] PegInsert from 2x{s.image}x{s.image} pixels, {budget:.0f} s at most", flush=True)
        t0 = time.monotonic()
        child = Child(cmd)
        lines, timed_out = child.run(budget)
        wall = time.monotonic() - t0
        settings = {"task": "peg_insert_pixels", "image_size": s.image, "cameras": 2, "demos": s.se_demos,
                    "seed": 0, "budget_env_steps": s.se_budget, "eval_every": s.se_eval_every,
                    "eval_episodes": s.se_eval_episodes, "target": 0.95, "overrides": sets,
                    "encoder": "resnet10 (--weights)" if self.args.weights else "the config's (small)",
                    "wall_s": round(wall, 1)}
        curve = [pt for f in sorted(out.glob("*/evals.jsonl")) for pt in read_evals(f)]
        self.parts["sample_efficiency"] = {"wall_s": round(wall, 1), "budget_s": round(budget, 1),
                                           "timed_out": timed_out}
        tail = next((line for line in reversed(lines) if line.strip()), "no output")
        if not timed_out and child.proc.returncode != 0:
            self.figures[name] = {"failed": f"bench/sample_efficiency.py exited with {child.proc.returncode}: "
                                            f"{tail.strip()}", **settings}
            return
        summary = None
        if not timed_out and lines:
            try:
                summary = next(iter(json.loads(lines[-1])["results"].values()))
            except (ValueError, KeyError, StopIteration, TypeError):
                summary = None
        if summary is None and not curve:
            self.figures[name] = ({"skipped": f"the time budget ({budget:.0f} s) ran out before the first evaluation"}
                                  if timed_out else {"failed": f"bench/sample_efficiency.py stopped: {tail.strip()}"})
            return
        steps = summary["steps"][0] if summary else next((st for st, rate in curve if rate >= 0.95), None)
        self.figures[name] = {
            "value": steps, "unit": "env steps to 95% eval success", "reached": steps is not None,
            "best_success": max((rate for _, rate in curve), default=0.0), "curve": [list(p) for p in curve],
            "last_eval_env_steps": max((st for st, _ in curve), default=0), "complete": not timed_out, **settings}

    def run(self) -> None:
        wanted = self.args.parts
        learner = [*learner_cases(compiled=False), "backbone_images_per_s"]
        compiled = learner_cases(compiled=True)
        if "learner" in wanted:
            self.run_worker("learner", learner)
        if "render" in wanted:
            self.run_worker("render", ["render_state", f"render_pixels_2x{self.sizes.image}"])
        if "sample_efficiency" in wanted:
            self.run_sample_efficiency()
        if "compile" in wanted:
            if self.args.tiny:
                self.skip_all(compiled, "--tiny leaves out torch.compile (its first compile takes tens of seconds)")
            else:
                self.run_worker("compile", compiled)


def default_out() -> Path:
    return Path(os.environ["OUT"]) / "gpu_suite.json" if os.environ.get("OUT") else \
        Path("runs/gpu_suite/gpu_suite.json")


def version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="the JSON file (default: $OUT/gpu_suite.json "
                                                                "when OUT is set, else runs/gpu_suite/gpu_suite.json)")
    parser.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    parser.add_argument("--weights", default=None, metavar="PATH",
                        help="a local ResNet-10 weights file (default: random init, which is all speed needs)")
    parser.add_argument("--deadline", type=float, default=None, metavar="S",
                        help="seconds for the whole suite (default 450; --tiny 240)")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS), help="which parts to run")
    parser.add_argument("--runs-dir", default="runs/gpu_suite", help="where the sample-efficiency run writes")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads in the workers (0: default)")
    parser.add_argument("--tiny", action="store_true", help="CPU-affordable sizes for CI; no torch.compile")
    parser.add_argument("--worker", choices=["learner", "render", "compile"], help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.deadline is not None and not (0 < args.deadline < 86_400):
        parser.error(f"--deadline must be a number of seconds between 0 and 86400, got {args.deadline}")
    if args.threads < 0:
        parser.error(f"--threads must be 0 or more, got {args.threads}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.worker:
        worker(args.worker, args.spec)
        return 0
    import torch

    from robot_rl import jsonio
    from robot_rl.agents.execution import execution_device
    from robot_rl.agents.pretrained import read_backbone_weights
    from robot_rl.data.durable import durable_mkdir, durable_write_text
    from robot_rl.errors import ConfigError

    try:
        device = execution_device(args.device, key="--device")
        variant = read_backbone_weights(args.weights, where="--weights").variant if args.weights else "torchvision"
    except ConfigError as err:
        print(f"error: {first_line(err)}", file=sys.stderr)
        return 2
    out = args.out or default_out()
    try:  # a file that cannot be written is found now, not after eight minutes of measuring
        if out.is_dir():
            raise ConfigError(f"--out: {out} is a folder; name the JSON file to write")
        durable_mkdir(out.parent)
    except (OSError, ConfigError) as err:
        print(f"error: {first_line(err) if isinstance(err, ConfigError) else f'--out: {out}: {err}'}",
              file=sys.stderr)
        return 2
    if args.weights:  # the children and the sample-efficiency run read it, whatever their folder
        args.weights = str(Path(args.weights).expanduser().resolve())
    sizes = TINY if args.tiny else FULL
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"gpu suite on {name} ({'tiny' if args.tiny else 'full'} sizes), writing {out}", flush=True)
    suite = Suite(args, sizes, device.type, variant)
    suite.run()
    failed = sorted(k for k, v in suite.figures.items() if "failed" in v)
    record = {
        "bench": "gpu_suite", "tiny": args.tiny, "device": name, "device_type": device.type,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "cuda": torch.version.cuda, "mujoco": version("mujoco"), "numpy": version("numpy")},
        "mujoco_gl": os.environ.get("MUJOCO_GL", "egl"), "weights": args.weights or "random init",
        "deadline_s": suite.deadline, "wall_s": round(time.monotonic() - suite.start, 1),
        "sizes": {k: v for k, v in asdict(sizes).items() if k not in ("budgets", "se_extra")},
        "parts": suite.parts, "failed": failed, "figures": suite.figures,
    }
    text = jsonio.dumps(record)
    try:
        durable_write_text(out, text + "\n")
        print(f"wrote {out}: {len(suite.figures)} figures, {len(failed)} failed, {record['wall_s']} s", flush=True)
    except OSError as err:  # the figures are not lost: they are the line below
        print(f"error: --out: could not write {out}: {err}", file=sys.stderr, flush=True)
        failed.append("--out")
    print(text, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
