"""Image transport across processes on the DDS backend: latency and throughput.

For each image size (128x128, 640x480) and rate (15, 30 Hz), two camera processes
publish ``sensor_msgs/Image`` rgb8 on ``/camera/cam<i>/color/image_raw`` (reliable,
keep-last 1, as camera nodes do) and this process subscribes to both with the sensor
QoS (best effort), as the actor does. Latency is receive time (after decoding and
turning the message into a numpy image) minus the header stamp set just before
publishing; both ends read the same system clock.

Also measured once, for reference: cyclonedds-python's own IDL serializer on one
640x480 image, the path this backend avoids.

    python bench/transport.py [--duration 5] [--sizes 128x128,640x480] [--rates 15,30]

Prints one line per setting, then ONE JSON line with all figures. Traffic stays on
loopback (ROBOT_RL_DDS_LOCALHOST=1) in a random ROS domain unless ROS_DOMAIN_ID is set.
Figures depend on what else runs on the machine; on a shared 2-core machine they are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np

N_CAMERAS = 2


def _topic(camera: int) -> str:
    return f"/camera/cam{camera}/color/image_raw"


def run_publisher(camera: int, width: int, height: int, rate: float, duration: float) -> None:
    """Child process: publish one camera's images at ``rate`` for ``duration`` seconds."""
    from robot_rl import ros
    from robot_rl.ros import convert, msgs

    ros.init(args=[])
    node = ros.Node(f"bench_camera_{camera}")
    pub = node.create_publisher(msgs.Image, _topic(camera), ros.QoSProfile(depth=1))
    rng = np.random.default_rng(camera)
    frames = [rng.integers(0, 256, (height, width, 3), dtype=np.uint8) for _ in range(4)]
    deadline = time.monotonic() + 10.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    print(json.dumps({"ready": True}), flush=True)
    costs = []
    period = 1.0 / rate
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < duration:
        t0 = time.perf_counter()
        msg = convert.image_to_msg(frames[i % len(frames)], time.time(), f"cam{camera}")
        pub.publish(msg)
        costs.append(time.perf_counter() - t0)
        i += 1
        time.sleep(max(0.0, start + i * period - time.monotonic()))
    time.sleep(0.3)  # let the last samples go out before the participant is deleted
    node.destroy_node()
    ros.shutdown()
    print(json.dumps({"sent": i, "publish_ms_p50": 1e3 * float(np.median(costs)),
                      "publish_ms_p99": 1e3 * float(np.percentile(costs, 99))}), flush=True)


def run_setting(width: int, height: int, rate: float, duration: float) -> dict:
    """Start the camera processes, receive for ``duration`` s, return the figures."""
    from robot_rl import ros
    from robot_rl.ros import convert, msgs

    latencies: list[float] = []
    received = [0] * N_CAMERAS
    warmup_until = [0.0]
    last_receive = [0.0]

    node = ros.Node(f"bench_sink_{width}x{height}_{int(rate)}")

    def make_callback(camera: int):
        def on_image(msg) -> None:
            image, stamp = convert.image_from_msg(msg)
            now = time.time()
            assert image.shape == (height, width, 3)
            if now >= warmup_until[0]:
                latencies.append(now - stamp)
                received[camera] += 1
                last_receive[0] = now
        return on_image

    for cam in range(N_CAMERAS):
        node.create_subscription(msgs.Image, _topic(cam), make_callback(cam), ros.qos_profile_sensor_data)

    warmup = 0.5
    cmd = [sys.executable, os.path.abspath(__file__), "--role", "pub", "--size", f"{width}x{height}",
           "--rate", str(rate), "--duration", str(duration + warmup)]
    children = [subprocess.Popen(cmd + ["--camera", str(cam)], stdout=subprocess.PIPE, text=True)
                for cam in range(N_CAMERAS)]
    executor = ros.SingleThreadedExecutor()
    executor.add_node(node)
    try:
        for child in children:  # each prints "ready" once it matched our subscription
            while True:
                executor.spin_once(timeout_sec=0.05)
                line = child.stdout.readline() if child.poll() is None else ""
                if line.strip() or child.poll() is not None:
                    break
        warmup_until[0] = time.time() + warmup
        while any(c.poll() is None for c in children):
            executor.spin_once(timeout_sec=0.05)
        executor.spin_once(timeout_sec=0.1)
        elapsed = last_receive[0] - warmup_until[0]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
        executor.remove_node(node)
        node.destroy_node()
    pub_reports = [json.loads(c.stdout.read().strip().splitlines()[-1]) for c in children]
    lat_ms = 1e3 * np.asarray(latencies) if latencies else np.array([float("nan")])
    expected = N_CAMERAS * rate * duration
    total = sum(received)
    return {
        "size": f"{width}x{height}", "cameras": N_CAMERAS, "rate_hz": rate,
        "latency_ms_p50": round(float(np.percentile(lat_ms, 50)), 3),
        "latency_ms_p99": round(float(np.percentile(lat_ms, 99)), 3),
        "latency_ms_max": round(float(np.max(lat_ms)), 3),
        "received_per_s": round(total / max(elapsed, 1e-9), 2),
        "delivered_fraction": round(min(total / expected, 1.0), 4) if expected else None,
        "throughput_MB_per_s": round(total * width * height * 3 / max(elapsed, 1e-9) / 1e6, 2),
        "publish_ms_p50": round(float(np.mean([r["publish_ms_p50"] for r in pub_reports])), 3),
        "publish_ms_p99": round(float(max(r["publish_ms_p99"] for r in pub_reports)), 3),
    }


