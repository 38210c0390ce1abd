"""The bag tools attacked: damaged chunks, files named outside the bag, decompression and YAML bombs.

``robot-rl bag check|repair`` and ``robot-rl demos import`` on bags built by the project's
own writer, then damaged or made hostile (robot_rl.ros.bag.hostile): a damaged chunk in the
middle is skipped and named, never taken for the end of the file; repair keeps every
message of every intact chunk and the original file; an import that would drop episodes
says so and exits non-zero; nothing outside a bag folder is opened; memory and time stay
bounded whatever a chunk or metadata.yaml claims. bench/bag_attacks.py runs the same at
full size.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from robot_rl.cli import main
from robot_rl.data.demos import episode_files
from robot_rl.ros.bag import hostile
from robot_rl.ros.bag.reader import open_bag, repair_bag
from robot_rl.ros.bag.writer import BagError

WALL_S = 20.0  # per command, generous for a loaded 2-core machine
RSS_GROWTH_MIB = 128.0  # over the same commands on a small whole bag; a bomb unbounded costs 512 MiB or more


def one_error(capsys, *argv: str, code: int = 2) -> str:
    assert main(list(argv)) == code
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("robot-rl: "), lines
    return lines[0]


def messages(bag: Path) -> set[tuple[str, int, bytes]]:
    return {(m.topic, m.log_time, m.data) for m in open_bag(bag).messages}


def intact(original: set[tuple[str, int, bytes]], spans, offset: int) -> set[tuple[str, int, bytes]]:
    """The messages of every chunk whose bytes do not hold ``offset``."""
    hit = [s for s in spans if s[0] <= offset < s[0] + s[1]]
    return {m for m in original if not any(first <= m[1] <= last for _, _, first, last in hit)}


@pytest.fixture(scope="module")
def demo_bag(tmp_path_factory) -> Path:
    return hostile.demo_bag(tmp_path_factory.mktemp("demo"), episodes=6, steps=10)


def test_a_damaged_middle_chunk_is_named_skipped_repaired_around_and_refused_by_import(demo_bag, tmp_path, capsys):
    bag = tmp_path / "bag"
    shutil.copytree(demo_bag, bag)
    mcap = hostile.mcap_of(bag)
    original, spans = messages(bag), hostile.chunk_spans(mcap)
    assert len(spans) == 6  # one chunk per episode
    offset = spans[2][0] + spans[2][1] // 2
    hostile.flip_byte(mcap, offset)
    damaged_bytes = mcap.read_bytes()

    assert main(["bag", "check", str(bag)]) == 1
    out = capsys.readouterr().out
    assert f"skipped chunk 2 at byte {spans[2][0]}" in out and "cut short" not in out
    assert "complete, but DAMAGED (1 of 6 chunks unreadable" in out

    line = one_error(capsys, "demos", "import", str(bag), str(tmp_path / "out"))
    assert "leave out 1 of 6 episode(s): episode 2" in line and f"chunk 2 at byte {spans[2][0]}" in line
    assert "--allow-loss" in line and not (tmp_path / "out").exists()

    assert main(["bag", "repair", str(bag)]) == 0
    out = capsys.readouterr().out
    assert "dropped 1 damaged chunk(s)" in out and "bag_0.mcap.orig" in out
    assert (bag / "bag_0.mcap.orig").read_bytes() == damaged_bytes  # the original, byte for byte
    assert (bag / "metadata.yaml.orig").is_file()
    kept = messages(bag)
    assert intact(original, spans, offset) <= kept <= original  # no message of an intact chunk lost
    assert len(original) - len(kept) == sum(1 for m in original if spans[2][2] <= m[1] <= spans[2][3])
    assert main(["bag", "check", str(bag)]) == 0
    capsys.readouterr()

    # the repaired bag still says what was lost: import refuses, then imports the 5 whole episodes when told
    line = one_error(capsys, "demos", "import", str(bag), str(tmp_path / "out"))
    assert "episode 2 (none of its messages were readable)" in line and "an earlier 'bag repair' dropped" in line
    assert main(["demos", "import", str(bag), str(tmp_path / "out"), "--allow-loss"]) == 0
    assert "imported 5 episodes (50 steps)" in capsys.readouterr().out
    source = [np.load(p) for p in episode_files(demo_bag.parent / "demos")]
    back = [np.load(p) for p in episode_files(tmp_path / "out")]
    for a, b in zip(source[:2] + source[3:], back):
        assert all(a[k].tobytes() == b[k].tobytes() for k in ("obs/front", "action", "reward") if k in a.files)
        assert sorted(a.files) == sorted(b.files)
        assert all(np.array_equal(a[k], b[k]) for k in a.files if k != "episode_id")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_one_byte_flips_are_never_a_cut_and_repair_never_loses_an_intact_chunk(demo_bag, tmp_path, seed):
    rng = random.Random(seed)
    original, spans = messages(demo_bag), hostile.chunk_spans(hostile.mcap_of(demo_bag))
    size = hostile.mcap_of(demo_bag).stat().st_size
    for trial in range(6):
        bag = tmp_path / f"flip{trial}" / "bag"
        shutil.copytree(demo_bag, bag)
        # half anywhere, half on the framing: chunk headers and what follows each chunk (its message indexes)
        start, length = spans[rng.randrange(len(spans))][:2]
        offset = rng.randrange(size) if trial % 2 else rng.choice([start + rng.randrange(9),
                                                                   start + length + rng.randrange(60)])
        hostile.flip_byte(hostile.mcap_of(bag), offset, rng.randrange(1, 256))
        before = hostile.mcap_of(bag).read_bytes()
        try:
            read = open_bag(bag, keep_messages=False)
        except BagError as err:  # a flip into a chunk's size field: refused in one line, nothing written
            assert "claims" in str(err) and "\n" not in str(err)
            continue
        assert read.complete and read.problem is None, (offset, read.problem)
        report = repair_bag(bag)
        kept = messages(bag)
        assert intact(original, spans, offset) <= kept <= original, offset
        if not report.was_complete:
            assert report.backup is not None and report.backup.read_bytes() == before


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink", "symlinked-metadata"])
@pytest.mark.parametrize("command", [["bag", "check"], ["bag", "repair"], ["demos", "import"]])
def test_a_file_named_outside_the_bag_folder_is_refused_and_never_opened(tmp_path, capsys, how, command):
    victim = hostile.cut_bag(tmp_path / "victim")
    target = hostile.mcap_of(victim)
    before = (target.read_bytes(), target.stat().st_mtime_ns)
    meta_before = (victim / "metadata.yaml").read_bytes()
    bag = tmp_path / "bags" / "attack"
    bag.mkdir(parents=True)
    if how == "relative":
        hostile.escape_metadata(bag, f"../../victim/{target.name}")
    elif how == "absolute":
        hostile.escape_metadata(bag, str(target))
    elif how == "symlink":
        hostile.escape_metadata(bag, "attack_0.mcap")
        (bag / "attack_0.mcap").symlink_to(target)
    else:
        (bag / "metadata.yaml").symlink_to(victim / "metadata.yaml")
    argv = [*command, str(bag)] + ([str(tmp_path / "out")] if command[0] == "demos" else [])
    line = one_error(capsys, *argv)
    assert "outside the bag folder" in line and "metadata.yaml" in line
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before
    assert (victim / "metadata.yaml").read_bytes() == meta_before
    assert sorted(p.name for p in victim.iterdir()) == ["metadata.yaml", target.name]
    assert not (tmp_path / "out").exists()


def _bounded(results, rss: float, baseline: float) -> None:
    for r in results:
        assert r["rc"] is not None and r["seconds"] < WALL_S, r
    assert rss - baseline < RSS_GROWTH_MIB, (rss, baseline)


def _commands(bag: Path, out: Path) -> list[list[str]]:
    return [["bag", "check", str(bag)], ["bag", "repair", str(bag)], ["demos", "import", str(bag), str(out)]]


@pytest.fixture(scope="module")
def baseline_rss(demo_bag, tmp_path_factory) -> float:
    """Peak RSS (MiB) of the three commands on a small whole bag, in a process of their own."""
    work = tmp_path_factory.mktemp("baseline")
    shutil.copytree(demo_bag, work / "bag")
    results, rss, _ = hostile.run_measured(_commands(work / "bag", work / "out"))
    assert [r["rc"] for r in results] == [0, 0, 0], results
    return rss


def _one_line_error(result: dict, *needles: str) -> None:
    lines = [line for line in result["err"].splitlines() if line.strip()]
    assert result["rc"] == 2 and len(lines) == 1, result
    assert all(n in lines[0] for n in needles), lines


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_a_chunk_claiming_gigabytes_is_refused_before_decompressing(tmp_path, baseline_rss, compression):
    bag = hostile.bomb_bag(tmp_path / "bomb", compression, 64 << 20, claimed=5 << 29)  # claims 2.5 GiB
    before = hostile.mcap_of(bag).read_bytes()
    results, rss, _ = hostile.run_measured(_commands(bag, tmp_path / "out"))
    for r in results:
        _one_line_error(r, "chunk 0 at byte", "claims 2.5 GiB uncompressed", "refused before decompressing")
    _bounded(results, rss, baseline_rss)
    assert hostile.mcap_of(bag).read_bytes() == before and not (bag / "bomb_0.mcap.orig").exists()


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_a_chunk_that_lies_about_its_size_inflates_no_further_than_its_claim(tmp_path, baseline_rss, compression):
    bag = hostile.bomb_bag(tmp_path / "bomb", compression, 512 << 20, claimed=4096)  # 512 MiB of zeros inside
    size = hostile.mcap_of(bag).stat().st_size
    assert size < 4 << 20
    results, rss, _ = hostile.run_measured(_commands(bag, tmp_path / "out"))
    check, repair, imported = results
    assert check["rc"] == 1 and "inflates to more than the 4096 bytes it claims" in check["out"], check
    assert "cut short" not in check["out"]
    assert repair["rc"] == 0 and "dropped 1 damaged chunk(s)" in repair["out"], repair
    assert (bag / "bomb_0.mcap.orig").stat().st_size == size  # the original kept
    _one_line_error(imported, "not a robot_rl demo bag")
    _bounded(results, rss, baseline_rss)


@pytest.mark.parametrize("kind", ["alias7", "alias9", "deep1000"])
def test_a_hostile_metadata_yaml_is_one_line_quickly(demo_bag, tmp_path, baseline_rss, kind):
    bag = tmp_path / "bag"
    shutil.copytree(demo_bag, bag)
    if kind.startswith("alias"):
        path = hostile.alias_bomb_metadata(bag, int(kind[5:]))
        assert path.stat().st_size < 700
        needle = "alias"
    else:
        hostile.deep_metadata(bag, 1000)
        needle = "nest"
    results, rss, _ = hostile.run_measured(_commands(bag, tmp_path / "out"))
    for r in results:
        _one_line_error(r, "metadata.yaml", needle)
        assert "RecursionError" not in r["err"] and "Traceback" not in r["err"]
    _bounded(results, rss, baseline_rss)
    assert not list(bag.glob("*.orig")) and not (tmp_path / "out").exists()


def test_a_channel_qos_alias_bomb_is_read_through_the_guarded_reader(tmp_path):
    """The offered-QoS text in the file is YAML too: repair parses it with the guarded reader."""
    from robot_rl.ros.bag.reader import _qos_profiles

    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"b{i}: &b{i} [" + ",".join([f"*{'a' if i == 0 else f'b{i - 1}'}"] * 9) + "]\n" for i in range(8))
    assert _qos_profiles(bomb, "qos") == []
    assert _qos_profiles("- {depth: 1}\n", "qos") == [{"depth": 1}]


def test_max_chunk_mib_is_checked_and_a_bigger_limit_reads_a_genuinely_large_chunk(tmp_path, capsys):
    bag = hostile.bomb_bag(tmp_path / "big", "zstd", 9 * 350_000)  # an honest 3 MiB chunk (of zeros)
    line = one_error(capsys, "bag", "check", str(bag), "--max-chunk-mib", "2")
    assert "claims 3 MiB uncompressed, more than the 2 MiB" in line and "--max-chunk-mib" in line
    assert main(["bag", "check", str(bag), "--max-chunk-mib", "4"]) == 1  # read: zeros are no records a chunk holds
    assert "skipped chunk 0 at byte 36" in capsys.readouterr().out
    assert "--max-chunk-mib must be 1 to 65536" in one_error(capsys, "bag", "check", str(bag), "--max-chunk-mib", "0")


def test_repair_never_overwrites_an_earlier_backup(demo_bag, tmp_path):
    bag = tmp_path / "bag"
    shutil.copytree(demo_bag, bag)
    mcap = hostile.mcap_of(bag)
    spans = hostile.chunk_spans(mcap)
    hostile.flip_byte(mcap, spans[1][0] + spans[1][1] // 2)
    first = mcap.read_bytes()
    assert repair_bag(bag).backup == bag / "bag_0.mcap.orig"
    spans = hostile.chunk_spans(mcap)
    hostile.flip_byte(mcap, spans[0][0] + spans[0][1] // 2)
    second = mcap.read_bytes()
    assert repair_bag(bag).backup == bag / "bag_0.mcap.orig.1"
    assert (bag / "bag_0.mcap.orig").read_bytes() == first and (bag / "bag_0.mcap.orig.1").read_bytes() == second


def test_the_bench_runs_small_and_ends_with_its_figures_as_one_json_line():
    import json
    import subprocess
    import sys

    bench = Path(__file__).resolve().parents[2] / "bench" / "bag_attacks.py"
    done = subprocess.run([sys.executable, str(bench), "--small"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    flips = figures["flips"]
    assert flips["cut_short"] == 0 and flips["intact_lost"] == 0 and flips["foreign_messages"] == 0
    assert flips["kept_messages"] == flips["intact_messages"] > 0
    attacks = figures["attacks"]
    assert set(attacks) == {"lz4_claims", "lz4_lies", "zstd_claims", "zstd_lies", "alias7", "alias9", "deep1000"}
    for name, case in attacks.items():
        for command in ("check", "repair", "import"):
            result = case[command]
            assert result["one_line"] and result["rc"] in (0, 1, 2), (name, command, result)
            assert result["rss_mib"] - figures["baseline"][command]["rss_mib"] < RSS_GROWTH_MIB, (name, command)
    assert attacks["zstd_claims"]["check"]["rc"] == 2 and "chunk 0 at byte 36 claims 300 MiB" in \
        attacks["zstd_claims"]["check"]["said"]
