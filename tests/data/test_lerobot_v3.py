"""LeRobotDataset v3 out of and into robot_rl demo folders: exact round trips up to the documented
losses, LeRobot's own reader and writer on the other side, and one-line errors for bad datasets.

LeRobot's reference code runs in its own virtualenv (it does not install beside robot_rl's pins):
set ``ROBOT_RL_LEROBOT_PYTHON`` to that virtualenv's python (with ``lerobot-dataset`` or
``lerobot`` installed) for the tests that read and write through it; they skip otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import gymnasium as gym
import numpy as np
import pytest
from lerobot_venv import lerobot_python, reference

from robot_rl.cli import main
from robot_rl.data.demos import DemoWriter, episode_files, load_demos
from robot_rl.data.lerobot_export import export_lerobot
from robot_rl.data.lerobot_import import import_lerobot
from robot_rl.data.lerobot_layout import LeRobotFormatError
from robot_rl.data.transition import Step
from robot_rl.data.video_frames import have_pyav

pytest.importorskip("pyarrow", reason="the lerobot extra (pyarrow) is not installed")
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

OBS = gym.spaces.Dict({
    "front": gym.spaces.Box(0, 255, (12, 16, 3), np.uint8),
    "wrist": gym.spaces.Box(0, 255, (8, 8, 3), np.uint8),
    "state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32),
})
ACTION = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
# float32 values a careless round trip changes: tiny, huge, negative zero, not a short decimal
AWKWARD = np.array([1e-45, -3.4028235e38, 3.4028235e38, -0.0, 0.1, 1 / 3, 2.0**-126], dtype=np.float32)


def make_demos(directory: Path, lengths=(5, 3, 4), seed: int = 0, source: str = "test") -> list[list[Step]]:
    """Episodes with every field varied: terminated and truncated endings, flags alternating step to step."""
    rng = np.random.default_rng(seed)

    def obs() -> dict[str, np.ndarray]:
        state = rng.normal(size=5).astype(np.float32)
        state[rng.integers(0, 5)] = AWKWARD[rng.integers(0, len(AWKWARD))]
        return {"front": rng.integers(0, 256, (12, 16, 3), dtype=np.uint8),
                "wrist": rng.integers(0, 256, (8, 8, 3), dtype=np.uint8), "state": state}

    writer = DemoWriter(directory, OBS, ACTION, task="PickCube", source=source, env_config={"control_hz": 10})
    episodes = []
    for e, n in enumerate(lengths):
        frames = [obs() for _ in range(n + 1)]
        steps = [Step(episode_id=e, step=t, obs=frames[t], action=rng.uniform(-1, 1, 4).astype(np.float32),
                      reward=float(AWKWARD[(t + e) % len(AWKWARD)]), terminated=(t == n - 1 and e != 1),
                      truncated=(t == n - 1 and e == 1), next_obs=frames[t + 1], intervened=bool(t % 2),
                      success=bool(t == n - 1 and e != 1), grasp_penalty=float(np.float32(-0.02 * t)))
                 for t in range(n)]
        writer.write_episode(steps)
        episodes.append(steps)
    return episodes


def assert_equal_up_to_documented_losses(original: list[list[Step]], back: list[list[Step]]) -> None:
    """Every array equal, except each episode's final next observation: a copy of its last observation."""
    assert [len(s) for s in back] == [len(s) for s in original]
    for ep_a, ep_b in zip(original, back):
        for a, b in zip(ep_a, ep_b):
            for key in OBS.spaces:
                assert np.array_equal(a.obs[key], b.obs[key]) and a.obs[key].dtype == b.obs[key].dtype, key
            assert np.array_equal(a.action, b.action)
            assert np.float32(a.reward).tobytes() == np.float32(b.reward).tobytes()  # -0.0 stays -0.0
            assert (a.terminated, a.truncated, a.intervened, a.success) == \
                   (b.terminated, b.truncated, b.intervened, b.success)
            assert np.float32(a.grasp_penalty) == np.float32(b.grasp_penalty)
        for t, b in enumerate(ep_b[:-1]):
            for key in OBS.spaces:
                assert np.array_equal(b.next_obs[key], ep_a[t].next_obs[key])
        last = ep_b[-1]
        for key in OBS.spaces:
            assert np.array_equal(last.next_obs[key], last.obs[key])  # the documented rebuild


