"""The reward frame format: chunked, crash-safe writes, layout checks, appends."""

import json

import numpy as np
import pytest

from robot_rl.reward.dataset import DatasetError, FrameWriter, check_layout, load_frames, read_meta

CAMS = ["front", "wrist"]


def _frame(value: int, size=(16, 12)):
    w, h = size
    return {c: np.full((h, w, 3), (value + i) % 256, np.uint8) for i, c in enumerate(CAMS)}


def _writer(folder, **kw):
    args = dict(cameras=CAMS, image_size=(16, 12), task="PickCube", label_source="ground_truth",
                tags=["a", "b"], chunk_frames=4)
    args.update(kw)
    return FrameWriter(folder, **args)


def test_chunks_are_on_disk_as_they_fill_and_round_trip(tmp_path):
    w = _writer(tmp_path / "d")
    meta = json.loads((tmp_path / "d" / "meta.json").read_text())
    assert meta["cameras"] == CAMS and meta["image_size"] == [16, 12] and meta["format"] == "robot_rl.reward_frames"
    for i in range(3):
        w.add(_frame(i), label=i == 2, tag="a")
    assert not list((tmp_path / "d").glob("chunk_*.npz"))  # not full yet
    w.add(_frame(3), label=False, tag="b")
    assert [p.name for p in (tmp_path / "d").glob("chunk_*.npz")] == ["chunk_000000.npz"]  # full: written now
    w.end_episode()
    for i in range(4, 7):
        w.add(_frame(i), label=True, tag="b")
    w.close()
    fs = load_frames(tmp_path / "d")
    assert len(fs) == 7
    assert fs.label.tolist() == [False, False, True, False, True, True, True]
    assert fs.episode.tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert fs.step.tolist() == [0, 1, 2, 3, 0, 1, 2]
    assert [fs.meta["tags"][t] for t in fs.tag] == ["a", "a", "a", "b", "b", "b", "b"]
    assert fs.images["wrist"].shape == (7, 12, 16, 3) and fs.images["wrist"][5, 0, 0, 0] == 6


def test_a_crash_loses_at_most_the_chunk_in_flight(tmp_path):
    w = _writer(tmp_path / "d")
    for i in range(10):
        w.add(_frame(i), label=False)
    # no close(): the process died. A half-written chunk from the crash is left as .tmp.
    (tmp_path / "d" / "chunk_000002.npz.tmp").write_bytes(b"partial")
    fs = load_frames(tmp_path / "d")
    assert len(fs) == 8


def test_append_continues_episodes_and_refuses_other_layouts(tmp_path):
    w = _writer(tmp_path / "d")
    w.add(_frame(0), label=False)
    w.end_episode()
    w.add(_frame(1), label=True)
    w.close()
    with pytest.raises(DatasetError, match="--append"):
        _writer(tmp_path / "d")
    with pytest.raises(DatasetError, match=r"frames are 16x12, but reward.image_size is 32x32"):
        _writer(tmp_path / "d", image_size=(32, 32), append=True)
    with pytest.raises(DatasetError, match=r"cameras \['front', 'wrist'\], but reward.cameras is \['front'\]"):
        _writer(tmp_path / "d", cameras=["front"], append=True)
    w2 = _writer(tmp_path / "d", append=True, tags=["c"])
    w2.add(_frame(2), label=True, tag="c")
    w2.close()
    fs = load_frames(tmp_path / "d")
    assert fs.episode.tolist() == [0, 1, 2]
    assert fs.meta["tags"] == ["a", "b", "recorded", "c"] and fs.meta["tags"][fs.tag[-1]] == "c"


def test_bad_frames_and_folders_are_clear_errors(tmp_path):
    w = _writer(tmp_path / "d")
    with pytest.raises(ValueError, match="camera 'front' is uint8 \\(12, 12, 3\\), expected uint8 \\(12, 16, 3\\)"):
        w.add({"front": np.zeros((12, 12, 3), np.uint8), "wrist": np.zeros((12, 16, 3), np.uint8)}, label=True)
    with pytest.raises(DatasetError, match="no meta.json"):
        read_meta(tmp_path)
    with pytest.raises(DatasetError, match="holds no frames"):
        load_frames(tmp_path / "d")
    meta = read_meta(tmp_path / "d")
    check_layout(meta, CAMS, (16, 12), "here")
    with pytest.raises(DatasetError, match="here: frames are 16x12"):
        check_layout(meta, CAMS, (64, 64), "here")
