"""A camera another driver publishes, feeding the actor node over DDS (``cameras.<name>.backend: topic``).

A plain node in the test stands in for realsense2_camera: it publishes distinct frames on
realsense2_camera's Jazzy topic, ``/camera/camera/color/image_raw`` (raw ``rgb8``) or its
image_transport ``/compressed`` twin (JPEG), with a corrupt message now and then. The sim
graph (sim_node + actor_node, started as ``robot-rl launch`` starts them) runs an episode
with a random policy and records it as a demo: every image the actor observed must be one
the driver published, decoded; the corrupt ones are dropped and counted. The same run
renames two robot topics through ``ros.topics``, so both nodes must have received the
names. Then the bad input: a camera topic that stays silent, one that brings another
encoding, one that brings another size: each ends the actor with one line naming the
topic and exit status 2.
"""

from __future__ import annotations

import array
import re
import time

import cv2
import numpy as np
import pytest
from graph_harness import Probe, Session, private_env  # noqa: E402

from robot_rl.ros import convert  # noqa: E402
from robot_rl.ros import messages as m  # noqa: E402

REALSENSE = "/camera/camera/color/image_raw"
SIZE = 128
_Y, _X = np.mgrid[0:SIZE, 0:SIZE]


def frame(i: int) -> np.ndarray:
    """Frame ``i``: smooth (JPEG keeps it), with a bar that moves and a colour that changes."""
    image = np.dstack([_X * 2, _Y * 2, np.full_like(_X, (i * 37) % 256)]).astype(np.uint8)
    image[:, (i * 5) % SIZE:(i * 5) % SIZE + 8] = (255, 255, 255)
    return image


