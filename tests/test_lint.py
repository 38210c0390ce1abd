"""The lint rules in ruff.toml hold for the whole repository (ruff comes with the dev extra)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed: pip install -e .[dev] brings it")
    return [exe]


def test_ruff_passes_on_the_repository():
    out = subprocess.run([*ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_ruff_reads_the_project_configuration():
    out = subprocess.run([*ruff(), "check", "--show-settings", "robot_rl/__init__.py"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "ruff.toml" in out.stdout and "line_length = 120" in out.stdout.replace("linter.line_length", "line_length")