def test_round_trip_is_exact_up_to_the_final_next_observation(tmp_path):
    original = make_demos(tmp_path / "demos")
    report = export_lerobot(tmp_path / "demos", tmp_path / "ds")
    assert report.line() == f"exported 3 episodes (12 steps, 10 fps) as LeRobotDataset v3.0 into {tmp_path / 'ds'}"
    info = json.loads((tmp_path / "ds/meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == 10 and info["total_frames"] == 12
    assert info["features"]["observation.images.front"]["shape"] == [12, 16, 3]
    assert info["features"]["observation.images.front"]["info"]["video.codec"] == "ffv1"
    assert sorted(p.name for p in (tmp_path / "ds/videos/observation.images.wrist/chunk-000").iterdir()) == \
        ["file-000.mp4", "file-001.mp4", "file-002.mp4"]
    assert not (tmp_path / "ds.tmp").exists()
    rows = pq.read_table(tmp_path / "ds/meta/episodes/chunk-000/file-000.parquet").to_pylist()
    assert [(r["dataset_from_index"], r["dataset_to_index"]) for r in rows] == [(0, 5), (5, 8), (8, 12)]
    data = pq.read_table(tmp_path / "ds/data/chunk-000/file-001.parquet")
    assert data.column("next.done").to_pylist() == [False, False, True]
    assert data.column("next.truncated").to_pylist() == [False, False, True]
    assert data.column("complementary_info.is_intervention").to_pylist() == [False, True, False]
    stats = json.loads((tmp_path / "ds/meta/stats.json").read_text())
    assert stats["action"]["count"] == [12] and np.array(stats["observation.images.front"]["mean"]).shape == (3, 1, 1)

    report = import_lerobot(tmp_path / "ds", tmp_path / "back")
    assert report.line() == f"imported 3 episodes (12 steps) into {tmp_path / 'back'}"
    back = load_demos(tmp_path / "back", OBS, ACTION)
    assert_equal_up_to_documented_losses(original, back)
    manifest = json.loads((tmp_path / "back/manifest.json").read_text())
    assert (manifest["task"], manifest["source"], manifest["env"]) == ("PickCube", "test", {"control_hz": 10})
    # the same rebuild every time: importing twice gives the same bytes of every array
    import_lerobot(tmp_path / "ds", tmp_path / "again")
    for a, b in zip(episode_files(tmp_path / "back"), episode_files(tmp_path / "again")):
        with np.load(a) as x, np.load(b) as y:
            assert all(np.array_equal(x[k], y[k]) for k in x.files)


def test_a_runs_replay_log_exports_and_imports(tmp_path):
    from robot_rl.training.replay_log import EpisodeLog

    episodes = make_demos(tmp_path / "unused", lengths=(4, 2))
    log = EpisodeLog(tmp_path / "run/replay", OBS, ACTION, task="PickCube", env_config={"control_hz": 10})
    for i, steps in enumerate(episodes):
        log.append(steps, {"actor": "a", "incarnation": "1", "episode_id": i, "seq": i + 1})
    assert main(["demos", "export", "--format", "lerobot", str(tmp_path / "run/replay"), str(tmp_path / "ds")]) == 0
    assert main(["demos", "import", "--format", "lerobot", str(tmp_path / "ds"), str(tmp_path / "back")]) == 0
    assert_equal_up_to_documented_losses(episodes, load_demos(tmp_path / "back", OBS, ACTION))
    # the replay log's source travels: behaviour cloning still takes only its intervened steps
    assert json.loads((tmp_path / "back/manifest.json").read_text())["source"] == "learner replay"


def test_a_dataset_without_robot_rl_fields_is_rebuilt_by_the_documented_rule(tmp_path):
    make_demos(tmp_path / "demos")
    export_lerobot(tmp_path / "demos", tmp_path / "ds")
    for path in sorted((tmp_path / "ds/data").glob("*/*.parquet")):  # what LeRobot's own recorders write
        table = pq.read_table(path)
        keep = [c for c in table.column_names if c not in ("next.truncated", "next.success",
                                                             "complementary_info.is_intervention")]
        pq.write_table(table.select(keep), path)
    info = json.loads((tmp_path / "ds/meta/info.json").read_text())
    for name in ("next.truncated", "next.success", "complementary_info.is_intervention"):
        del info["features"][name]
    (tmp_path / "ds/meta/info.json").write_text(json.dumps(info))
    report = import_lerobot(tmp_path / "ds", tmp_path / "back")
    assert report.line().endswith("absent, read as 0/false: complementary_info.is_intervention, next.success, "
                                  "next.truncated")
    back = load_demos(tmp_path / "back", OBS, ACTION)
    # next.done true on the last frame: terminated, for the truncated episode 1 too (LeRobot's loader's view)
    assert [(s[-1].terminated, s[-1].truncated) for s in back] == [(True, False)] * 3
    assert not any(s.intervened or s.success for ep in back for s in ep)
    # a last frame with next.done false: truncated (the recording stopped there)
    path = tmp_path / "ds/data/chunk-000/file-002.parquet"
    table = pq.read_table(path)
    table = table.set_column(table.column_names.index("next.done"), "next.done", pa.array([False] * 4))
    pq.write_table(table, path)
    import_lerobot(tmp_path / "ds", tmp_path / "back2")
    assert [(s[-1].terminated, s[-1].truncated) for s in load_demos(tmp_path / "back2", OBS, ACTION)] == \
        [(True, False), (True, False), (False, True)]


def test_images_of_another_size_are_resized_only_when_asked(tmp_path):
    make_demos(tmp_path / "demos")
    export_lerobot(tmp_path / "demos", tmp_path / "ds")
    small = gym.spaces.Dict({**OBS.spaces, "front": gym.spaces.Box(0, 255, (6, 8, 3), np.uint8)})
    with pytest.raises(LeRobotFormatError) as err:
        import_lerobot(tmp_path / "ds", tmp_path / "back", obs_space=small, action_space=ACTION, fps=10)
    assert "feature 'observation.images.front' is 16x12, the task's camera 'front' is 8x6; pass --resize" \
        in str(err.value)
    assert not (tmp_path / "back").exists()
    report = import_lerobot(tmp_path / "ds", tmp_path / "back", obs_space=small, action_space=ACTION, fps=10,
                            resize=True)
    assert report.resized == ["observation.images.front"]
    original = load_demos(tmp_path / "demos", OBS, ACTION)
    back = load_demos(tmp_path / "back", small, ACTION)
    want = cv2.resize(original[2][1].obs["front"], (8, 6), interpolation=cv2.INTER_AREA)
    assert np.array_equal(back[2][1].obs["front"], want)
    assert np.array_equal(back[2][1].obs["wrist"], original[2][1].obs["wrist"])


# --- bad input: one line naming file, feature or key; exit 2; nothing already recorded lost ---


def one_error(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("robot-rl: "), lines
    return lines[0]


@pytest.fixture
def dataset(tmp_path):
    """A v3 export, and a demo folder already holding demos that a failed import must leave as they were."""
    make_demos(tmp_path / "demos")
    export_lerobot(tmp_path / "demos", tmp_path / "ds")
    make_demos(tmp_path / "kept", lengths=(2,), seed=5)
    return tmp_path / "ds"


def _kept_bytes(tmp_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((tmp_path / "kept").iterdir())}


def _edit_info(root: Path, change) -> None:
    info = json.loads((root / "meta/info.json").read_text())
    change(info)
    (root / "meta/info.json").write_text(json.dumps(info))


def _import_error(capsys, tmp_path: Path, *extra: str) -> str:
    before = _kept_bytes(tmp_path)
    line = one_error(capsys, "demos", "import", "--format", "lerobot", str(tmp_path / "ds"), str(tmp_path / "kept"),
                     "--append", *extra)
    assert _kept_bytes(tmp_path) == before
    return line


def test_a_folder_that_is_not_v3(dataset, tmp_path, capsys):
    line = one_error(capsys, "demos", "import", "--format", "lerobot", str(tmp_path / "demos"), str(tmp_path / "x"))
    assert line == f"robot-rl: {tmp_path / 'demos'} is not a LeRobotDataset v3 folder: it has no meta/info.json"
    _edit_info(dataset, lambda i: i.update(codebase_version="v2.1"))
    assert "codebase_version is 'v2.1'; robot_rl reads LeRobotDataset v3" in _import_error(capsys, tmp_path)
    (dataset / "meta/info.json").write_text("{\"codebase_version\": \"v3.0\", \"fps\"")
    assert "meta/info.json: not valid JSON" in _import_error(capsys, tmp_path)


@pytest.mark.parametrize("fps", ["ten", 0, 1e9, None, float("nan")])
def test_malformed_fps_is_refused(dataset, tmp_path, capsys, fps):
    _edit_info(dataset, lambda i: i.update(fps=fps))
    assert f"meta/info.json: 'fps' is {fps!r}, not a whole number" in _import_error(capsys, tmp_path)


def test_other_features_cameras_or_fps_than_the_task(dataset, tmp_path, capsys):
    _edit_info(dataset, lambda i: i["features"].update({"observation.images.side": {
        "dtype": "video", "shape": [12, 16, 3], "names": None}}))
    assert "feature 'observation.images.side' is not in the task's observation" in _import_error(capsys, tmp_path)
    _edit_info(dataset, lambda i: i["features"].pop("observation.images.side"))
    _edit_info(dataset, lambda i: i["features"]["observation.state"].update(shape=[7]))
    assert "feature 'observation.state' has shape (7,), the task's observation 'state' is (5,)" in \
        _import_error(capsys, tmp_path)
    _edit_info(dataset, lambda i: i["features"]["observation.state"].update(shape=[5]))
    _edit_info(dataset, lambda i: i["features"].pop("observation.images.wrist"))
    assert "no feature 'observation.images.wrist' (the task's observation 'wrist')" in \
        _import_error(capsys, tmp_path)
    # and a task given by config: the point is the fps and feature check against the task, not the manifest
    with pytest.raises(LeRobotFormatError, match="fps is 10, the task runs at 20 Hz"):
        import_lerobot(dataset, tmp_path / "x", obs_space=OBS, action_space=ACTION, fps=20)


def test_a_truncated_or_damaged_parquet_file(dataset, tmp_path, capsys):
    path = dataset / "data/chunk-000/file-001.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    line = _import_error(capsys, tmp_path)
    assert line.startswith(f"robot-rl: {path}: cannot read the parquet file (")
    path.unlink()
    assert _import_error(capsys, tmp_path) == f"robot-rl: {path}: file missing"
    meta = dataset / "meta/episodes/chunk-000/file-000.parquet"
    meta.write_bytes(b"PAR1 not really")
    assert f"{meta}: cannot read the parquet file" in _import_error(capsys, tmp_path)


def test_a_truncated_video(dataset, tmp_path, capsys):
    path = dataset / "videos/observation.images.front/chunk-000/file-002.mp4"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    line = _import_error(capsys, tmp_path)
    assert line.startswith(f"robot-rl: {path}: "), line


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused(dataset, tmp_path, capsys, bad):
    path = dataset / "data/chunk-000/file-000.parquet"
    table = pq.read_table(path)
    values = np.array(table.column("action").combine_chunks().flatten(), dtype=np.float32)
    values[6] = bad
    table = table.set_column(table.column_names.index("action"), "action",
                             pa.FixedSizeListArray.from_arrays(pa.array(values), 4))
    pq.write_table(table, path)
    assert _import_error(capsys, tmp_path) == \
        f"robot-rl: {path}: column 'action' holds {float(bad)} at row 1 (episode 0, frame 1, dimension 2)"


def test_done_flags_that_alternate_inside_an_episode_are_refused(dataset, tmp_path, capsys):
    path = dataset / "data/chunk-000/file-000.parquet"
    table = pq.read_table(path)
    table = table.set_column(table.column_names.index("next.done"), "next.done",
                             pa.array([True, False, True, False, True]))
    pq.write_table(table, path)
    assert _import_error(capsys, tmp_path) == f"robot-rl: {path}: episode 0 is done at frame 0, before its last frame 4"


def test_rows_missing_from_an_episode_are_refused(dataset, tmp_path, capsys):
    path = dataset / "data/chunk-000/file-000.parquet"
    pq.write_table(pq.read_table(path).slice(0, 3), path)
    assert _import_error(capsys, tmp_path) == \
        f"robot-rl: {path}: episode 0 has frames 0..2 (3 rows), its metadata says 5 (frames 0..4)"


@pytest.mark.parametrize("column,value,message", [
    ("videos/observation.images.front/from_timestamp", float("nan"), "'videos/observation.images.front/"
                                                                      "from_timestamp' is nan"),
    ("videos/observation.images.front/from_timestamp", 1e12, "needs frames 10000000000000..10000000000004 "
                                                            "(a video cut short?)"),
    ("length", -3, "'length' is -3"),
    ("length", 10**12, "its metadata says 1000000000000"),
])
def test_malformed_episode_metadata_is_refused(dataset, tmp_path, capsys, column, value, message):
    path = dataset / "meta/episodes/chunk-000/file-000.parquet"
    table = pq.read_table(path)
    values = table.column(column).to_pylist()
    values[0] = value
    kind = table.schema.field(column).type
    table = table.set_column(table.column_names.index(column), column, pa.array(values, kind))
    pq.write_table(table, path)
    assert message in _import_error(capsys, tmp_path)


def test_export_refuses_what_v3_cannot_hold_and_never_overwrites(tmp_path, capsys):
    from demo_bags import make_demos as make_gray_demos

    make_gray_demos(tmp_path / "gray")  # it has a 4x5 single-channel image
    line = one_error(capsys, "demos", "export", "--format", "lerobot", str(tmp_path / "gray"), str(tmp_path / "ds"))
    assert "observation 'gray' has shape (4, 5): v3 holds HxWx3 uint8 images (videos) and vectors" in line
    make_demos(tmp_path / "demos")
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds/keep.txt").write_text("mine")
    line = one_error(capsys, "demos", "export", "--format", "lerobot", str(tmp_path / "demos"), str(tmp_path / "ds"))
    assert line == f"robot-rl: {tmp_path / 'ds'} already exists: an export writes a new dataset folder"
    assert (tmp_path / "ds/keep.txt").read_text() == "mine"
    line = one_error(capsys, "demos", "import", "--format", "lerobot", str(tmp_path / "demos"), str(tmp_path / "y"),
                     "--allow-loss")
    assert "--allow-loss is for bags" in line


def test_a_foreign_dataset_needs_the_task(dataset, tmp_path, capsys):
    _edit_info(dataset, lambda i: i.pop("robot_rl"))
    assert "has no 'robot_rl' manifest (not exported by robot_rl): pass --config" in _import_error(capsys, tmp_path)


# --- LeRobot's own reader and writer, in LeRobot's own virtualenv ---


def test_lerobots_own_reader_reads_the_export(tmp_path):
    python = lerobot_python()
    original = make_demos(tmp_path / "demos")
    export_lerobot(tmp_path / "demos", tmp_path / "ds")
    steps = [s for ep in original for s in ep]
    np.savez(tmp_path / "expected.npz", **{
        "action": np.stack([s.action for s in steps]), "observation.state": np.stack([s.obs["state"] for s in steps]),
        "next.reward": np.array([s.reward for s in steps], np.float32),
        "next.done": np.array([s.terminated or s.truncated for s in steps]),
        "episode_index": np.array([s.episode_id for s in steps]), "frame_index": np.array([s.step for s in steps]),
        "observation.images.front": np.stack([s.obs["front"] for s in steps]),
        "observation.images.wrist": np.stack([s.obs["wrist"] for s in steps])})
    result = reference(python, "read", str(tmp_path / "ds"), str(tmp_path / "expected.npz"))
    assert (result["frames"], result["episodes"], result["fps"], result["mismatch"]) == (12, 3, 10, []), result


@pytest.mark.parametrize("vcodec", ["h264", "libsvtav1"])
def test_a_dataset_lerobots_writer_made_imports(tmp_path, vcodec):
    """h264 decodes with OpenCV too; AV1 (LeRobot's default) needs PyAV, else a one-line error naming the file."""
    python = lerobot_python()
    rng = np.random.default_rng(3)
    lengths = (4, 6)
    n = sum(lengths)
    # smooth images (a lossy codec keeps them close; noise would not survive one), 48x32: SVT-AV1 crashes
    # (SIGFPE) on frames as small as 16x12
    yy, xx = np.mgrid[0:32, 0:48]
    front = np.stack([np.stack([(xx * 4 + i * 3) % 256, (yy * 6) % 256, np.full_like(xx, 40 * (i % 5))], -1)
                      for i in range(n)]).astype(np.uint8)
    arrays = {"front": front, "state": rng.normal(size=(n, 5)).astype(np.float32),
              "action": rng.uniform(-1, 1, (n, 4)).astype(np.float32),
              "reward": np.array([0, 0, 0, 1, 0, 0, 0, 0, 0, 1], np.float32),
              "done": np.array([0, 0, 0, 1, 0, 0, 0, 0, 0, 1], bool),
              "episode": np.repeat(np.arange(2), lengths), "fps": np.array(10)}
    np.savez(tmp_path / "arrays.npz", **arrays)
    reference(python, "write", str(tmp_path / "ds"), str(tmp_path / "arrays.npz"), vcodec)
    obs = gym.spaces.Dict({"front": gym.spaces.Box(0, 255, (32, 48, 3), np.uint8), "state": OBS["state"]})
    if vcodec == "libsvtav1" and not have_pyav():
        with pytest.raises(LeRobotFormatError) as err:
            import_lerobot(tmp_path / "ds", tmp_path / "back", obs_space=obs, action_space=ACTION, fps=10)
        video = tmp_path / "ds/videos/observation.images.front/chunk-000/file-000.mp4"
        assert str(err.value).startswith(f"{video}: OpenCV ") and "install the lerobot extra" in str(err.value)
        assert "\n" not in str(err.value) and not (tmp_path / "back").exists()
        return
    report = import_lerobot(tmp_path / "ds", tmp_path / "back", obs_space=obs, action_space=ACTION, fps=10,
                            task="PickCube")
    assert (report.episodes, report.steps) == (2, 10)
    back = [s for ep in load_demos(tmp_path / "back", obs, ACTION) for s in ep]
    assert np.array_equal(np.stack([s.obs["state"] for s in back]), arrays["state"])
    assert np.array_equal(np.stack([s.action for s in back]), arrays["action"])
    assert [s.reward for s in back] == arrays["reward"].tolist()
    assert [s.terminated for s in back] == arrays["done"].tolist()
    error = np.abs(np.stack([s.obs["front"] for s in back]).astype(int) - front).mean()
    assert error < 8, error  # yuv420p at LeRobot's crf 30: lossy, near


# --- a dataset robot_rl did not export: the task from --config, then robot-rl train on it ---


def test_a_foreign_dataset_imports_for_a_config_and_trains(tmp_path, capsys):
    pytest.importorskip("mujoco")
    assert main(["record-demos", "--config", "pick_cube", "--episodes", "2", "--out", str(tmp_path / "demos")]) == 0
    assert main(["demos", "export", "--format", "lerobot", str(tmp_path / "demos"), str(tmp_path / "ds")]) == 0
    _edit_info(tmp_path / "ds", lambda i: i.pop("robot_rl"))  # as LeRobot's own writer leaves it
    capsys.readouterr()
    line = one_error(capsys, "demos", "import", "--format", "lerobot", str(tmp_path / "ds"), str(tmp_path / "x"),
                     "--config", "pick_cube_pixels")
    assert "ds/meta/info.json: no feature 'observation.images.front' (the task's observation 'front')" in line
    line = one_error(capsys, "demos", "import", "--format", "lerobot", str(tmp_path / "ds"), str(tmp_path / "x"),
                     "--config", "pick_cube", "--set", "env.control_hz=20")
    assert "fps is 10, the task runs at 20 Hz" in line
    assert main(["demos", "import", "--format", "lerobot", str(tmp_path / "ds"), str(tmp_path / "back"),
                 "--config", "pick_cube"]) == 0
    assert capsys.readouterr().out.startswith("imported 2 episodes (")
    manifest = json.loads((tmp_path / "back/manifest.json").read_text())
    assert manifest["task"] == "PickCube" and manifest["source"] == "lerobot"
    assert manifest["spaces"] == json.loads((tmp_path / "demos/manifest.json").read_text())["spaces"]
    assert main(["train", "--config", "pick_cube", "--run-dir", str(tmp_path / "run"), "--set",
                 f"train.demos={tmp_path / 'back'}", "--set", "train.total_env_steps=20", "--set",
                 "train.eval_every=20", "--set", "agent.hidden_dims=[16,16]", "--set", "train.batch_size=16", "--set",
                 "train.learning_starts=10", "--set", "train.eval_episodes=1", "--set", "train.torch_threads=1",
                 "--set", "train.scripted_demos=0", "--no-progress"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["env_steps"] >= 20 and last["eval_success_rate"] is not None


def test_a_dataset_lerobots_writer_made_trains(tmp_path, capsys):
    """PickCube demos written by LeRobot's own writer (state only), imported for the task, used by train."""
    python = lerobot_python()
    pytest.importorskip("mujoco")
    assert main(["record-demos", "--config", "pick_cube", "--episodes", "2", "--out", str(tmp_path / "demos")]) == 0
    steps = [s for ep in load_demos(tmp_path / "demos", *_pick_cube_spaces()) for s in ep]
    np.savez(tmp_path / "arrays.npz", state=np.stack([s.obs["state"] for s in steps]),
             action=np.stack([s.action for s in steps]), reward=np.array([s.reward for s in steps], np.float32),
             done=np.array([s.terminated or s.truncated for s in steps]),
             episode=np.array([s.episode_id for s in steps]), fps=np.array(10))
    reference(python, "write", str(tmp_path / "ds"), str(tmp_path / "arrays.npz"), "h264")
    capsys.readouterr()
    assert main(["demos", "import", "--format", "lerobot", str(tmp_path / "ds"), str(tmp_path / "back"),
                 "--config", "pick_cube"]) == 0
    assert "absent, read as 0/false: complementary_info.discrete_penalty" in capsys.readouterr().out
    back = [s for ep in load_demos(tmp_path / "back", *_pick_cube_spaces()) for s in ep]
    assert np.array_equal(np.stack([s.obs["state"] for s in back]), np.stack([s.obs["state"] for s in steps]))
    assert np.array_equal(np.stack([s.action for s in back]), np.stack([s.action for s in steps]))
    assert main(["train", "--config", "pick_cube", "--run-dir", str(tmp_path / "run"), "--set",
                 f"train.demos={tmp_path / 'back'}", "--set", "train.total_env_steps=20", "--set",
                 "train.eval_every=20", "--set", "agent.hidden_dims=[16,16]", "--set", "train.batch_size=16", "--set",
                 "train.learning_starts=10", "--set", "train.eval_episodes=1", "--set", "train.torch_threads=1",
                 "--set", "train.scripted_demos=0", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["env_steps"] >= 20


def _pick_cube_spaces():
    from robot_rl.assemble import config_spaces_env
    from robot_rl.paths import resolve_config
    from robot_rl.tasks import load_config

    env = config_spaces_env(load_config(resolve_config("pick_cube"), []))
    return env.observation_space, env.action_space
