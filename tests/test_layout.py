"""The layout's rules, read from the code: no import cycle between packages, and core stays core.

Every ``import`` in robot_rl and in the drivers is counted, those inside functions and
``TYPE_CHECKING`` blocks included: a hidden import is still a dependency, and a cycle it
closes still makes the packages impossible to read, test or move one at a time.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"robot_rl": ROOT / "robot_rl", "robot_rl_drivers": ROOT / "drivers"}

#: Sub-packages that are units of their own (the learning plane inside the training wing).
NESTED_UNITS = ("robot_rl.training.remote",)

#: The core: knows no transport, no process boundary, no driver, no composition root.
CORE = ("robot_rl.config", "robot_rl.control", "robot_rl.envs", "robot_rl.sim", "robot_rl.tasks",
        "robot_rl.agents", "robot_rl.data", "robot_rl.reward", "robot_rl.reset",
        "robot_rl.interfaces", "robot_rl.errors", "robot_rl.paths")
#: What the core must never import, by unit or by third-party top-level name.
FORBIDDEN_IN_CORE = ("robot_rl.ros", "robot_rl.nodes", "robot_rl.training", "robot_rl.training.remote",
                     "robot_rl.assemble", "robot_rl.cli", "robot_rl_drivers", "rclpy", "cyclonedds", "grpc")


def module_name(path: Path) -> str:
    for top, folder in SOURCES.items():
        if path.is_relative_to(folder):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            return ".".join([top, *parts])
    raise ValueError(path)


def unit(module: str) -> str:
    """The package a module belongs to: ``robot_rl.<sub>``, a nested unit, or a drivers sub-package."""
    for nested in NESTED_UNITS:
        if module == nested or module.startswith(nested + "."):
            return nested
    parts = module.split(".")
    if parts[0] in SOURCES:
        return ".".join(parts[:2]) if len(parts) > 1 else parts[0]
    return parts[0]


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, wherever the statement sits, relative imports resolved."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # "from pkg import module"
    return found


def source_files() -> list[Path]:
    return sorted(p for folder in SOURCES.values() for p in folder.rglob("*.py") if "proto" not in p.parts
                  or p.name == "__init__.py")


def unit_graph() -> dict[str, dict[str, set[str]]]:
    """unit -> imported unit -> the files that make the edge (for the failure message)."""
    ours = {module_name(p) for p in source_files()} | {module_name(p) for p in
                                                         (ROOT / "robot_rl").rglob("*_pb2*.py")}
    graph: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in source_files():
        here = unit(module_name(path))
        for name in imports_of(path):
            if name.split(".")[0] in SOURCES and name not in ours:
                continue  # "from pkg import function": the package itself is already counted
            there = unit(name)
            if there != here:
                graph[here][there].add(str(path.relative_to(ROOT)))
    return graph


def cycles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


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
                ROOT / "drivers") else _plain_imports(path):
            if name.startswith("robot_rl.ros.") and not name.startswith("robot_rl.ros.dds"):
                users[name.split(".")[2]].add(who)
    facade = [p.stem for p in (ROOT / "robot_rl" / "ros").glob("*.py") if p.stem != "__init__"]
    dds_only = [m for m in facade if users[m] and all(
        "ros/dds/" in u or u.startswith("tests/ros/dds/") for u in users[m])]
    assert not dds_only, f"modules only the DDS backend uses, outside ros/dds/: {dds_only}"


def _plain_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found
