"""``robot-rl launch`` progress: the nodes up and the episodes the actor finished, on the
status stream, with stand-in node processes (a fake interpreter that prints what an actor
node prints at each episode end)."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

from robot_rl.nodes.description import GraphDescription, NodeSpec
from robot_rl.nodes.launcher import Launcher

FAKE_PYTHON = f"""#!{sys.executable}
import signal, sys, time
name = next(a.split(":=", 1)[1] for a in sys.argv if a.startswith("__node:="))
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
if name == "actor_node":
    time.sleep(0.5)
    for i, result in enumerate(["success", "no success", "success"]):
        print(f"INFO robot_rl.nodes.actor: episode {{i}}: {{result}} in {{10 + i}} steps (1.0 s), return 1.00, "
              "0 intervention steps", flush=True)
        time.sleep(0.4)
    print("INFO robot_rl.nodes.actor: an episode 9: success in the log text of another line", flush=True)
    sys.exit(0)
while True:
    time.sleep(0.05)
"""


def test_launch_shows_the_nodes_up_and_the_episodes(tmp_path: Path):
    python = tmp_path / "fake_python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    graph = GraphDescription(tmp_path / "session.yaml", [NodeSpec("sim_node", "sim_node"),
                                                         NodeSpec("actor_node", "actor_node")])
    out, status = io.StringIO(), io.StringIO()
    launcher = Launcher(graph, tmp_path / "run", python=str(python), out=out, status=status, stop_timeout_s=5.0,
                        episodes=3, progress_every_s=0.1)
    assert launcher.run() == 0, out.getvalue()
    lines = status.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert all(re.fullmatch(r"launch: \d/3 episodes, successes \d, nodes up \d/2, up [a-z_ ]+", ln) for ln in lines)
    assert any(ln.startswith("launch: 0/3 episodes") and ln.endswith("nodes up 2/2, up sim_node actor_node")
               for ln in lines), lines
    assert any(ln.startswith("launch: 1/3 episodes, successes 1,") for ln in lines), lines
    # the last line: every episode counted once (the 4th line is no episode end), every node gone
    assert lines[-1] == "launch: 3/3 episodes, successes 2, nodes up 0/2, up none"
    assert "[actor_node] INFO robot_rl.nodes.actor: episode 2: success in 12 steps" in out.getvalue()


def test_no_progress_shows_a_line_at_the_start_and_the_end(tmp_path: Path):
    python = tmp_path / "fake_python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    graph = GraphDescription(tmp_path / "session.yaml", [NodeSpec("actor_node", "actor_node")])
    status = io.StringIO()
    launcher = Launcher(graph, tmp_path / "run", python=str(python), out=io.StringIO(), status=status,
                        progress=False, progress_every_s=0.1)
    assert launcher.run() == 0
    lines = status.getvalue().splitlines()  # quiet: no line every 0.1 s, but it says it started and how it ended
    assert lines[0].startswith("launch: 0 episodes, successes 0, nodes up ") and len(lines) == 2, lines
    assert lines[-1] == "launch: 3 episodes, successes 2, nodes up 0/1, up none"
    assert launcher.episodes == 3 and launcher.successes == 2
