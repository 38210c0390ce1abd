"""robot_rl is a valid ament_python package: what colcon and ``ros2 run/launch`` rely on."""

from __future__ import annotations

import configparser
import os
import re
import runpy
from glob import glob
from pathlib import Path

import pytest
import setuptools
import tomllib

from robot_rl.ros.messages import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "robot_rl"


@pytest.fixture(scope="module")
def setup_kwargs():
    """The keyword arguments setup.py passes to setuptools.setup(), without building anything."""
    captured = {}
    saved, cwd = setuptools.setup, os.getcwd()
    setuptools.setup = lambda **kwargs: captured.update(kwargs)
    try:
        os.chdir(ROOT)  # setup.py globs launch/ and configs/ relative to the package root
        runpy.run_path(str(ROOT / "setup.py"), run_name="__main__")
    finally:
        setuptools.setup = saved
        os.chdir(cwd)
    return captured


def test_package_xml_validates_with_catkin_pkg():
    from catkin_pkg.package import parse_package

    package = parse_package(str(ROOT / "package.xml"))
    package.validate()
    assert package.name == PACKAGE and package.package_format == 3
    assert package.get_build_type() == "ament_python"
    exec_deps = {d.name for d in package.exec_depends}
    # every message package our nodes use, and the RMW that interoperates with the DDS backend
    used = {type_name.split("/")[0] for type_name in REGISTRY}
    assert used <= exec_deps, used - exec_deps
    assert {"rclpy", "rmw_cyclonedds_cpp", "launch", "launch_ros"} <= exec_deps


# The rosdep key of each Python requirement (rosdistro's rosdep/python.yaml); None: rosdistro has no key for it,
# so scripts/setup.sh's pip install is its only source.
ROSDEP_KEYS = {
    "numpy": "python3-numpy", "pyyaml": "python3-yaml", "tqdm": "python3-tqdm",
    "gymnasium": "python3-gymnasium-pip", "torch": "python3-torch", "tensorboard": "python3-tensorboard-pip",
    "opencv-python-headless": "python3-opencv", "grpcio": "python3-grpcio", "protobuf": "python3-protobuf",
    "matplotlib": "python3-matplotlib", "mujoco": "python3-mujoco-pip", "cyclonedds": None, "safetensors": None,
    "mcap": None,
}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def test_every_python_requirement_has_its_rosdep_key(setup_kwargs):
    """``rosdep install`` brings the Python stack too: a requirement added to setup.py needs its key here."""
    from catkin_pkg.package import parse_package

    exec_deps = {d.name for d in parse_package(str(ROOT / "package.xml")).exec_depends}
    required = [*setup_kwargs["install_requires"], *setup_kwargs["extras_require"]["sim"]]
    for requirement in required:
        name = _requirement_name(requirement)
        assert name in ROSDEP_KEYS, f"{name}: add its rosdep key (or None) to ROSDEP_KEYS and package.xml"
        key = ROSDEP_KEYS[name]
        assert key is None or key in exec_deps, f"package.xml lacks <exec_depend>{key}</exec_depend> ({name})"
    # no key without a requirement behind it
    names = {_requirement_name(r) for r in required}
    python_keys = {d for d in exec_deps if d.startswith("python3-")}
    assert python_keys == {ROSDEP_KEYS[n] for n in names if ROSDEP_KEYS[n]}
    assert "ament_python" not in {d.name for d in parse_package(str(ROOT / "package.xml")).buildtool_depends}, \
        "ament_python is a build type, not a package: rosdep cannot resolve it"


def test_pip_builds_through_pep517_not_setup_py_develop():
    """pip 23 (Debian's, Ubuntu's) falls back to ``setup.py develop`` without a pyproject.toml."""
    build = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    assert build["build-backend"] == "setuptools.build_meta"
    minimum = [r for r in build["requires"] if _requirement_name(r) == "setuptools"]
    assert minimum and int(minimum[0].split(">=")[1].split(".")[0]) >= 64  # PEP 660 editable wheels


def test_every_package_lives_where_its_import_name_says(setup_kwargs):
    """``setup.py develop`` (colcon --symlink-install on setuptools < 80) puts the source root on sys.path and
    ignores ``package_dir``: a package is importable there only from the folder its dotted name names."""
    assert not setup_kwargs.get("package_dir")
    packages = setup_kwargs["packages"]
    assert {"robot_rl", "robot_rl_drivers", "robot_rl_drivers.cameras", "robot_rl_drivers.input",
            "robot_rl_drivers.robots"} <= set(packages)
    for package in packages:
        assert (ROOT / package.replace(".", "/") / "__init__.py").is_file(), package


def test_setup_cfg_installs_scripts_where_ros2_run_looks():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["develop"]["script_dir"] == f"$base/lib/{PACKAGE}"
    assert cfg["install"]["install_scripts"] == f"$base/lib/{PACKAGE}"


def test_resource_marker_and_data_files(setup_kwargs):
    assert (ROOT / "resource" / PACKAGE).is_file()
    data_files = {dest: list(files) for dest, files in setup_kwargs["data_files"]}
    assert data_files["share/ament_index/resource_index/packages"] == [f"resource/{PACKAGE}"]
    assert data_files[f"share/{PACKAGE}"] == ["package.xml"]
    assert sorted(data_files[f"share/{PACKAGE}/launch"]) == sorted(glob("launch/*.launch.py", root_dir=ROOT))
    assert sorted(data_files[f"share/{PACKAGE}/configs"]) == sorted(glob("configs/*.yaml", root_dir=ROOT))
    for files in data_files.values():
        for f in files:
            assert (ROOT / f).is_file(), f


def test_every_node_has_a_console_script(setup_kwargs):
    scripts = {s.split("=")[0].strip(): s.split("=")[1].strip()
               for s in setup_kwargs["entry_points"]["console_scripts"]}
    for node in ("camera_node", "controller_node", "intervention_node", "actor_node", "sim_node"):
        assert scripts[node] == f"{PACKAGE}.nodes.{node}:main"
