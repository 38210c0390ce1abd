"""``robot-rl demos export|import`` and ``robot-rl bag check|repair``: output, exit codes, one-line errors."""

from __future__ import annotations

import pytest
from demo_bags import arrays_of, make_demos

from robot_rl.cli import main


def one_error(capsys, *argv: str, code: int = 2) -> str:
    assert main(list(argv)) == code
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("robot-rl: "), lines
    return lines[0]


def test_export_then_import_through_the_cli(tmp_path, capsys):
    make_demos(tmp_path / "demos")
    assert main(["demos", "export", str(tmp_path / "demos"), str(tmp_path / "bag")]) == 0
    assert capsys.readouterr().out.strip() == f"exported 3 episodes (12 steps) into {tmp_path / 'bag'}"
    assert main(["demos", "import", str(tmp_path / "bag"), str(tmp_path / "back")]) == 0
    assert capsys.readouterr().out.strip() == f"imported 3 episodes (12 steps) into {tmp_path / 'back'}"
    assert len(arrays_of(tmp_path / "back")) == 3

    line = one_error(capsys, "demos", "import", str(tmp_path / "bag"), str(tmp_path / "back"))
    assert "already holds demos (3 episodes)" in line
    assert main(["demos", "import", str(tmp_path / "bag"), str(tmp_path / "back"), "--append"]) == 0
    assert len(arrays_of(tmp_path / "back")) == 6
    assert main(["demos", "import", str(tmp_path / "bag"), str(tmp_path / "back"), "--force"]) == 0
    assert len(arrays_of(tmp_path / "back")) == 3


@pytest.mark.parametrize("argv,error", [
    (["demos", "export", "{tmp}/demos", "{tmp}/bag2", "--force"], "--allow-loss are for import"),
    (["demos", "import", "{tmp}/bag", "{tmp}/x", "--force", "--append"], "give one"),
    (["demos", "import", "{tmp}/nothing", "{tmp}/x"], "no bag at"),
    (["demos", "export", "{tmp}/nothing", "{tmp}/bag3"], "demo directory not found"),
    (["demos", "import", "{tmp}/demos", "{tmp}/x"], "is not a rosbag2 MCAP bag"),
])
def test_mistakes_are_one_line(tmp_path, capsys, argv, error):
    make_demos(tmp_path / "demos")
    assert main(["demos", "export", str(tmp_path / "demos"), str(tmp_path / "bag")]) == 0
    capsys.readouterr()
    line = one_error(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert error in line


def test_bag_check_and_repair(tmp_path, capsys):
    make_demos(tmp_path / "demos")
    main(["demos", "export", str(tmp_path / "demos"), str(tmp_path / "bag")])
    capsys.readouterr()
    assert main(["bag", "check", str(tmp_path / "bag")]) == 0
    out = capsys.readouterr().out
    assert "complete; 70 messages readable on 6 topics" in out and "/demo/step" in out

    mcap = tmp_path / "bag" / "bag_0.mcap"
    mcap.write_bytes(mcap.read_bytes()[:-100])  # the footer and some summary gone
    assert main(["bag", "check", str(tmp_path / "bag")]) == 1
    out = capsys.readouterr().out
    assert "NOT complete: cut short" in out and f"robot-rl bag repair {tmp_path / 'bag'}" in out
    assert main(["bag", "repair", str(tmp_path / "bag")]) == 0
    assert "repaired: kept 70 messages" in capsys.readouterr().out
    assert main(["bag", "check", str(tmp_path / "bag")]) == 0
    assert main(["bag", "repair", str(tmp_path / "bag")]) == 0
    assert "already complete" in capsys.readouterr().out

    (tmp_path / "junk.mcap").write_bytes(b"not a bag")
    assert "not an MCAP file" in one_error(capsys, "bag", "check", str(tmp_path / "junk.mcap"))
