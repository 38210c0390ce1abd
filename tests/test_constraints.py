"""The tests see the versions they were written against, or say which one moved.

``scripts/constraints.txt`` holds the versions of what changes a test's view (physics, arrays,
image resizing, YAML, the learner's numerics, wire formats, the test runner); ``scripts/setup.sh``
installs with it. A fresh install that resolves anything else (an install made without the
script, an edited constraint) fails here, naming the package, instead of moving a learning
curve or an error message somewhere else in the suite.
"""

from __future__ import annotations

import re
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO / "scripts" / "constraints.txt"


def _constraints() -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines())
    return [Requirement(line) for line in lines if line]


def test_every_constraint_is_an_exact_pin_named_once():
    reqs = _constraints()
    names = [r.name.lower() for r in reqs]
    assert len(names) == len(set(names)), "a package is constrained twice"
    for req in reqs:
        (spec,) = req.specifier  # one specifier each
        assert spec.operator == "==", f"{req}: a constraint pins one version"


@pytest.mark.parametrize("req", _constraints(), ids=lambda r: r.name)
def test_installed_versions_are_the_constrained_ones(req):
    if req.marker is not None and not req.marker.evaluate():
        pytest.skip(f"{req.name}: constrained only where {req.marker}")
    try:
        installed = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{req.name} is not installed (an extra this install did not ask for)")
    assert req.specifier.contains(installed, prereleases=True), (
        f"{req.name} {installed} is installed, scripts/constraints.txt holds {req.specifier}: install with "
        "scripts/setup.sh, or move the constraint in a commit of its own and rerun the suite")


def test_setup_installs_with_the_constraints():
    script = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    installs = [line for line in script.splitlines() if re.search(r"\bpip\"? install\b", line)]
    assert installs and all('-c "$constraints"' in line for line in installs), installs
    out = subprocess.run(["bash", "-n", str(REPO / "scripts" / "setup.sh")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
