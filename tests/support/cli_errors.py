"""Running ``robot-rl`` in-process from a test that expects it to refuse its input."""

from __future__ import annotations

from typing import Any

from robot_rl.cli import main


def fails(capsys: Any, *argv: str) -> str:
    """Run robot-rl in-process; it must exit 2 with exactly one stderr line, ``robot-rl: ...``, returned."""
    assert main(list(argv)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("robot-rl: ")
    return lines[0]
