"""Everything outside robot_rl that could lose data or stall the stack, attacked at full size.

    python bench/trust_attacks.py [--small] [--only bags,learner,push]

The sibling of ``bench/safety_attacks.py`` (hostile targets on every command channel): it
runs the benches of the surfaces that channel does not reach, each in a process of its own
so that one's peak memory is not another's, and gathers their figures:

* ``bags`` (``bench/bag_attacks.py``): 12 demo bags of 40 chunks with one random byte
  flipped each (called cut short, intact messages lost by ``repair``, originals kept), and
  the lz4, zstd and alias/depth bombs (peak RSS and seconds of ``bag check``, ``repair`` and
  ``demos import``);
* ``learner`` (``bench/learner_attacks.py``): a token holder's stalled calls against a
  legitimate actor (its rate attacked / alone, steps lost) and id takeovers (refused);
* ``push`` (``bench/push_attacks.py``): external pushes on both sim arms in all six
  directions up to 0.9 x the force limit (missed box faults, false alarms, recoveries).

Each bench prints its own table; the last line here is one JSON object holding each
bench's JSON line under its name, plus ``ok``: the figures the attacks must hold (nothing
called cut short or lost, every bomb refused in one line, the actor at >= 90% of its rate,
no takeover, no missed fault and no false alarm).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCHES = {"bags": "bag_attacks.py", "learner": "learner_attacks.py", "push": "push_attacks.py"}


def run_bench(script: str, small: bool) -> dict[str, Any]:
    """Run one bench, echoing its output; its last line, parsed (or why there was none)."""
    cmd = [sys.executable, str(HERE / script), *(["--small"] if small else [])]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=HERE.parent)
    print(proc.stdout, end="", flush=True)
    lines = proc.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        result = None
    if proc.returncode != 0 or not isinstance(result, dict):
        return {"failed": f"{script} exited {proc.returncode} without a JSON line"}
    return result


def holds(name: str, r: dict[str, Any]) -> bool:
    """Whether bench ``name``'s figures are the ones the attacks must leave."""
    if "failed" in r:
        return False
    if name == "bags":
        bombs = r["attacks"].values()
        refused = all(c["one_line"] and c["rc"] != 0 for a in bombs for k, c in a.items() if k == "import")
        return r["flips"]["cut_short"] == 0 and r["flips"]["intact_lost"] == 0 and refused
    if name == "learner":
        return r["min_flood_ratio"] >= 0.9 and r["steps_lost"] == 0 and r["takeovers_accepted"] == 0
    return r["missed"] == 0 and r["false_alarms"] == 0 and r["accepted_in_fault"] == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="each bench at its CI size")
    parser.add_argument("--only", default=",".join(BENCHES), help=f"a comma list of {', '.join(BENCHES)}")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in BENCHES]
    if unknown or not names:
        parser.error(f"--only: unknown bench {', '.join(unknown) or '(none)'}; choose from {', '.join(BENCHES)}")
    start = time.monotonic()
    figures: dict[str, Any] = {}
    for name in names:
        print(f"== {name}: bench/{BENCHES[name]}", flush=True)
        figures[name] = run_bench(BENCHES[name], args.small)
    ok = {name: holds(name, figures[name]) for name in names}
    print(" ".join(f"{name}: {'holds' if good else 'BROKEN'}" for name, good in ok.items()))
    print(json.dumps({"bench": "trust_attacks", "small": args.small, "ok": ok, **figures,
                      "wall_s": round(time.monotonic() - start, 1)}))
    return 0 if all(ok.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
