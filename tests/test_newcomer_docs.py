"""The pages and the setup script tell a newcomer one truth: how to reach the commands, and how
to install an extra in a checkout.

* The commands live in ``.venv/bin``: the README and docs/index.md say how to put them on
  PATH, and every page that writes a bare ``robot-rl`` links to that note before it does.
* setup.py's extras: the setup script's header names each with what it is for, and no page or
  message tells anyone to ``pip install robot_rl[...]`` from a package index this project is
  not on.
* The setup script shows pip's progress (one line per package) instead of minutes of silence.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SETUP_SH = REPO / "scripts" / "setup.sh"
PATH_LINK = "index.md#the-commands-on-path"
#: ``robot-rl`` as a command typed bare: not ``.venv/bin/robot-rl``, not part of a path or a longer name.
BARE = re.compile(r"(?<!\.venv/bin/)(?<![/\w-])robot-rl\b")
#: An install from a package index: ``pip install robot_rl[real]``, ``pip3 install 'robot_rl[ur]'``.
INDEX_INSTALL = re.compile(r"pip3?\s+install\s+(-\S+\s+)*['\"]?robot_rl\[")


def extras() -> dict[str, list[str]]:
    """setup.py's extras_require, read from its syntax tree (setup.py is not run)."""
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            assert isinstance(node.value, ast.Dict)
            return {ast.literal_eval(k): [] for k in node.value.keys if k is not None}
    raise AssertionError("setup.py has no extras_require")


def header(script: Path) -> str:
    """The comment block at the top of a shell script."""
    lines = script.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines[1:next(i for i, line in enumerate(lines) if line.startswith("set "))])


# --- the commands on PATH --------------------------------------------------------------------


def test_index_says_how_to_put_the_commands_on_path():
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    section = text.split("## The commands on PATH", 1)[1].split("\n## ", 1)[0]
    assert "source .venv/bin/activate" in section and ".venv/bin/robot-rl" in section
    assert "command not found" in section
    assert text.index("## The commands on PATH") < text.index("## Where to start")  # early


def test_the_readme_says_it_in_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    assert "source\n.venv/bin/activate" in section or "source .venv/bin/activate" in section
    assert f"docs/{PATH_LINK}" in section


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_page_links_to_the_path_note_before_a_bare_robot_rl(page):
    """The link comes before, or in the paragraph of, the page's first bare ``robot-rl``."""
    text = page.read_text(encoding="utf-8")
    first = BARE.search(text)
    if first is None:
        return
    if page.name == "index.md":
        note = text.find("## The commands on PATH")
    else:
        note = text.find(PATH_LINK)
    end = text.find("\n\n", first.start())  # the note may be the paragraph that first writes it
    assert 0 <= note < (len(text) if end < 0 else end), (
        f"docs/{page.name} writes a bare robot-rl (line {text.count(chr(10), 0, first.start()) + 1}) before "
        f"linking to the PATH note ({PATH_LINK})")


def test_the_bare_pattern_tells_a_bare_command_from_a_path():
    assert BARE.search("run `robot-rl train`") and BARE.search("robot-rl eval runs/x")
    assert not BARE.search(".venv/bin/robot-rl train") and not BARE.search("venv/bin/robot-rl")
    assert not BARE.search("my-robot-rl-fork")


# --- one truth about extras ----------------------------------------------------------------


def test_setup_script_header_names_every_extra():
    names = extras()
    assert {"sim", "real", "ur", "wandb", "viz", "docs", "dev"} <= set(names)  # the parser sees them
    text = header(SETUP_SH)
    for name in names:
        assert re.search(rf"^#\s+{re.escape(name)}\s+\S", text, re.M), f"scripts/setup.sh's header lacks '{name}'"


def test_first_sim_run_lists_every_extra():
    text = (DOCS / "first-sim-run.md").read_text(encoding="utf-8")
    for name in extras():
        assert re.search(rf"^\| `{re.escape(name)}`", text, re.M), f"docs/first-sim-run.md's table lacks '{name}'"


