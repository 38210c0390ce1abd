"""``robot-rl rollout``: run the scripted expert in sim, report success, save an image strip."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from tqdm import tqdm

from robot_rl import jsonio
from robot_rl.paths import resolve_config
from robot_rl.tasks import get_task, load_config


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
    from robot_rl.assemble import make_env

    cfg = load_config(resolve_config(args.config), args.overrides)
    env = make_env(cfg, render_mode=None if args.no_strip else "rgb_array")
    expert = get_task(cfg.task.name).make_expert(env, noise=args.noise, seed=args.seed)
    successes, lengths, strip = 0, [], []
    bar = tqdm(range(args.episodes), desc=f"{cfg.task.name} scripted", unit="ep")
    for i in bar:
        obs, _ = env.reset(seed=args.seed + i)
        expert.reset()
        done, steps, info = False, 0, {"success": False}
        while not done:
            if i == 0 and not args.no_strip and steps % 3 == 0:
                strip.append(env.render())
            obs, _, terminated, truncated, info = env.step(expert.act(obs))
            done = terminated or truncated
            steps += 1
        successes += int(info["success"])
        lengths.append(steps)
        bar.set_postfix(success=f"{successes / (i + 1):.0%}")
    env.close()
    rate = successes / max(1, args.episodes)
    result = {"task": cfg.task.name, "episodes": args.episodes, "success_rate": rate,
              "mean_length": float(np.mean(lengths)) if lengths else 0.0}
    if strip:
        import cv2

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{cfg.task.name.lower()}_strip.png"
        cv2.imwrite(str(path), cv2.cvtColor(np.concatenate(strip[:12], axis=1), cv2.COLOR_RGB2BGR))
        result["image_strip"] = str(path)
    print(f"{cfg.task.name}: success {successes}/{args.episodes} ({rate:.0%}), "
          f"mean episode length {result['mean_length']:.1f} steps")
    if "image_strip" in result:
        print(f"image strip: {result['image_strip']}")
    print(jsonio.dumps(result))
    return 0
