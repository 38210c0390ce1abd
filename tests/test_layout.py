"""The layout's rules, read from the code: no import cycle between packages, and core stays core.

Every ``import`` in robot_rl and in the drivers is counted, those inside functions and
``TYPE_CHECKING`` blocks included: a hidden import is still a dependency, and a cycle it
closes still makes the packages impossible to read, test or move one at a time.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from import_graph import ROOT, SOURCES, cycles, imports_of, module_name, plain_imports, source_files, unit, unit_graph

#: The core: knows no transport, no process boundary, no driver, no composition root.
CORE = ("robot_rl.config", "robot_rl.control", "robot_rl.envs", "robot_rl.sim", "robot_rl.tasks",
        "robot_rl.agents", "robot_rl.data", "robot_rl.reward", "robot_rl.reset",
        "robot_rl.interfaces", "robot_rl.errors", "robot_rl.paths", "robot_rl.jsonio", "robot_rl.arms")
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


#: The one way core reaches the drivers: the config loader (robot_rl/tasks/__init__.py) asks the
#: backend registries for settings classes, as it asks the task registry for params classes.
#: The registries and what they import are descriptions only (see the import-light test below).
REGISTRY_LOOKUPS = {"robot_rl.tasks": {"robot_rl_drivers.robots", "robot_rl_drivers.cameras"}}
REGISTRY_USER = ROOT / "robot_rl" / "tasks" / "__init__.py"


@pytest.mark.parametrize("core", CORE)
def test_core_imports_no_transport_process_boundary_or_driver(core):
    graph = unit_graph()
    allowed = REGISTRY_LOOKUPS.get(core, set())
    bad = {there: files for there, files in graph.get(core, {}).items()
           if (there in FORBIDDEN_IN_CORE or there.startswith("robot_rl_drivers")) and not (
               there in allowed and files == {str(REGISTRY_USER.relative_to(ROOT))})}
    assert not bad, f"{core} imports " + "; ".join(f"{u} ({', '.join(sorted(f))})" for u, f in bad.items())


def test_core_asks_the_backend_registries_only_for_settings_classes():
    drivers = {name for name in imports_of(REGISTRY_USER) if name.startswith("robot_rl_drivers")}
    assert drivers == {"robot_rl_drivers.robots", "robot_rl_drivers.robots.settings_class",
                       "robot_rl_drivers.cameras", "robot_rl_drivers.cameras.settings_class"}, sorted(drivers)


# --------------------------------------------------------------------------- backends like tasks

DRIVERS = ROOT / "robot_rl_drivers"
KINDS = ("robots", "cameras")
#: What a backend's description (registry, SPEC, settings) may import: the standard library, the
#: config loader's helpers and the other descriptions. Never a robot, camera, loop or library.
LIGHT = ("robot_rl.config", "robot_rl.errors", "robot_rl.arms", "robot_rl.interfaces", "robot_rl_drivers.spec")


def backend_folders() -> list[Path]:
    return sorted(p.parent for kind in KINDS for p in (DRIVERS / kind).glob("*/__init__.py"))


def description_files() -> list[Path]:
    files = [DRIVERS / "__init__.py", DRIVERS / "spec.py", DRIVERS / "robots" / "settings.py"]
    files += [DRIVERS / kind / "__init__.py" for kind in KINDS]
    for folder in backend_folders():
        files += [f for f in (folder / "__init__.py", folder / "settings.py") if f.exists()]
    return files


def _light(name: str) -> bool:
    top = name.split(".")[0]
    if top in sys.stdlib_module_names or top == "__future__":
        return True
    if any(name == m or name.startswith(m + ".") for m in LIGHT):
        return True
    described = {module_name(p) for p in description_files()}
    return name in described or name.rsplit(".", 1)[0] in described  # a description, or a name from one


@pytest.mark.parametrize("path", description_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_backend_descriptions_are_import_light(path):
    heavy = sorted(name for name in imports_of(path) if not _light(name))
    assert not heavy, f"{path.relative_to(ROOT)} imports {heavy}: a registry, SPEC or settings module describes " \
                      "a backend and imports none of its code (the config loader imports it)"


def test_loading_a_config_imports_no_backend_code():
    """What ``load_config`` of a Franka + RealSense config brings in, measured in a fresh process."""
    code = ("import sys; from robot_rl.tasks import load_config; load_config('configs/franka_peg_insert.yaml'); "
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith(('robot_rl_drivers', 'robot_rl.ros', "
            "'pylibfranka', 'rtde', 'pyrealsense2', 'rclpy', 'cyclonedds')))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    loaded = out.split()
    assert loaded, "the registries were not asked"
    described = {module_name(p) for p in description_files()}
    assert set(loaded) <= described, f"loading a config imported backend code: {sorted(set(loaded) - described)}"


def backend_names() -> set[str]:
    """Every registered backend's name but ``sim``: ``robot.backend: sim`` is the session's
    mode (a sim session, DESIGN.md's "sim mode"), which core and the learning plane switch on
    by design; every other name is a hardware backend that only its folder may know."""
    from robot_rl_drivers.cameras import camera_specs
    from robot_rl_drivers.robots import robot_specs

    return {s.name for s in (*robot_specs(), *camera_specs())} - {"sim"}


def name_comparisons(path: Path, names: set[str]) -> list[str]:
    """``file:line: source`` of each comparison (==, !=, in, not in) against one of ``names``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Compare):
            continue
        values = []
        for operand in (node.left, *node.comparators):
            items = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            values += [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        if any(v in names for v in values):
            found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{node.lineno}: "
                         f"{ast.unparse(node)[:100]}")
    return found


def test_the_name_scan_sees_a_branch_on_a_backend(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("def f(cfg):\n    if cfg.robot.backend == 'franka':\n        return 1\n"
                   "    return cfg.cameras['a'].backend in ('opencv', 'x') or 'ur' != cfg.robot.backend\n")
    assert len(name_comparisons(bad, {"franka", "opencv", "ur"})) == 3
    assert name_comparisons(bad, {"realsense"}) == []


def test_nothing_outside_a_backend_folder_branches_on_its_name():
    """config/ and everything else ask the registries (a SPEC's fields, the settings' own
    properties), never ``backend == "<name>"``: adding an arm touches no if-chain."""
    names = backend_names()
    inside = set(backend_folders())
    found = []
    for path in source_files():
        if any(path.is_relative_to(folder) for folder in inside):
            continue
        found += name_comparisons(path, names)
    assert not found, "branches on a backend's name outside its folder:\n" + "\n".join(found)


def test_every_backend_folder_is_registered_once_with_its_own_spec():
    from robot_rl_drivers.cameras import FOLDERS as CAMERA_FOLDERS
    from robot_rl_drivers.robots import FOLDERS as ROBOT_FOLDERS

    on_disk = {(p.parent.name, p.name) for p in backend_folders()}
    registered = {("robots", f) for f in ROBOT_FOLDERS} | {("cameras", f) for f in CAMERA_FOLDERS}
    assert on_disk == registered
    assert len(ROBOT_FOLDERS) == len(set(ROBOT_FOLDERS)) and len(CAMERA_FOLDERS) == len(set(CAMERA_FOLDERS))


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
