"""Run by LeRobot's own Python (its own virtualenv), not robot_rl's: LeRobot's reference code reads
and writes LeRobotDataset v3 folders for the round-trip tests (tests/data/test_lerobot_v3.py).

    python lerobot_reference.py read ROOT EXPECTED.npz     LeRobotDataset reads ROOT; compare with the arrays
    python lerobot_reference.py write ROOT ARRAYS.npz CODEC  LeRobot's writer makes ROOT from ARRAYS (h264, libsvtav1)

Prints one JSON line. It imports the standalone ``lerobot-dataset`` package (``ledataset``) or
``lerobot`` itself, whichever is installed. LeRobot 0.4.4 decodes videos with torchcodec or
torchvision's ``VideoReader``; where neither is usable (no torchcodec wheel, a torchvision
without ``VideoReader``), frames are decoded with PyAV, the library under LeRobot's "pyav"
backend, at the timestamps LeRobot's own metadata gives, and the line says so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

try:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
except ImportError:
    from ledataset.datasets.lerobot_dataset import LeRobotDataset


def _pyav_frames(path: Path, times: list[float], fps: int) -> list[np.ndarray]:
    import av

    with av.open(str(path)) as container:
        decoded = {int(round(f.time * fps)): f.to_ndarray(format="rgb24") for f in container.decode(video=0)}
    return [decoded[int(round(t * fps))] for t in times]


def read(root: Path, expected_path: Path) -> dict:
    expected = dict(np.load(expected_path))
    ds = LeRobotDataset("local/robot_rl", root=root)
    table = ds.hf_dataset.with_format(None)
    out = {"frames": len(ds), "episodes": ds.meta.total_episodes, "fps": ds.meta.fps, "mismatch": []}
    for name in ("action", "observation.state", "next.reward", "next.done", "episode_index", "frame_index"):
        got = np.asarray(table[name])
        if not np.array_equal(got.reshape(expected[name].shape), expected[name]):
            out["mismatch"].append(name)
    decoder = "LeRobotDataset.__getitem__"
    for key in ds.meta.video_keys:
        want = expected[key]
        try:
            frames = [(ds[i][key].numpy().transpose(1, 2, 0) * 255).round().astype(np.uint8) for i in range(len(ds))]
        except (AttributeError, ImportError, RuntimeError):
            decoder = "PyAV at LeRobot's episode timestamps"
            frames = []
            for e in range(ds.meta.total_episodes):
                ep = ds.meta.episodes[e]
                rows = [r for r in range(len(table)) if table[r]["episode_index"] == e]
                path = root / ds.meta.get_video_file_path(e, key)
                times = [ep[f"videos/{key}/from_timestamp"] + table[r]["timestamp"] for r in rows]
                frames += _pyav_frames(path, times, ds.meta.fps)
        if not np.array_equal(np.stack(frames), want):
            out["mismatch"].append(key)
    out["decoder"] = decoder
    return out


def write(root: Path, arrays_path: Path, vcodec: str) -> dict:
    arrays = dict(np.load(arrays_path))
    cameras = {}
    if "front" in arrays:
        h, w, _ = arrays["front"].shape[1:]
        cameras["observation.images.front"] = {"dtype": "video", "shape": (h, w, 3),
                                               "names": ["height", "width", "channels"]}
    features = {
        **cameras,
        "observation.state": {"dtype": "float32", "shape": (arrays["state"].shape[1],), "names": None},
        "action": {"dtype": "float32", "shape": (arrays["action"].shape[1],), "names": None},
        "next.reward": {"dtype": "float32", "shape": (1,), "names": None},
        "next.done": {"dtype": "bool", "shape": (1,), "names": None},
    }
    ds = LeRobotDataset.create("local/lerobot_made", fps=int(arrays["fps"]), features=features, root=root,
                               use_videos=bool(cameras), vcodec=vcodec)
    for e in np.unique(arrays["episode"]):
        for i in np.flatnonzero(arrays["episode"] == e):
            frame = {"observation.state": arrays["state"][i], "action": arrays["action"][i],
                     "next.reward": arrays["reward"][i:i + 1], "next.done": arrays["done"][i:i + 1], "task": "pick"}
            if cameras:
                frame["observation.images.front"] = arrays["front"][i]
            ds.add_frame(frame)
        ds.save_episode()
    ds.finalize()
    return {"frames": len(arrays["episode"])}


if __name__ == "__main__":
    mode, root, arrays = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    print(json.dumps(read(root, arrays) if mode == "read" else write(root, arrays, sys.argv[4])))
