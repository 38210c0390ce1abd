"""Bags robot_rl writes without ROS, read by a real ROS 2's ``ros2 bag`` (rosbag2_storage_mcap).

Runs only where a ROS 2 is sourced (see ``tests/support/jazzy.py``): ``ros2 bag info`` on a
finished bag and on one a crash cut short (it reads ``metadata.yaml``, which the writer
keeps valid at every flush), ``ros2 bag play`` of a finished bag into a DDS-backend
subscriber (every message, byte for byte), and of a crashed bag after ``robot-rl bag repair``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from jazzy import dds_env, needs_ros2, needs_rosbag2, ros2, ros_env

from robot_rl.ros import messages as m
from robot_rl.ros.bag.reader import repair_bag
from robot_rl.ros.bag.schema import qos_profile
from robot_rl.ros.bag.writer import BagWriter

pytestmark = [needs_ros2, needs_rosbag2]
N = 40
T0 = 1_700_000_000_000_000_000

LISTENER = textwrap.dedent("""
    import sys, time
    from robot_rl.ros.dds import api as ros
    from robot_rl.ros import messages as m
    ros.init(args=[])
    node = ros.Node("bag_listener")
    got = []
    node.create_subscription(m.JointState, "/joint_states", got.append, ros.QoSProfile(depth=1000), raw=True)
    executor = ros.SingleThreadedExecutor()
    executor.add_node(node)
    print("ready", flush=True)
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end and len(got) < int(sys.argv[2]):
        executor.spin_once(timeout_sec=0.05)
    for data in got:
        print(bytes(data).hex())
""")


def joints(i: int) -> m.JointState:
    return m.JointState(header=m.Header(stamp=m.Time(sec=i, nanosec=1), frame_id="base"), name=["a"],
                        position=[i * 0.5])


def write(path: Path, finish: bool = True) -> list[bytes]:
    w = BagWriter(path)
    js = w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    tf = w.add_topic("/tf_static", "tf2_msgs/msg/TFMessage", [qos_profile(1, durability="transient_local")])
    w.write(tf, m.serialize(m.TFMessage()), T0)
    sent = []
    for i in range(N):
        data = bytes(m.serialize(joints(i)))
        w.write(js, data, T0 + (i + 1) * 10_000_000)  # 100 Hz
        sent.append(data)
    if finish:
        w.close()
    else:
        w.flush()  # then "crash": no summary, no footer
    return sent


def test_ros2_bag_info_reads_a_finished_bag_and_a_crashed_one(tmp_path):
    ros = ros_env()
    write(tmp_path / "done")
    info = ros2(["bag", "info", str(tmp_path / "done")], ros)
    assert info.returncode == 0, info.stdout + info.stderr
    assert re.search(r"Messages:\s+41", info.stdout) and "Storage id:        mcap" in info.stdout
    assert re.search(r"Topic: /joint_states \| Type: sensor_msgs/msg/JointState \| Count: 40 \| "
                     r"Serialization Format: cdr", info.stdout), info.stdout

    write(tmp_path / "crashed", finish=False)
    info = ros2(["bag", "info", str(tmp_path / "crashed")], ros)
    assert info.returncode == 0 and re.search(r"Messages:\s+41", info.stdout), info.stdout + info.stderr


def _play_into_listener(bag: Path, ros: dict[str, str]) -> list[bytes]:
    listener = subprocess.Popen([sys.executable, "-c", LISTENER, "60", str(N)], env=dds_env(ros),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert listener.stdout.readline().strip() == "ready"
    played = ros2(["bag", "play", str(bag), "--delay", "3"], ros, timeout=120)  # time to discover the listener
    out, err = listener.communicate(timeout=90)
    assert played.returncode == 0, played.stdout + played.stderr
    return [bytes.fromhex(line) for line in out.split()]


def _padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)  # what a DDS reader hands over


def test_ros2_bag_play_publishes_a_finished_bag_byte_for_byte(tmp_path):
    ros = ros_env()
    sent = write(tmp_path / "done")
    assert _play_into_listener(tmp_path / "done", ros) == [_padded(d) for d in sent]


def test_a_crashed_bag_plays_after_robot_rl_bag_repair(tmp_path):
    ros = ros_env()
    sent = write(tmp_path / "crashed", finish=False)
    assert repair_bag(tmp_path / "crashed").kept == N + 1
    assert _play_into_listener(tmp_path / "crashed", ros) == [_padded(d) for d in sent]


def test_ros2_bag_play_reads_a_crashed_bag_up_to_its_last_flush(tmp_path):
    """Unrepaired: the file ends inside a chunk being written; rosbag2's reader scans the whole chunks."""
    ros = ros_env()
    sent = write(tmp_path / "crashed", finish=False)
    mcap = next((tmp_path / "crashed").glob("*.mcap"))
    with open(mcap, "ab") as f:  # the start of a chunk the kill cut off
        f.write(b"\x06" + (5000).to_bytes(8, "little") + bytes(100))
    assert _play_into_listener(tmp_path / "crashed", ros) == [_padded(d) for d in sent]
