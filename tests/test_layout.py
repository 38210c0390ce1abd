"""The layout's rules, read from the code: no import cycle between packages, and core stays core.

Every ``import`` in robot_rl and in the drivers is counted, those inside functions and
``TYPE_CHECKING`` blocks included: a hidden import is still a dependency, and a cycle it
closes still makes the packages impossible to read, test or move one at a time.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from import_graph import ROOT, SOURCES, cycles, imports_of, plain_imports, source_files, unit, unit_graph

#: The core: knows no transport, no process boundary, no driver, no composition root.
CORE = ("robot_rl.config", "robot_rl.control", "robot_rl.envs", "robot_rl.sim", "robot_rl.tasks",
        "robot_rl.agents", "robot_rl.data", "robot_rl.reward", "robot_rl.reset",
        "robot_rl.interfaces", "robot_rl.errors", "robot_rl.paths", "robot_rl.jsonio")
#: What the core must never import, by unit or by third-party top-level name.
FORBIDDEN_IN_CORE = ("robot_rl.ros", "robot_rl.nodes", "robot_rl.training", "robot_rl.training.remote",
                     "robot_rl.assemble", "robot_rl.cli", "robot_rl_drivers", "rclpy", "cyclonedds", "grpc")
#: The core below the tasks: it gets a task's parts from its caller or the task object, never the registry.
BELOW_TASKS = tuple(c for c in CORE if c != "robot_rl.tasks")


def test_the_walker_sees_imports_inside_functions_and_relative_ones(tmp_path, monkeypatch):
    pkg = tmp_path / "robot_rl" / "a"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("from . import n\ndef f():\n    from robot_rl.b import thing\n    import grpc\n")
    monkeypatch.setitem(SOURCES, "robot_rl", tmp_path / "robot_rl")
    assert {"robot_rl.a", "robot_rl.a.n", "robot_rl.b", "robot_rl.b.thing", "grpc"} <= imports_of(pkg / "m.py")
    assert cycles({"x": {"y": set()}, "y": {"z": set()}, "z": {"x": set()}, "w": {"x": set()}}) == [["x", "y", "z"]]


def test_no_import_cycle_between_packages():
    graph = unit_graph()
    found = cycles(graph)
    detail = []
    for component in found:
        for a in component:
            for b in component:
                if b in graph[a]:
                    detail.append(f"{a} -> {b} ({', '.join(sorted(graph[a][b]))})")
    assert not found, "import cycles between packages:\n" + "\n".join(detail)


@pytest.mark.parametrize("core", CORE)
def test_core_imports_no_transport_process_boundary_or_driver(core):
    graph = unit_graph()
    bad = {there: files for there, files in graph.get(core, {}).items() if there in FORBIDDEN_IN_CORE}
    assert not bad, f"{core} imports " + "; ".join(f"{u} ({', '.join(sorted(f))})" for u, f in bad.items())


@pytest.mark.parametrize("core", BELOW_TASKS)
def test_the_core_below_the_tasks_never_asks_for_a_task(core):
    graph = unit_graph()
    assert "robot_rl.tasks" not in graph.get(core, {}), sorted(graph[core]["robot_rl.tasks"])


def test_only_the_thin_nodes_and_their_common_module_import_ros():
    offenders = []
    for path in sorted((ROOT / "robot_rl" / "nodes").glob("*.py")):
        if path.name.endswith("_node.py") or path.name == "common.py":
            continue
        if any(unit(name) == "robot_rl.ros" for name in imports_of(path)):
            offenders.append(path.name)
    assert not offenders, f"node logic modules import robot_rl.ros: {offenders} (move that part into a *_node.py)"


def test_dds_only_modules_live_in_ros_dds():
    """A module of robot_rl.ros that only the DDS backend imports belongs inside ros/dds/."""
    users: dict[str, set[str]] = defaultdict(set)
    everything = source_files() + sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "bench").glob("*.py"))
    for path in everything:
        who = str(path.relative_to(ROOT))
        for name in imports_of(path) if path.is_relative_to(ROOT / "robot_rl") or path.is_relative_to(
                ROOT / "robot_rl_drivers") else plain_imports(path):
            if name.startswith("robot_rl.ros.") and not name.startswith("robot_rl.ros.dds"):
                users[name.split(".")[2]].add(who)
    facade = [p.stem for p in (ROOT / "robot_rl" / "ros").glob("*.py") if p.stem != "__init__"]
    dds_only = [m for m in facade if users[m] and all(
        "ros/dds/" in u or u.startswith("tests/ros/dds/") for u in users[m])]
    assert not dds_only, f"modules only the DDS backend uses, outside ros/dds/: {dds_only}"
