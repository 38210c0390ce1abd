"""The bag tools under attack, at full size: damaged demo bags, decompression bombs, YAML bombs.

    python bench/bag_attacks.py [--bags 12] [--episodes 40] [--steps 50] [--bomb-mib 2560] [--small]

* **byte flips**: ``--bags`` demo bags of ``--episodes`` episodes (one chunk each), one
  random byte of each flipped: how many ``bag check`` calls say "cut short" (none should:
  no file is cut), how many are refused, and how many messages ``bag repair`` keeps
  against the messages of the chunks the flip did not touch (it should keep them all);
* **bombs**: an lz4 chunk inflating to ``--bomb-mib`` MiB (about 10 MiB on disk at the
  default), claiming its size or lying (claiming 4 KiB); a zstd chunk of about 80 KiB
  claiming ``--bomb-mib``, and one lying; a 470-byte alias-bomb ``metadata.yaml`` at 7
  and 9 levels; a 1000-deep one. Each through ``robot-rl bag check``, ``bag repair`` and
  ``demos import``, each command in a process of its own: exit code, peak RSS (MiB),
  seconds, and whether its error was one line.

Prints a table and ends with one JSON line of the figures. ``--small`` runs the same at a
size a test can afford.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from robot_rl.errors import RobotRLError
from robot_rl.ros.bag import hostile
from robot_rl.ros.bag.reader import open_bag, repair_bag


def flips(work: Path, bags: int, episodes: int, steps: int, seed: int) -> dict:
    """One random byte flipped in each of ``bags`` demo bags: check and repair figures."""
    rng = random.Random(seed)
    source = hostile.demo_bag(work / "source", episodes=episodes, steps=steps, seed=seed)
    original = {(m.topic, m.log_time, m.data) for m in open_bag(source).messages}
    spans = hostile.chunk_spans(hostile.mcap_of(source))
    size = hostile.mcap_of(source).stat().st_size
    figures = {"bags": bags, "chunks_per_bag": len(spans), "messages_per_bag": len(original), "cut_short": 0,
               "refused": 0, "damaged": 0, "repaired": 0, "intact_messages": 0, "kept_messages": 0,
               "intact_lost": 0, "foreign_messages": 0, "originals_kept": 0, "check_s": 0.0, "repair_s": 0.0}
    for i in range(bags):
        bag = work / f"flip{i}" / "bag"
        shutil.copytree(source, bag)
        offset = rng.randrange(size)
        hostile.flip_byte(hostile.mcap_of(bag), offset, rng.randrange(1, 256))
        hit = [s for s in spans if s[0] <= offset < s[0] + s[1]]
        intact = {m for m in original if not any(first <= m[1] <= last for _, _, first, last in hit)}
        t = time.perf_counter()
        try:
            read = open_bag(bag, keep_messages=False)
        except RobotRLError:
            figures["refused"] += 1
            continue
        figures["check_s"] += time.perf_counter() - t
        figures["cut_short"] += not read.complete
        figures["damaged"] += bool(read.damaged)
        t = time.perf_counter()
        report = repair_bag(bag)
        figures["repair_s"] += time.perf_counter() - t
        kept = {(m.topic, m.log_time, m.data) for m in open_bag(bag).messages}
        figures["repaired"] += not report.was_complete
        figures["originals_kept"] += bool(report.backup and report.backup.is_file())
        figures["intact_messages"] += len(intact)
        figures["kept_messages"] += len(kept & original)
        figures["intact_lost"] += len(intact - kept)
        figures["foreign_messages"] += len(kept - original)
        shutil.rmtree(bag.parent)
    figures["check_s"] = round(figures["check_s"], 3)
    figures["repair_s"] = round(figures["repair_s"], 3)
    return figures


def attack(work: Path, name: str, bag: Path, together: bool = False) -> dict:
    """``bag check``, ``bag repair`` and ``demos import`` of ``bag``, each in a fresh process
    (``together``: all three in one, whose peak RSS then stands for each)."""
    commands = {"check": ["bag", "check", str(bag)], "repair": ["bag", "repair", str(bag)],
                "import": ["demos", "import", str(bag), str(work / f"{name}_out")]}
    if together:
        results, rss, _ = hostile.run_measured(list(commands.values()), timeout_s=300)
        measured = [(r, r.get("peak_mib", rss), r["seconds"]) for r in results]
    else:
        measured = []
        for argv in commands.values():
            (result,), rss, wall = hostile.run_measured([argv], timeout_s=300)
            measured.append((result, rss, wall))
    out = {}
    for label, (result, rss, seconds) in zip(commands, measured):
        err_lines = [line for line in result["err"].splitlines() if line.strip()]
        said = err_lines[0] if err_lines else (result["out"].splitlines() or [""])[0]
        out[label] = {"rc": result["rc"], "rss_mib": round(rss, 1), "seconds": round(seconds, 2),
                      "one_line": len(err_lines) <= 1 and "Traceback" not in result["err"], "said": said[:300]}
    return out


def bombs(work: Path, bomb_mib: int, demo: Path, together: bool) -> dict:
    inflated = bomb_mib << 20
    cases = {}
    built = {}
    t = time.perf_counter()
    built["lz4_claims"] = hostile.bomb_bag(work / "lz4_claims", "lz4", inflated)
    built["lz4_lies"] = hostile.bomb_bag(work / "lz4_lies", "lz4", inflated, claimed=4096)
    built["zstd_claims"] = hostile.bomb_bag(work / "zstd_claims", "zstd", inflated)
    built["zstd_lies"] = hostile.bomb_bag(work / "zstd_lies", "zstd", inflated, claimed=4096)
    for levels in (7, 9):
        shutil.copytree(demo, work / f"alias{levels}")
        hostile.alias_bomb_metadata(work / f"alias{levels}", levels)
    shutil.copytree(demo, work / "deep1000")
    hostile.deep_metadata(work / "deep1000", 1000)
    built.update({k: work / k for k in ("alias7", "alias9", "deep1000")})
    print(f"built the hostile bags in {time.perf_counter() - t:.1f} s")
    for name, bag in built.items():
        file = hostile.mcap_of(bag) if name.startswith(("lz4", "zstd")) else bag / "metadata.yaml"
        cases[name] = {"file_bytes": file.stat().st_size, **attack(work, name, bag, together)}
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bags", type=int, default=12)
    parser.add_argument("--episodes", type=int, default=40, help="episodes (= chunks) per demo bag")
    parser.add_argument("--steps", type=int, default=50, help="steps per episode")
    parser.add_argument("--bomb-mib", type=int, default=2560, help="what the bombs inflate to (MiB)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--small", action="store_true",
                        help="a size a test affords: 2 bags of 6 chunks, 300 MiB bombs, "
                        "the three commands of an attack in one process")
    args = parser.parse_args()
    if args.small:
        args.bags, args.episodes, args.steps, args.bomb_mib = 2, 6, 10, 300
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bag_attacks_") as tmp:
        work = Path(tmp)
        flip = flips(work / "flips", args.bags, args.episodes, args.steps, args.seed)
        demo = hostile.demo_bag(work / "small", episodes=3, steps=5)
        baseline = attack(work, "baseline", demo, args.small)
        cases = bombs(work / "bombs", args.bomb_mib, demo, args.small)
    print(f"byte flips: {flip['bags']} bags of {flip['chunks_per_bag']} chunks ({flip['messages_per_bag']} messages): "
          f"{flip['cut_short']} called cut short, {flip['refused']} refused, {flip['damaged']} damaged, "
          f"{flip['repaired']} repaired (originals kept: {flip['originals_kept']}); repair kept "
          f"{flip['kept_messages']} of {flip['intact_messages']} intact messages ({flip['intact_lost']} lost, "
          f"{flip['foreign_messages']} not in the original)")
    print(f"{'attack':<12} {'bytes':>9}  " + "  ".join(f"{c + ' rc/MiB/s':>22}" for c in ("check", "repair", "import")))
    for name, case in {"baseline": {"file_bytes": 0, **baseline}, **cases}.items():
        cells = "  ".join(f"{str(case[c]['rc']):>4} {case[c]['rss_mib']:>8.1f} {case[c]['seconds']:>7.2f}"
                          + (" " if case[c]["one_line"] else "!") for c in ("check", "repair", "import"))
        print(f"{name:<12} {case['file_bytes']:>9}  {cells}")
    for name, case in cases.items():
        print(f"  {name}: {case['check']['said']}")
    print(json.dumps({"bench": "bag_attacks", "small": args.small, "bomb_mib": args.bomb_mib, "flips": flip,
                      "baseline": baseline, "attacks": cases, "seconds": round(time.perf_counter() - start, 1)}))


if __name__ == "__main__":
    main()
