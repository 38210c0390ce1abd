"""The session graph built from one YAML: nodes, parameters, params file, launch front ends (no processes)."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from robot_rl.errors import ConfigError
from robot_rl.nodes.description import build_graph
from robot_rl.ros.dds.arguments import load_params_file
from robot_rl.ros.dds.names import resolve_topic_name
from robot_rl.tasks import load_config

ROOT = Path(__file__).resolve().parents[2]
PICK = ROOT / "configs" / "pick_cube.yaml"


def graph(overrides=(), path=PICK):
    return build_graph(load_config(path, list(overrides)), path)


def root(topic: str) -> str:
    """Where a node in the root namespace (no ros.namespace) publishes ``topic``."""
    return resolve_topic_name(topic, "some_node", "/")


def test_sim_session_is_the_sim_node_and_the_actor():
    g = graph()
    assert g.names == ["sim_node", "actor_node"]
    sim = g.node("sim_node").parameters
    assert sim["config"] == str(PICK)
    assert root(sim["topics"]["target_pose"]) == "/robot/target_pose"
    assert root(sim["topics"]["sim_reset"]) == "/sim/reset"
    assert {k: root(v) for k, v in sim["topics"]["cameras"]["wrist"].items()} == {
        "image": "/camera/wrist/color/image_raw", "info": "/camera/wrist/color/camera_info"}
    actor = g.node("actor_node").parameters["topics"]
    assert "cameras" not in actor  # obs_mode state: the actor reads no images (and the sim renders none)
    assert {"tcp_pose", "joint_states", "sim_reset_done", "sim_task_state"} <= set(actor)
    assert "spacenav_twist" not in actor


def test_pixels_and_a_spacemouse_add_image_and_input_topics_and_the_intervention_node():
    g = graph(["env.obs_mode=pixels", "intervention.device=spacemouse+keyboard"])
    assert g.names == ["sim_node", "intervention_node", "actor_node"]
    actor = g.node("actor_node").parameters["topics"]
    assert set(actor["cameras"]) == {"front", "wrist"} and root(actor["spacenav_joy"]) == "/spacenav/joy"
    assert graph(["intervention.device=spacemouse", "ros.input_node=false"]).names == ["sim_node", "actor_node"]
    # the simulated intervener runs inside the actor: no node, no topics
    g = graph(["intervention.device=simulated"])
    assert g.names == ["sim_node", "actor_node"] and "spacenav_twist" not in g.node("actor_node").parameters["topics"]


def test_a_real_arm_gets_a_controller_and_one_node_per_camera(tmp_path):
    cfg = yaml.safe_load(PICK.read_text())
    cfg["robot"].update(backend="franka", hardware={"ip": "172.16.0.2"})
    cfg["env"]["obs_mode"] = "pixels"
    cfg["cameras"] = {"front": {"backend": "realsense", "hardware": {"serial": "123"}},
                      "wrist": {"backend": "opencv", "hardware": {"device": 0}}}
    path = tmp_path / "franka.yaml"
    path.write_text(yaml.safe_dump(cfg))
    g = build_graph(load_config(path), path)
    assert g.names == ["controller_node", "camera_front", "camera_wrist", "actor_node"]
    assert g.node("camera_front").executable == "camera_node"
    assert g.node("camera_front").parameters["camera"] == "front"
    assert {k: root(v) for k, v in g.node("camera_wrist").parameters["topics"].items()} == {
        "image": "/camera/wrist/color/image_raw", "info": "/camera/wrist/color/camera_info"}
    assert "sim_reset" not in g.node("actor_node").parameters["topics"]
    cfg["robot"]["backend"] = "topics"  # another vendor's driver publishes the arm's topics
    path.write_text(yaml.safe_dump(cfg))
    assert build_graph(load_config(path), path).names == ["camera_front", "camera_wrist", "actor_node"]


def test_sim_and_real_parts_do_not_mix(tmp_path):
    cfg = yaml.safe_load(PICK.read_text())
    cfg["cameras"]["front"] = {"backend": "opencv", "hardware": {"device": 0}}
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match="cameras.front.backend is 'opencv' but robot.backend is 'sim'"):
        build_graph(load_config(path), path)


def test_the_params_file_gives_every_node_its_parameters(tmp_path):
    g = graph(["env.obs_mode=both"])
    params = load_params_file(g.write_params_file(tmp_path))  # what rcl / the DDS backend read
    actor = params["/actor_node"]
    assert actor["config"] == str(PICK) and root(actor["topics.cameras.front.image"]) == "/camera/front/color/image_raw"
    assert root(params["/sim_node"]["topics.cameras.wrist.info"]) == "/camera/wrist/color/camera_info"
    cmd = g.command(g.node("sim_node"), tmp_path / "params.yaml", "python")
    assert cmd == ["python", "-m", "robot_rl.nodes.sim_node", "--ros-args", "-r", "__node:=sim_node",
                   "--params-file", str(tmp_path / "params.yaml")]


def test_every_executable_is_a_node_module_with_main():
    for executable in ("sim_node", "actor_node", "controller_node", "camera_node", "intervention_node"):
        spec = importlib.util.find_spec(f"robot_rl.nodes.{executable}")
        tree = ast.parse(Path(spec.origin).read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body), executable


def test_launch_files_wrap_the_same_description():
    files = sorted((ROOT / "launch").glob("*.launch.py"))
    assert {f.name for f in files} >= {"session.launch.py", "sim.launch.py"}
    for f in files:
        tree = ast.parse(f.read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)
        assert "robot_rl.nodes.ros_launch" in f.read_text()


def test_launch_cli_dry_run_prints_commands_and_params(tmp_path):
    out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "launch", str(PICK), "--dry-run",
                          "--run-dir", str(tmp_path), "--set", "ros.policy=expert"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "-m robot_rl.nodes.sim_node --ros-args -r __node:=sim_node --params-file" in out.stdout
    session = load_config(tmp_path / "session.yaml")  # with --set, the effective config is what nodes load
    assert session.ros.policy == "expert"
    assert load_params_file(tmp_path / "params.yaml")["/actor_node"]["config"] == str(tmp_path / "session.yaml")


def test_launch_cli_errors_are_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "launch", str(PICK), "--dry-run",
                          "--set", "ros.policy=teleop"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.startswith("robot-rl: ") and out.stderr.count("\n") == 1
    assert "ros.policy" in out.stderr


_HEAVY = ("torch", "gymnasium", "cv2", "mujoco", "grpc", "cyclonedds", "matplotlib", "tqdm", "tensorboard",
          "safetensors", "mcap", "rosbags")
_LIGHT_PROBE = f"""
import sys, tempfile

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {_HEAVY!r}:
            raise ImportError("the launch front end imported " + name)

sys.meta_path.insert(0, Block())
from robot_rl.config import to_dict
from robot_rl.nodes.description import build_graph
from robot_rl.tasks import load_config

for name, overrides in CASES:
    cfg = load_config(name, overrides)
    to_dict(cfg)
    build_graph(cfg, name).write_params_file(tempfile.mkdtemp())
print("ok")
"""


def test_the_launch_front_end_needs_only_numpy_and_pyyaml(tmp_path):
    """``ros2 launch`` runs the launch file in the ``ros2`` command's Python, which has what ROS 2 and rosdep
    put there (numpy, PyYAML), not robot_rl's virtualenv: building the graph must import nothing heavier."""
    root = Path(__file__).resolve().parents[2]
    cases = [(str(root / "configs" / "pick_cube.yaml"), ["ros.namespace=r1"]),
             (str(root / "configs" / "franka_peg_insert.yaml"), []),
             (str(root / "configs" / "pick_cube_pixels.yaml"), ["ros.record.enabled=true"])]
    probe = tmp_path / "probe.py"
    probe.write_text(f"CASES = {cases!r}\n" + _LIGHT_PROBE)
    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, cwd=root, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