def idl_serialize_ms(width: int = 640, height: int = 480, repeats: int = 3) -> float:
    """cyclonedds-python's generic serializer on one image (the path the backend avoids)."""
    from robot_rl.ros.messages import Header, Image, Time
    from robot_rl.ros.messages.idl import idl_type

    sample = idl_type(Image)(
        header=idl_type(Header)(stamp=idl_type(Time)(sec=0, nanosec=0), frame_id="cam"), height=height,
        width=width, encoding="rgb8", is_bigendian=0, step=width * 3, data=list(bytes(width * height * 3)))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        sample.serialize()
        best = min(best, time.perf_counter() - t0)
    return 1e3 * best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per setting")
    parser.add_argument("--sizes", default="128x128,640x480")
    parser.add_argument("--rates", default="15,30")
    parser.add_argument("--role", default="sink", choices=["sink", "pub"], help=argparse.SUPPRESS)
    parser.add_argument("--camera", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--size", default="640x480", help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, default=30.0, help=argparse.SUPPRESS)
    args = parser.parse_args()

    os.environ.setdefault("ROBOT_RL_DDS_LOCALHOST", "1")
    os.environ.setdefault("ROBOT_RL_ROS_BACKEND", "dds")
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 100)))

    if args.role == "pub":
        w, h = (int(v) for v in args.size.split("x"))
        run_publisher(args.camera, w, h, args.rate, args.duration)
        return 0

    from robot_rl import ros

    ros.init(args=[])
    results = []
    try:
        for size in args.sizes.split(","):
            w, h = (int(v) for v in size.split("x"))
            for rate in (float(r) for r in args.rates.split(",")):
                r = run_setting(w, h, rate, args.duration)
                results.append(r)
                print(f"{r['size']:>8} x{r['cameras']} @ {r['rate_hz']:4.0f} Hz: latency p50 "
                      f"{r['latency_ms_p50']:6.2f} ms  p99 {r['latency_ms_p99']:6.2f} ms  "
                      f"max {r['latency_ms_max']:6.2f} ms | {r['received_per_s']:6.1f} img/s "
                      f"({r['delivered_fraction']:.1%} delivered), {r['throughput_MB_per_s']:6.1f} MB/s | "
                      f"publish p50 {r['publish_ms_p50']:.2f} ms", flush=True)
    finally:
        ros.try_shutdown()
    idl_ms = idl_serialize_ms()
    print(f"reference: cyclonedds-python IDL serialize of one 640x480 rgb8 image: {idl_ms:.1f} ms")
    print(json.dumps({"bench": "transport", "backend": "dds", "duration_s": args.duration,
                      "idl_serialize_640x480_ms": round(idl_ms, 2), "settings": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