def test_the_dev_extra_is_described_as_setup_py_builds_it():
    """The header and the docs say dev is sim + real + wandb + viz + docs + test tools, and not ur:
    check that against setup.py's own lists."""
    source = (REPO / "setup.py").read_text(encoding="utf-8")
    dev = source.split('"dev": [', 1)[1].split("]", 1)[0]
    assert "mujoco" in dev and "*REAL" in dev and "wandb" in dev and "rerun-sdk" in dev and "mkdocs" in dev
    assert "ur-rtde" not in dev
    assert "not ur" in header(SETUP_SH)


def test_no_page_or_message_installs_from_a_package_index():
    found = []
    for folder in ("robot_rl", "robot_rl_drivers", "docs", "scripts", "bench", "launch"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".sh", ".txt") and path.is_file():
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if INDEX_INSTALL.search(line):
                        found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    for n, line in enumerate((REPO / "README.md").read_text(encoding="utf-8").splitlines(), 1):
        if INDEX_INSTALL.search(line):
            found.append(f"README.md:{n}: {line.strip()}")
    assert not found, "install hints that assume a package index (say scripts/setup.sh EXTRA):\n" + "\n".join(found)


def test_the_index_pattern_catches_every_spelling():
    for text in ("pip install robot_rl[real]", "pip3 install 'robot_rl[ur]'", 'pip install -U "robot_rl[viz]"'):
        assert INDEX_INSTALL.search(text), text
    assert not INDEX_INSTALL.search("scripts/setup.sh real") and not INDEX_INSTALL.search("pip install -e '.[ur]'")


def test_every_extra_hint_is_the_checkout_form():
    from robot_rl.errors import install_extra
    from robot_rl_drivers.input.spacemouse import INSTALL_HINT
    from robot_rl_drivers.robots.ur.loop import EXTRA

    for name in extras():
        assert install_extra(name) == f"scripts/setup.sh {name}, from the checkout"
    assert INSTALL_HINT.startswith("scripts/setup.sh real") and EXTRA == "scripts/setup.sh ur, from the checkout"


# --- no minutes of silence in the setup script ------------------------------------------------

PIP_OUTPUT = """\
Looking in indexes: https://pypi.org/simple
Requirement already satisfied: numpy==2.4.6 in ./.venv/lib/python3.11/site-packages (2.4.6)
Collecting torch==2.13.0 (from -c scripts/constraints.txt (line 9))
  Downloading torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl (190.1 MB)
Collecting mujoco>=3.2; python_version >= "3.11" (from robot_rl==0.1.0)
  Using cached mujoco-4.0.0.whl (6.5 MB)
Installing collected packages: torch, mujoco, robot_rl
Successfully installed mujoco-4.0.0 robot_rl-0.1.0 torch-2.13.0
"""


def test_setup_shows_a_line_per_package_while_pip_works():
    script = SETUP_SH.read_text(encoding="utf-8")
    function = re.search(r"^progress\(\) \{.*?^\}", script, re.S | re.M)
    assert function, "scripts/setup.sh has no progress filter"
    installs = [line for line in script.splitlines() if re.search(r"\bpip\"? install\b", line)]
    assert installs and all(line.rstrip().endswith("| progress") and " -q " not in line for line in installs)
    out = subprocess.run(["bash", "-c", f"set -euo pipefail\n{function.group(0)}\nprogress"], input=PIP_OUTPUT,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["setup:   fetching torch==2.13.0", "setup:   fetching mujoco>=3.2",
                                       "setup:   installing (unpacking takes a minute or two)"]
    failed = subprocess.run(["bash", "-c", f"set -euo pipefail\n{function.group(0)}\nfalse | progress"],
                            capture_output=True, text=True, timeout=30)
    assert failed.returncode != 0  # a failing pip still fails the script through the filter
    steps = [line for line in script.splitlines() if line.startswith('echo "setup: installing')]
    assert len(steps) == 2 and all("minutes" in line for line in steps)  # each long step says it takes a while
