"""Safety under attack: every command channel of the sim arm, at full size.

    python bench/safety_attacks.py [--targets 100000] [--config <task config>] [--channels robot,controller,core]
                                   [--arm panda|ur5e]

For each channel (``robot``: ``Robot.command`` / ``set_posture``; ``controller``: the
arm's control law, impedance on the Panda, admittance on the UR5e; ``core``: the
controller node's rules) it runs, each on a fresh arm: hostile targets (far, NaN, inf,
1e300, huge quaternions, malformed), far corner targets alternating every 1 to 12 physics
steps, a posture flood (where the arm has a posture, or through the node's rules) and a
gripper flood (robot_rl.sim.adversary). It prints, per attack and overall: the TCP's
largest excursion outside the box (mm), the largest spring force / (K clip), |tau| /
limit, torque rate / limit (impedance law), commanded speed and acceleration / limit
(admittance law), steps with NaN in the physics, commands rejected, and exceptions that
escaped a command entry point; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import asdict

from robot_rl.nodes.controller import ControllerCore
from robot_rl.paths import resolve_config
from robot_rl.sim.adversary import CHANNELS, SafetyFigures, run_attacks
from robot_rl.sim.model import ARMS
from robot_rl.tasks import load_config, make_task, sim_tasks

COLUMNS = ("max_box_excursion_mm", "max_spring_ratio", "max_torque_ratio", "max_torque_rate_ratio",
           "max_speed_ratio", "max_acc_ratio", "nonfinite_steps", "rejects", "escapes", "half_applied")


def row(name: str, f: SafetyFigures) -> str:
    return (f"{name:<24} {f.commands:>8} {f.steps:>9} {f.max_box_excursion_mm:>9.2f} {f.max_spring_ratio:>7.3f} "
            f"{f.max_torque_ratio:>7.3f} {f.max_torque_rate_ratio:>7.3f} {f.max_speed_ratio:>7.3f} "
            f"{f.max_acc_ratio:>7.3f} {f.nonfinite_steps:>6} {f.rejects:>8} {f.escapes:>7} {f.half_applied:>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=sim_tasks()[0].config,
                        help="the task config whose scene the arm is attacked in (default: the registry's first)")
    parser.add_argument("--targets", type=int, default=100_000, help="hostile targets per channel")
    parser.add_argument("--postures", type=int, default=20_000, help="hostile postures per channel")
    parser.add_argument("--grippers", type=int, default=20_000, help="hostile gripper commands per channel")
    parser.add_argument("--alternation-s", type=float, default=6.0, help="sim seconds per alternation period")
    parser.add_argument("--channels", default=",".join(CHANNELS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arm", choices=list(ARMS), default=None, help="the sim arm (sim.arm; default: the config's)")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # every rejection is counted; logging them would only slow this down
    cfg = load_config(resolve_config(args.config), [f"sim.arm={args.arm}"] if args.arm else [])
    start = time.perf_counter()
    print(f"arm: {cfg.sim.arm}")
    print(f"{'attack':<24} {'commands':>8} {'steps':>9} {'box mm':>9} {'spring':>7} {'|tau|':>7} {'dtau':>7} "
          f"{'speed':>7} {'acc':>7} {'NaN':>6} {'rejects':>8} {'escapes':>7} {'half':>5}")
    overall = SafetyFigures()
    per_channel = {}
    for channel in args.channels.split(","):
        results = run_attacks(cfg, channel, targets=args.targets, alternation_periods=tuple(range(1, 13)),
                              alternation_s=args.alternation_s, postures=args.postures, grippers=args.grippers,
                              seed=args.seed, make_core=lambda robot, watchdog_s, clock: ControllerCore(
                                  robot, watchdog_s, clock=clock), make_task=make_task)
        total = SafetyFigures()
        for name, figures in results.items():
            print(row(f"{channel}/{name}", figures))
            total = total.merge(figures)
        per_channel[channel] = {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(total).items()}
        overall = overall.merge(total)
    print(row("all", overall))
    summary = {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(overall).items()}
    print(json.dumps({"bench": "safety_attacks", "config": args.config, "arm": cfg.sim.arm,
                      "targets_per_channel": args.targets,
                      "alternation_periods": "1-12", "wall_s": round(time.perf_counter() - start, 1),
                      **summary, "channels": per_channel}))


if __name__ == "__main__":
    main()
