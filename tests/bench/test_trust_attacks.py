"""bench/trust_attacks.py gathers the attack benches into one JSON line and judges their figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench_runs import run_bench

REPO = Path(__file__).resolve().parents[2]


def test_trust_attacks_runs_small_and_ends_with_one_json_line():
    result, _ = run_bench("trust_attacks.py", "--small", "--only", "push", timeout=600, only_json=False)
    assert result["bench"] == "trust_attacks" and result["ok"] == {"push": True}
    assert result["push"]["missed"] == 0 and result["push"]["faulted"] >= 1


def test_an_unknown_bench_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, "bench/trust_attacks.py", "--only", "bagz"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown bench bagz" in proc.stderr.strip().splitlines()[-1]
