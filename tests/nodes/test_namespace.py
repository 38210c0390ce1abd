"""A session under a ROS namespace: relative topic names, both front ends, and two sessions on one domain.

The last test is the one the issue asks for: two ``robot-rl launch`` sim sessions, in
``r1`` and ``r2``, run side by side in one DDS domain; each finishes its episodes, each
sim answers only its own actor's resets, and a subscriber to ``/r1/...`` hears only r1.
Without the namespace (or with absolute topic names) both sims would answer both actors.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml
from graph_harness import PICK, Probe, private_env  # noqa: E402

from robot_rl.config.ros import normalize_namespace
from robot_rl.errors import ConfigError
from robot_rl.nodes import topics
from robot_rl.nodes.description import build_graph
from robot_rl.ros.dds.arguments import load_params_file, parse_ros_args
from robot_rl.ros.dds.names import resolve_topic_name
from robot_rl.tasks import load_config

# today's absolute names (DESIGN.md, "Two planes, two transports"): the root namespace must keep them
STANDARD = {
    "joint_states": "/joint_states", "tcp_pose": "/robot/tcp_pose", "tcp_twist": "/robot/tcp_twist",
    "tcp_wrench": "/robot/tcp_wrench", "target_pose": "/robot/target_pose",
    "gripper_command": "/robot/gripper/command", "posture": "/robot/posture",
    "spacenav_twist": "/spacenav/twist", "spacenav_joy": "/spacenav/joy", "sim_reset": "/sim/reset",
    "sim_reset_done": "/sim/reset_done", "sim_task_state": "/sim/task_state", "sim_success": "/sim/success",
}


def graph(*overrides: str):
    return build_graph(load_config(PICK, list(overrides)), PICK)


# --- names ---------------------------------------------------------------------------------


def test_default_topics_are_relative_and_resolve_to_the_standard_names_in_the_root_namespace():
    table = {**topics.ROBOT_STATE, **topics.ROBOT_COMMANDS, **topics.INPUT, **topics.SIM}
    assert set(table) == set(STANDARD)
    for key, name in table.items():
        assert not name.startswith("/"), key
        assert resolve_topic_name(name, "n", "/") == STANDARD[key]
        assert resolve_topic_name(name, "n", "/r1") == "/r1" + STANDARD[key]
    cam = topics.camera_topics("wrist")
    assert resolve_topic_name(cam["image"], "n", "/") == "/camera/wrist/color/image_raw"
    assert resolve_topic_name(cam["info"], "n", "/lab/r1") == "/lab/r1/camera/wrist/color/camera_info"


@pytest.mark.parametrize("given, normal", [("", ""), ("/", ""), ("r1", "/r1"), ("/r1", "/r1"), ("/r1/", "/r1"),
                                           ("lab/r_2", "/lab/r_2"), ("_x", "/_x")])
def test_namespaces_are_normalized(given, normal):
    assert normalize_namespace(given) == normal
    assert load_config(PICK, [f"ros.namespace='{given}'"]).ros.namespace == normal


@pytest.mark.parametrize("bad", ["1r", "r-1", "a//b", "//a", "r1//", "~/x", "{ns}", "a b", "é", "x" * 201])
def test_a_bad_namespace_is_one_config_error(bad):
    with pytest.raises(ConfigError, match="ros.namespace") as err:
        load_config(PICK, [f"ros.namespace='{bad}'"])
    assert "\n" not in str(err.value)


# --- the graph description -----------------------------------------------------------------


def test_no_namespace_keeps_todays_commands_and_params_file(tmp_path):
    g = graph()
    assert g.namespace == "" and all(spec.remaps == [] for spec in g.nodes)
    cmd = g.command(g.node("actor_node"), tmp_path / "params.yaml", "python")
    assert cmd == ["python", "-m", "robot_rl.nodes.actor_node", "--ros-args", "-r", "__node:=actor_node",
                   "--params-file", str(tmp_path / "params.yaml")]
    assert set(yaml.safe_load(g.params_file_text())) == {"sim_node", "actor_node"}


def test_a_namespace_goes_into_every_node_command_and_the_params_file(tmp_path):
    g = graph("ros.namespace=r1", "env.obs_mode=pixels", "intervention.device=spacemouse")
    assert g.namespace == "/r1" and g.names == ["sim_node", "intervention_node", "actor_node"]
    params = g.write_params_file(tmp_path)
    # keyed by fully-qualified name: rclpy matches only that (or /**) to a node in a namespace
    assert set(yaml.safe_load(params.read_text())) == {"/r1/sim_node", "/r1/intervention_node", "/r1/actor_node"}
    for spec in g.nodes:
        cmd = g.command(spec, params, "python")
        assert cmd[cmd.index("--ros-args") + 1:cmd.index("--params-file")] == [
            "-r", f"__node:={spec.name}", "-r", "__ns:=/r1", "-r", "/clock:=/r1/clock"]
        args = parse_ros_args(cmd)  # what the DDS backend reads from that command line
        assert args.node_name == spec.name and args.namespace == "/r1"
        assert args.remaps == [(None, "/clock", "/r1/clock")]
        mine = args.parameter_overrides(f"/r1/{spec.name}")
        assert mine == load_params_file(params)[f"/r1/{spec.name}"]
        assert mine["config"] == str(PICK) and any(k.startswith("topics.") for k in mine)
        assert args.parameter_overrides(f"/{spec.name}") == {}  # the same name outside r1 gets nothing
    actor = load_params_file(params)["/r1/actor_node"]
    assert resolve_topic_name(actor["topics.cameras.front.image"], "actor_node", "/r1") == \
        "/r1/camera/front/color/image_raw"


def test_launch_cli_takes_a_namespace_and_refuses_a_bad_one_in_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "launch", str(PICK), "--dry-run", "--namespace",
                          "lab/r1", "--run-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "-r __node:=sim_node -r __ns:=/lab/r1 -r /clock:=/lab/r1/clock --params-file" in out.stdout
    assert load_config(tmp_path / "session.yaml").ros.namespace == "/lab/r1"
    assert "/lab/r1/actor_node" in load_params_file(tmp_path / "params.yaml")
    bad = subprocess.run([sys.executable, "-m", "robot_rl.cli", "launch", str(PICK), "--dry-run", "--namespace",
                          "r-1"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("robot-rl: ") and bad.stderr.count("\n") == 1
    assert "ros.namespace 'r-1' is not a ROS namespace" in bad.stderr


# --- the ros2 launch front end, against stand-ins for launch / launch_ros -------------------


class _Recorded:
    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs


class _LaunchConfiguration:
    def __init__(self, name: str) -> None:
        self.name = name

    def perform(self, context) -> str:
        return context.launch_configurations[self.name]


@pytest.fixture
def fake_launch(monkeypatch):
    """Just enough of launch and launch_ros for ros_launch to build its Nodes (no ROS 2 here)."""
    modules = {name: types.ModuleType(name) for name in
               ("launch", "launch.actions", "launch.substitutions", "launch_ros", "launch_ros.actions")}
    modules["launch"].LaunchDescription = _Recorded
    modules["launch.actions"].Shutdown = _Recorded
    modules["launch.actions"].DeclareLaunchArgument = _Recorded
    modules["launch.actions"].OpaqueFunction = _Recorded
    modules["launch.substitutions"].LaunchConfiguration = _LaunchConfiguration
    modules["launch_ros.actions"].Node = _Recorded
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)


def launch_nodes(tmp_path: Path, **configurations: str) -> list[_Recorded]:
    from robot_rl.nodes import ros_launch

    values = {"config": str(PICK), "set": "", "run_dir": str(tmp_path), "namespace": "", **configurations}
    context = types.SimpleNamespace(launch_configurations=values)
    return ros_launch._nodes(context)


def test_ros2_launch_namespace_argument_reaches_every_node(tmp_path, fake_launch):
    from robot_rl.nodes import ros_launch

    declared = [a.args[0] for a in ros_launch.generate_launch_description("pick_cube").args[0] if a.args]
    assert "namespace" in declared
    nodes = launch_nodes(tmp_path, set="ros.namespace=r1;ros.policy=expert", namespace="r2")  # the argument wins
    assert [n.kwargs["name"] for n in nodes] == ["sim_node", "actor_node"]
    for node in nodes:
        assert node.kwargs["namespace"] == "/r2"
        assert node.kwargs["remappings"] == [("/clock", "/r2/clock")]
        (params,) = node.kwargs["parameters"]
        assert f"/r2/{node.kwargs['name']}" in load_params_file(params)
    assert load_config(tmp_path / "session.yaml").ros.namespace == "/r2"


def test_ros2_launch_root_namespace_and_a_pushed_one(tmp_path, fake_launch):
    root = launch_nodes(tmp_path / "a", set="ros.namespace=r1", namespace="/")
    assert {n.kwargs["namespace"] for n in root} == {""} and all(n.kwargs["remappings"] == [] for n in root)
    assert "sim_node" in yaml.safe_load(Path(root[0].kwargs["parameters"][0]).read_text())
    pushed = launch_nodes(tmp_path / "b", ros_namespace="lab")  # an including file's PushRosNamespace('lab')
    assert {n.kwargs["namespace"] for n in pushed} == {"/lab"}
    with pytest.raises(ConfigError, match="ros.namespace"):
        launch_nodes(tmp_path / "c", namespace="r 1")


# --- the DDS backend honours the command line ------------------------------------------------


def test_dds_node_in_a_namespace_resolves_relative_names_and_the_clock_remap(monkeypatch):
    env = private_env()
    probe = Probe(monkeypatch, env)
    try:
        from robot_rl.ros import messages as m

        node = probe.add(probe.ros.Node("sim_node", cli_args=["--ros-args", "-r", "__ns:=/r1",
                                                              "-r", "/clock:=/r1/clock"]))
        assert node.get_fully_qualified_name() == "/r1/sim_node"
        assert node.resolve_topic_name("robot/tcp_pose") == "/r1/robot/tcp_pose"
        assert node.resolve_topic_name("/clock") == "/r1/clock"  # the remap
        assert node.resolve_topic_name("~/status") == "/r1/sim_node/status"
        ours, absolute = probe.collect(m.String, "/r1/clock"), probe.collect(m.String, "/clock")
        pub = node.create_publisher(m.String, "/clock", 10)
        assert pub.topic_name == "/r1/clock"
        assert probe.spin_until(lambda: pub.get_subscription_count() >= 1, 20.0)
        pub.publish(m.String(data="tick"))
        assert probe.spin_until(lambda: len(ours) == 1, 10.0)
        probe.spin(0.3)
        assert absolute == [] and ours[0][1].data == "tick"
    finally:
        probe.close()


# --- two sessions side by side -----------------------------------------------------------------


def test_two_namespaced_sim_sessions_share_a_domain_without_cross_talk(tmp_path, monkeypatch):
    env = private_env()
    probe = Probe(monkeypatch, env)
    procs: dict[str, subprocess.Popen] = {}
    try:
        from robot_rl.ros import messages as m

        def ids(topic: str) -> list:
            return probe.collect(m.String, topic, lambda msg: json.loads(msg.data))

        requests = {ns: ids(f"/{ns}/sim/reset") for ns in ("r1", "r2")}
        answers = {ns: ids(f"/{ns}/sim/reset_done") for ns in ("r1", "r2")}
        unqualified = ids("/sim/reset")  # where both would meet without a namespace
        statuses = {ns: probe.statuses(f"{ns}/sim_node") for ns in ("r1", "r2")}
        diagnostics: list = probe.collect(m.DiagnosticArray, "/diagnostics",
                                          lambda msg: [(s.name, s.hardware_id) for s in msg.status])
        best_effort = probe.ros.QoSProfile(depth=10, reliability=probe.ros.ReliabilityPolicy.BEST_EFFORT)
        clocks = {ns: probe.collect(m.Clock, f"/{ns}/clock".replace("//", "/"), depth=best_effort)
                  for ns in ("r1", "r2", "")}
        for ns in ("r1", "r2"):
            out = open(tmp_path / f"{ns}.out", "w")
            procs[ns] = subprocess.Popen(
                [sys.executable, "-m", "robot_rl.cli", "launch", str(PICK), "--namespace", ns, "--no-progress",
                 "--run-dir", str(tmp_path / ns), "--stop-timeout", "10",
                 *[a for s in ("ros.policy=expert", "ros.episodes=2", "ros.state_timeout_s=2.0", "ros.status_hz=5",
                               f"learning.actor_id={ns}_actor") for a in ("--set", s)]],
                stdout=out, stderr=subprocess.STDOUT, env=env)
        assert probe.spin_until(lambda: all(p.poll() is not None for p in procs.values()), 240.0), "sessions hang"
        probe.spin(0.5)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
        probe.close()
    for ns, proc in procs.items():
        out = (tmp_path / f"{ns}.out").read_text()
        assert proc.returncode == 0, out[-3000:]
        summary = json.loads(next(line.split("] ", 1)[1] for line in out.splitlines()
                                  if line.startswith("[actor_node] {")))
        assert summary["actor_id"] == f"{ns}_actor" and summary["episodes"] == 2, summary
        assert summary["successes"] >= 1, out[-3000:]  # the expert succeeds; a machine stall may cost one
        # each sim heard and answered its own actor only, and the other session's topics stayed apart
        assert requests[ns] and all(r["id"].startswith(f"{ns}_actor:") for _, r in requests[ns]), requests[ns]
        assert answers[ns] and all(a["id"].startswith(f"{ns}_actor:") for _, a in answers[ns]), answers[ns]
        counts = [a["resets"] for _, a in answers[ns]]
        assert counts == list(range(counts[0], counts[0] + len(counts)))  # no foreign reset in between
        last = max(statuses[ns], key=lambda s: s["stamp"])
        assert last["node"] == f"/{ns}/sim_node" and last["resets"] == 1 + summary["episodes"]  # startup + episodes
        assert set(last["received"]) >= {f"/{ns}/robot/target_pose", f"/{ns}/sim/reset"}
        assert all(topic.startswith(f"/{ns}/") for topic in last["received"]), last["received"]
    assert unqualified == []
    assert clocks["r1"] and clocks["r2"] and clocks[""] == []  # each sim's /clock moved into its namespace
    named = {name for _, entries in diagnostics for name, _ in entries}
    assert {"/r1/sim_node", "/r1/actor_node", "/r2/sim_node", "/r2/actor_node"} <= named
