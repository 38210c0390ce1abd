"""PlugInsert lives in its folder: outside it, only configs, docs, tests and its one registry
line say its name. Adding a task touched nothing else, and nothing else may come to depend on it."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAMES = ("plug_insert", "PlugInsert")  # its folder (and config) name, its class and display name
FOLDER = Path("robot_rl/tasks/plug_insert")
ALLOWED_TOP = {"configs", "docs", "tests", "README.md"}
REGISTRY = Path("robot_rl/tasks/__init__.py")  # one line: the folder's entry
SKIP_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "runs", "build", "install", "log", "site"}


def text_files():
    """Every text file of the repository, outside build and run outputs."""
    stack = [REPO]
    while stack:
        folder = stack.pop()
        for path in folder.iterdir():
            if path.is_dir():
                if path.name not in SKIP_DIRS and not path.name.endswith(".egg-info"):
                    stack.append(path)
                continue
            try:
                text = path.read_bytes().decode("utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # binary (images, npz) or unreadable
            yield path.relative_to(REPO), text


def test_the_name_appears_only_in_its_folder_configs_docs_and_tests():
    stray, registry_lines = [], []
    for rel, text in text_files():
        hits = [n for n, line in enumerate(text.splitlines(), 1) if any(name in line for name in NAMES)]
        if not hits or rel.parts[0] in ALLOWED_TOP or rel.is_relative_to(FOLDER):
            continue
        if rel == REGISTRY:
            registry_lines += hits
        else:
            stray += [f"{rel}:{n}" for n in hits]
    assert stray == [], f"PlugInsert is named outside its folder: {stray}"
    assert len(registry_lines) == 1, f"the registry should name it on one line, not {registry_lines}"


def test_the_walk_sees_the_folder_and_the_config():
    """Guard against a walk that finds nothing (and so passes whatever happens)."""
    seen = {rel for rel, text in text_files() if any(name in text for name in NAMES)}
    assert FOLDER / "task.py" in seen and Path("configs/plug_insert.yaml") in seen
