"""``robot-rl rollout``: run the scripted expert in sim, report success, save an image strip.

The strip is up to :data:`STRIP_FRAMES` frames of the first episode, evenly spaced from
its reset to its last step (every camera side by side, each named), each labelled with its
step number, the reward of that step and whether the task has succeeded; the last frame
also gets a green (success) or red (failure) border. The frames are wrapped into rows of
:data:`STRIP_COLUMNS`, read left to right and top to bottom (12 frames of two 128 px
cameras: a 1024x384 image, not one 3072x128 row).

Progress goes to stderr the way every long command shows it
(:mod:`robot_rl.training.progress`): a bar on a terminal, else a status line at the start,
every ``learning.log_every_s`` and at the end, e.g. ``rollout PickCube: 5/20 episodes,
success 100%``; with ``--set train.progress=false`` no bar, and a line only at the start,
once a minute and at the end.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from robot_rl import jsonio
from robot_rl.errors import ConfigError, RobotRLError
from robot_rl.paths import resolve_config
from robot_rl.tasks import get_task, load_config

STRIP_FRAMES = 12
STRIP_COLUMNS = 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config: a name (pick_cube) or a path")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0, help="first episode seed")
    parser.add_argument("--noise", type=float, default=0.0, help="expert action noise (std)")
    parser.add_argument("--out", default="runs/rollout", help="folder for the image strip")
    parser.add_argument("--no-strip", action="store_true", help="do not render the image strip")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set env.max_episode_steps=80")


def run(args: argparse.Namespace) -> int:
    if args.episodes < 1:
        raise ConfigError(f"--episodes must be at least 1, got {args.episodes}")
    from robot_rl.assemble import make_env
    from robot_rl.training.progress import Progress

    cfg = load_config(resolve_config(args.config), args.overrides)
    env = make_env(cfg, render_mode=None if args.no_strip else "rgb_array")
    expert = get_task(cfg.task.name).make_expert(env, noise=args.noise, seed=args.seed)
    successes, lengths, first_success = 0, [], False
    strip: list[tuple[np.ndarray, str]] = []  # (frame, caption) of every step of the first episode
    progress = Progress(f"rollout {cfg.task.name}", total=args.episodes, unit="episode",
                        enabled=cfg.train.progress, every_s=cfg.learning.log_every_s)
    progress.show(0, {"success": "-"})
    for i in range(args.episodes):
        if i:  # the episodes done so far; the last count is the closing line's
            progress.show(i, {"success": f"{successes / i:.0%}"})
        obs, _ = env.reset(seed=args.seed + i)
        expert.reset()
        done, steps, info = False, 0, {"success": False}
        keep = i == 0 and not args.no_strip
        if keep:
            strip.append((_frame(env), "t 0  reward -  success no"))
        while not done:
            obs, reward, terminated, truncated, info = env.step(expert.act(obs))
            done = terminated or truncated
            steps += 1
            if keep:
                strip.append((_frame(env), f"t {steps}  reward {float(reward):.2f}  "
                                            f"success {'yes' if info.get('success') else 'no'}"))
        successes += int(info["success"])
        if i == 0:
            first_success = bool(info["success"])
        lengths.append(steps)
    env.close()
    rate = successes / max(1, args.episodes)
    progress.close(args.episodes, {"success": f"{rate:.0%}"})
    result = {"task": cfg.task.name, "episodes": args.episodes, "success_rate": rate,
              "mean_length": float(np.mean(lengths)) if lengths else 0.0}
    if strip:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{cfg.task.name.lower()}_strip.png"
        write_strip(path, strip, success=first_success)
        result["image_strip"] = str(path)
    print(f"{cfg.task.name}: success {successes}/{args.episodes} ({rate:.0%}), "
          f"mean episode length {result['mean_length']:.1f} steps")
    if "image_strip" in result:
        print(f"image strip: {result['image_strip']}")
    print(jsonio.dumps(result))
    return 0


def _frame(env: object) -> np.ndarray:
    """What the env renders, every camera named (a RobotEnv's views), else its plain render."""
    from robot_rl.training.frames import camera_tiles

    views = getattr(getattr(env, "unwrapped", env), "render_views", None)
    named = views() if callable(views) else {}
    return camera_tiles(named) if named else env.render()  # type: ignore[attr-defined]


def write_strip(path: Path, frames: list[tuple[np.ndarray, str]], success: bool, count: int = STRIP_FRAMES,
                columns: int = STRIP_COLUMNS) -> Path:
    """Up to ``count`` of ``frames`` (evenly spaced, first and last included), labelled, in rows of ``columns``."""
    import cv2

    from robot_rl.training.frames import grid, label, mark_outcome

    picks = sorted(set(np.linspace(0, len(frames) - 1, min(count, len(frames))).round().astype(int).tolist()))
    tiles = [label(frames[i][0], frames[i][1]) for i in picks[:-1]]
    last, caption = frames[picks[-1]]
    tiles.append(mark_outcome(last, success, caption))
    if not cv2.imwrite(str(path), cv2.cvtColor(grid(tiles, columns), cv2.COLOR_RGB2BGR)):
        raise RobotRLError(f"cannot write the image strip {path}")
    return path
