"""The repository's imports as a graph: every import statement, wherever it sits.

Imports inside functions and ``TYPE_CHECKING`` blocks count: a hidden import is still a
dependency. Used by the layering tests (tests/test_layout.py, tests/tasks).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"robot_rl": ROOT / "robot_rl", "robot_rl_drivers": ROOT / "robot_rl_drivers"}

#: Sub-packages that are units of their own (the learning plane inside the training wing).
NESTED_UNITS = ("robot_rl.training.remote",)

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
            if not (base in SOURCES and all(_is_module(base, alias.name) for alias in node.names)):
                found.add(base)  # "from robot_rl import jsonio" needs jsonio, not what robot_rl/__init__.py imports
            found.update(f"{base}.{alias.name}" for alias in node.names)  # "from pkg import module"
    return found


def _is_module(top: str, name: str) -> bool:
    """Whether ``name`` is a module or package directly under the top-level package ``top``."""
    folder = SOURCES[top]
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()


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


def plain_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found
