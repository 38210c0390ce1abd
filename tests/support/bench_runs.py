"""Running a script of ``bench/`` from a test: its figures are the last line it prints, one JSON object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str, timeout: float = 600,
              only_json: bool = True) -> tuple[dict[str, Any], list[str]]:
    """Run ``bench/<script> args`` in the repository with one torch thread: (its last line parsed, all its lines).

    It must exit 0 (else the tails of its output are the failure) and end with a JSON line;
    with ``only_json`` that line must be the only one, as a bench's own figures are (a bench
    that gathers others passes False: their lines come before its own).
    """
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), lines[-3:]
    if only_json:
        assert sum(line.lstrip().startswith("{") for line in lines) == 1, lines  # exactly one JSON line, the last
    return json.loads(lines[-1]), lines
