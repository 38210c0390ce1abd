"""External pushes on the sim arms: does the box fault notice, hold and recover?

    python bench/push_attacks.py [--config <task config>] [--small]

For each sim arm (the Panda's impedance law, the UR5e's admittance law), each of the six
directions (+-x, +-y, +-z) and each force level (0.3, 0.6 and 0.9 x the UR5e's
force-sensor limit, ``robot.admittance.force_limit``, so the sensor never saturates), a
fresh arm is pushed on the hand while a policy keeps commanding the pose it started at,
then the force is taken off and ``recover()`` is tried every 0.1 s
(:func:`robot_rl.sim.push.push_attack`). Per case: the farthest the TCP got outside the
box and the farthest the hand was turned past the box's orientation bounds, whether and
how soon the law faulted (and how far out it was then), targets accepted
or target motion while faulted (both must be 0), whether and how soon it recovered once
the force was off. The last line is one JSON object: ``missed`` (past a margin with no
fault) and ``false_alarms`` (a fault with the TCP never past either margin) must be 0;
``rotation_faults`` counts the faults the turn raised before the position did.
``--small`` runs two directions at the top force level, with shorter pushes (the CI test).
"""

from __future__ import annotations

import argparse
import json
import logging
import time

import numpy as np

from robot_rl.paths import resolve_config
from robot_rl.sim import build_world
from robot_rl.sim.model import ARMS
from robot_rl.sim.push import DIRECTIONS, PushResult, push_attack
from robot_rl.tasks import load_config, make_task

LEVELS = (0.3, 0.6, 0.9)  # of the force-sensor limit


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def row(r: PushResult) -> str:
    return (f"{r.arm:<6} {r.direction:>4} {r.force_n:>7.1f} {r.max_outside_m * 1000:>9.1f} {r.max_outside_rad:>7.3f} "
            f"{'yes' if r.faulted else 'no':>7} {fmt(r.fault_after_s):>8} "
            f"{fmt(None if r.outside_at_fault_m is None else r.outside_at_fault_m * 1000, 1):>9} "
            f"{r.accepted_in_fault:>8} {r.target_moves_in_fault:>6} "
            f"{('yes' if r.recovered else 'NO') if r.faulted else '-':>9} {fmt(r.recovered_after_s):>8} "
            f"{'yes' if r.back_in_box else 'NO':>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/pick_cube.yaml", help="the task config whose scene is used")
    parser.add_argument("--small", action="store_true", help="two directions at the top force level (CI size)")
    parser.add_argument("--push-s", type=float, default=None, help="sim seconds each push lasts (default 1.5)")
    parser.add_argument("--release-s", type=float, default=12.0, help="sim seconds to come back and recover")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # every fault is in the table; the log would repeat it per case
    start = time.perf_counter()
    directions = ("+z", "-x") if args.small else tuple(DIRECTIONS)
    levels = (LEVELS[-1],) if args.small else LEVELS
    push_s = args.push_s if args.push_s is not None else (0.6 if args.small else 1.5)
    config = resolve_config(args.config)
    results: list[PushResult] = []
    print(f"{'arm':<6} {'dir':>4} {'force N':>7} {'out mm':>9} {'out rad':>7} {'faulted':>7} {'after s':>8} "
          f"{'at mm':>9} {'accepted':>8} {'moves':>6} {'recovered':>9} {'after s':>8} {'back':>5}")
    margin = margin_rad = limit = 0.0
    for arm in ARMS:
        for direction in directions:
            for level in levels:
                cfg = load_config(config, [f"sim.arm={arm}"])
                margin = cfg.robot.workspace.outside_margin_m
                margin_rad = cfg.robot.workspace.outside_margin_rad
                limit = cfg.robot.admittance.force_limit
                world = build_world(make_task(cfg), [])
                world.task.reset(np.random.default_rng(0))
                result = push_attack(world, direction, level * limit, push_s=push_s, release_s=args.release_s)
                world.close()
                results.append(result)
                print(row(result), flush=True)
    faulted = [r for r in results if r.faulted]

    def past_a_margin(r: PushResult) -> bool:
        return r.max_outside_m > margin or r.max_outside_rad > margin_rad

    summary = {
        "bench": "push_attacks", "config": args.config, "small": args.small, "margin_m": margin,
        "margin_rad": margin_rad,
        "force_levels_n": [round(level * limit, 1) for level in levels], "push_s": push_s, "cases": len(results),
        "faulted": len(faulted), "recovered": sum(r.recovered for r in faulted),
        "missed": sum(1 for r in results if not r.faulted and past_a_margin(r)),
        "false_alarms": sum(1 for r in faulted if not past_a_margin(r)),
        "rotation_faults": sum(1 for r in faulted if "rad outside" in (r.fault or "")),
        "accepted_in_fault": sum(r.accepted_in_fault for r in results),
        "target_moves_in_fault": sum(r.target_moves_in_fault for r in results),
        "not_back_in_box": sum(1 for r in results if not r.back_in_box),
        "max_outside_m": {arm: round(max((r.max_outside_m for r in results if r.arm == arm), default=0.0), 4)
                          for arm in ARMS},
        "max_outside_rad": {arm: round(max((r.max_outside_rad for r in results if r.arm == arm), default=0.0), 4)
                            for arm in ARMS},
        "max_outside_unfaulted_m": round(max((r.max_outside_m for r in results if not r.faulted), default=0.0), 4),
        "max_outside_unfaulted_rad": round(max((r.max_outside_rad for r in results if not r.faulted), default=0.0), 4),
        "max_fault_after_s": round(max((r.fault_after_s for r in faulted), default=0.0), 3),
        "max_outside_at_fault_m": round(max((r.outside_at_fault_m for r in faulted), default=0.0), 4),
        "max_outside_at_fault_rad": round(max((r.outside_at_fault_rad for r in faulted), default=0.0), 4),
        "max_recovered_after_s": round(max((r.recovered_after_s or 0.0 for r in faulted), default=0.0), 3),
        "wall_s": round(time.perf_counter() - start, 1),
        "rows": [[r.arm, r.direction, r.force_n, round(r.max_outside_m, 4), round(r.max_outside_rad, 4), r.faulted,
                  None if r.fault_after_s is None else round(r.fault_after_s, 3), r.recovered,
                  None if r.recovered_after_s is None else round(r.recovered_after_s, 3)] for r in results],
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