class Driver:
    """realsense2_camera's stand-in: frame n on each :meth:`publish`, every 10th message corrupt."""

    def __init__(self, probe: Probe, transport: str, corrupt_every: int = 10) -> None:
        self.compressed = transport == "compressed"
        qos = probe.ros.QoSProfile(depth=1, reliability=probe.ros.ReliabilityPolicy.RELIABLE)
        self.topic = REALSENSE + ("/compressed" if self.compressed else "")
        self.pub = probe.node.create_publisher(m.CompressedImage if self.compressed else m.Image, self.topic, qos)
        self.sent: set[bytes] = set()  # every good frame as the actor should decode it
        self.n = self.corrupt = 0
        self.corrupt_every = corrupt_every

    def publish(self) -> None:
        self.n += 1
        stamp = time.time()
        if self.corrupt_every and self.n % self.corrupt_every == 0:
            self.corrupt += 1
            if self.compressed:  # a JPEG cut short, as a lossy link might deliver it
                whole = convert.compressed_image_to_msg(frame(self.n), stamp, "camera_color_optical_frame")
                whole.data = array.array("B", bytes(whole.data)[: len(whole.data) // 2])
                self.pub.publish(whole)
            else:  # pixels that do not add up to the size the message claims
                self.pub.publish(m.Image(header=convert.header(stamp, "x"), height=SIZE, width=SIZE,
                                         encoding="rgb8", step=SIZE * 3, data=array.array("B", bytes(100))))
            return
        image = frame(self.n)
        if self.compressed:
            msg = convert.compressed_image_to_msg(image, stamp, "camera_color_optical_frame", kind="jpeg")
            decoded = cv2.imdecode(np.frombuffer(bytes(msg.data), np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
            self.sent.add(np.ascontiguousarray(decoded).tobytes())
        else:
            msg = convert.image_to_msg(image, stamp, "camera_color_optical_frame")
            self.sent.add(image.tobytes())
        self.pub.publish(msg)


def camera_overrides(transport: str) -> list[str]:
    return ["env.obs_mode=pixels", "env.cameras=[front]", "cameras.front.backend=topic",
            f"cameras.front.hardware={{topic: {REALSENSE}, transport: {transport}}}",
            "ros.state_timeout_s=2.0"]  # relaxed for loaded CI machines


def run_while_publishing(probe: Probe, publish, proc, timeout: float) -> None:
    """Publish at about 30 Hz (``publish`` may be None: a silent driver) until ``proc`` ends."""
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        if publish is not None:
            publish()
        probe.spin(1.0 / 30.0)
    probe.spin(0.5)  # the node's last status


@pytest.mark.parametrize("transport", ["raw", "compressed"])
def test_a_topic_camera_feeds_the_actor_the_images_the_driver_published(tmp_path, monkeypatch, transport):
    demos = tmp_path / "demos"
    env = private_env()
    session = Session(tmp_path, [*camera_overrides(transport), "ros.image_timeout_s=5", "ros.policy=random",
                                 "ros.episodes=1",
                                 "env.max_episode_steps=8", f"ros.demos_dir={demos}", "ros.demos_keep_failed=true",
                                 "ros.topics.tcp_pose=/franka/tcp_pose", "ros.topics.target_pose=/franka/target_pose"],
                      env)
    assert session.graph.names == ["sim_node", "actor_node"]  # no camera node: the driver is someone else's
    probe = Probe(monkeypatch, env)
    try:
        driver = Driver(probe, transport)
        statuses = probe.statuses("actor_node")
        poses = probe.collect(m.PoseStamped, "/franka/tcp_pose")
        targets = probe.collect(m.PoseStamped, "/franka/target_pose")
        default_poses = probe.collect(m.PoseStamped, "/robot/tcp_pose")
        session.start("sim_node")
        actor = session.start("actor_node")
        run_while_publishing(probe, driver.publish, actor, timeout=180)
        assert actor.poll() == 0, session.log("actor_node")[-3000:]
    finally:
        probe.close()
        codes = session.stop()
    assert codes["sim_node"] == 0, session.log("sim_node")[-2000:]
    episodes = sorted(demos.glob("episode_*.npz"))
    assert len(episodes) == 1
    with np.load(episodes[0]) as episode:
        seen = episode["obs/front"]
    assert seen.shape == (9, SIZE, SIZE, 3)  # 8 steps and the final observation
    unknown = [i for i, image in enumerate(seen) if image.tobytes() not in driver.sent]
    assert not unknown, f"observations {unknown} are not images the driver published"
    assert len({image.tobytes() for image in seen}) >= 2  # a stream, not one frozen frame
    status = statuses[-1]
    topic = next(t for t in status["received"] if t.endswith(driver.topic))
    assert status["received"][topic] > 5 and status["dropped"].get(topic, 0) >= 1, status
    assert driver.corrupt >= 3 and status["dropped"][topic] <= driver.corrupt
    # ros.topics reached both nodes: the sim published the pose, the actor its targets, on the new names
    assert len(poses) > 50 and len(targets) >= 8 and not default_poses


def one_line(log: str) -> str:
    lines = [line for line in log.splitlines() if line.startswith("robot-rl: ")]
    assert len(lines) == 1 and "Traceback" not in log, log[-3000:]
    return lines[0]


def test_a_camera_topic_that_is_silent_or_wrong_ends_the_actor_with_one_line(tmp_path, monkeypatch):
    env = private_env()
    session = Session(tmp_path, [*camera_overrides("raw"), "ros.policy=random", "ros.startup_timeout_s=5"], env)
    probe = Probe(monkeypatch, env)
    publishers = []

    def wrong(width: int, height: int, encoding: str, channels: int):
        if not publishers:  # the driver starts after the silent run
            qos = probe.ros.QoSProfile(depth=1, reliability=probe.ros.ReliabilityPolicy.RELIABLE)
            publishers.append(probe.node.create_publisher(m.Image, REALSENSE, qos))
        msg = m.Image(height=height, width=width, encoding=encoding, step=width * channels,
                      data=array.array("B", bytes(width * height * channels)))
        return lambda: publishers[0].publish(msg)

    results = {}
    try:
        session.start("sim_node")
        for case, publish in [("silent", None), ("mono8", lambda: wrong(640, 480, "mono8", 1)),
                              ("size", lambda: wrong(64, 48, "rgb8", 3))]:
            publish = publish() if publish is not None else None
            actor = session.start("actor_node")
            run_while_publishing(probe, publish, actor, timeout=120)
            results[case] = (actor.poll(), one_line(session.log("actor_node")))
    finally:
        probe.close()
        session.stop()
    code, line = results["silent"]
    assert code == 2 and line == (f"robot-rl: camera front: no image on {REALSENSE} within 5 s; nothing publishes "
                                  "that topic: it should come from another driver (cameras.front.backend is topic, "
                                  "so robot_rl starts no camera node for it, e.g. realsense2_camera); is it "
                                  "running, on this topic?")
    code, line = results["mono8"]
    assert code == 2 and re.fullmatch(
        rf"robot-rl: camera front: {REALSENSE} publishes 640x480 mono8, the config says 128x128 rgb8, bgr8, rgba8 "
        r"or bgra8 \(\d+ refused: image encoding mono8 is not supported \(rgb8, bgr8, rgba8 or bgra8\)\)", line), line
    code, line = results["size"]
    assert code == 2 and line.startswith(f"robot-rl: camera front: {REALSENSE} publishes 64x48 rgb8, the config "
                                         "says 128x128 rgb8"), line
