"""robot_rl is a valid ament_python package: what colcon and ``ros2 run/launch`` rely on."""

from __future__ import annotations

import configparser
import os
import runpy
from glob import glob
from pathlib import Path

import pytest
import setuptools

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
