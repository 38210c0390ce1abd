"""``demos import --format lerobot`` streams: a v3 dataset that packs many episodes into one video
file and one parquet file imports one episode at a time, in memory that does not grow with the
episode count, equal to reading it whole; a failure after the check takes back what the import
wrote (a new folder, ``--append``, ``--force``); hostile episode metadata is one line, nothing written.

The datasets are robot_rl's own exports (one file per episode), repacked here the way LeRobot's
writer packs them: every episode in ``file-000`` of the data and of each camera's video, each
episode's frames found by its ``from_timestamp``.
"""

from __future__ import annotations

import dataclasses
import json
import tracemalloc
from pathlib import Path

import cv2
import gymnasium as gym
import numpy as np
import pytest
from demo_bags import assert_same_episodes

import robot_rl.data.video_frames as video_frames
from robot_rl.cli import main
from robot_rl.data.demos import DemoWriter, episode_files, load_demos
from robot_rl.data.lerobot_actions import ActionRange
from robot_rl.data.lerobot_export import export_lerobot
from robot_rl.data.lerobot_import import import_lerobot
from robot_rl.data.transition import Step
from robot_rl.data.video_frames import FrameSpans, LosslessMp4, VideoError, read_frame_range, read_frames, video_info

pytest.importorskip("pyarrow", reason="the lerobot extra (pyarrow) is not installed")
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

CAMERAS = ("front", "wrist")
OBS = gym.spaces.Dict({
    "front": gym.spaces.Box(0, 255, (12, 16, 3), np.uint8),
    "wrist": gym.spaces.Box(0, 255, (8, 8, 3), np.uint8),
    "state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32),
})
ACTION = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
UNITS = gym.spaces.Box(-2.0, 2.0, (4,), np.float32)  # a dataset recorded in units of its own
EPISODES = "meta/episodes/chunk-000/file-000.parquet"


def make_demos(directory: Path, lengths, seed: int = 0, obs_space: gym.spaces.Dict = OBS,
               action_space: gym.spaces.Box = ACTION, scale: float = 1.0) -> list[list[Step]]:
    """Episodes with every field varied (both endings, flags alternating step to step), random frames."""
    rng = np.random.default_rng(seed)

    def obs() -> dict[str, np.ndarray]:
        return {k: (rng.integers(0, 256, s.shape, dtype=np.uint8) if s.dtype == np.uint8 else
                    rng.normal(size=s.shape).astype(np.float32)) for k, s in obs_space.spaces.items()}

    writer = DemoWriter(directory, obs_space, action_space, task="PickCube", source="test",
                        env_config={"control_hz": 10})
    episodes = []
    for e, n in enumerate(lengths):
        frames = [obs() for _ in range(n + 1)]
        steps = [Step(episode_id=e, step=t, obs=frames[t], action=(rng.uniform(-1, 1, 4) * scale).astype(np.float32),
                      reward=float(rng.normal()), terminated=(t == n - 1 and e % 3 != 1),
                      truncated=(t == n - 1 and e % 3 == 1), next_obs=frames[t + 1], intervened=bool(t % 2),
                      success=bool(t == n - 1 and e % 3 != 1), grasp_penalty=float(np.float32(-0.02 * t)))
                 for t in range(n)]
        writer.write_episode(steps)
        episodes.append(steps)
    return episodes


def pack(root: Path, video_order: list[int] | None = None) -> Path:
    """Repack an export of one file per episode into one data file and one video per camera (in
    ``video_order`` of episodes: LeRobot's writer packs them in index order), as LeRobot's writer does."""
    table = pq.read_table(root / EPISODES)
    rows = sorted(table.to_pylist(), key=lambda r: r["episode_index"])
    order = video_order if video_order is not None else [r["episode_index"] for r in rows]
    fps = json.loads((root / "meta/info.json").read_text())["fps"]
    data = [root / f"data/chunk-000/file-{r['data/file_index']:03d}.parquet" for r in rows]
    joined = pa.concat_tables([pq.read_table(p) for p in data])
    for p in data:
        p.unlink()
    pq.write_table(joined, root / "data/chunk-000/file-000.parquet")
    for camera in CAMERAS:
        name = f"observation.images.{camera}"
        folder = root / f"videos/{name}/chunk-000"
        files = {r["episode_index"]: folder / f"file-{r[f'videos/{name}/file_index']:03d}.mp4" for r in rows}
        frames = {e: read_frames(p) for e, p in files.items()}
        for p in files.values():
            p.unlink()
        video = LosslessMp4(folder / "file-000.mp4", fps)
        offset = 0
        for e in order:
            for frame in frames[e]:
                video.write(frame)
            row = next(r for r in rows if r["episode_index"] == e)
            row[f"videos/{name}/file_index"] = 0
            row[f"videos/{name}/from_timestamp"] = offset / fps
            row[f"videos/{name}/to_timestamp"] = (offset + row["length"]) / fps
            offset += row["length"]
        video.finish()
    for row in rows:
        row["data/file_index"] = 0
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), root / EPISODES)
    return root


def packed_dataset(tmp_path: Path, lengths, seed: int = 0, **kwargs) -> tuple[Path, list[list[Step]]]:
    original = make_demos(tmp_path / f"demos{seed}", lengths, seed, **kwargs)
    export_lerobot(tmp_path / f"demos{seed}", tmp_path / f"ds{seed}")
    return pack(tmp_path / f"ds{seed}"), original


def edit_episodes(root: Path, change) -> None:
    table = pq.read_table(root / EPISODES)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), root / EPISODES)


def whole_read(root: Path) -> list[dict[str, np.ndarray]]:
    """What reading the packed dataset whole gives, the way the import did before it streamed: every
    frame of each video decoded at once, each episode's span cut out by its from_timestamp."""
    rows = sorted(pq.read_table(root / EPISODES).to_pylist(), key=lambda r: r["episode_index"])
    frames = {c: read_frames(root / f"videos/observation.images.{c}/chunk-000/file-000.mp4") for c in CAMERAS}
    out = []
    for row in rows:
        spans = {}
        for c in CAMERAS:
            first = round(row[f"videos/observation.images.{c}/from_timestamp"] * 10)
            spans[c] = np.stack(frames[c][first:first + row["length"]])
        out.append(spans)
    return out


def test_many_episodes_in_one_file_import_as_read_whole(tmp_path):
    lengths = (5, 1, 3, 4, 2, 6, 3)
    packed, original = packed_dataset(tmp_path, lengths)
    assert sorted(p.name for p in (packed / "videos/observation.images.front/chunk-000").iterdir()) == ["file-000.mp4"]
    assert sorted(p.name for p in (packed / "data/chunk-000").iterdir()) == ["file-000.parquet"]
    report = import_lerobot(packed, tmp_path / "back")
    assert (report.episodes, report.steps) == (7, sum(lengths))
    back = load_demos(tmp_path / "back", OBS, ACTION)
    for ep_a, ep_b, whole in zip(original, back, whole_read(packed)):
        assert len(ep_a) == len(ep_b)
        for c in CAMERAS:
            assert np.array_equal(np.stack([s.obs[c] for s in ep_b]), whole[c])
            assert np.array_equal(ep_b[-1].next_obs[c], ep_b[-1].obs[c])  # the documented rebuild
        for a, b in zip(ep_a, ep_b):
            for key in OBS.spaces:
                assert np.array_equal(a.obs[key], b.obs[key]), key
            assert np.array_equal(a.action, b.action)
            assert np.float32(a.reward) == np.float32(b.reward)
            assert (a.terminated, a.truncated, a.intervened, a.success, np.float32(a.grasp_penalty)) == \
                   (b.terminated, b.truncated, b.intervened, b.success, np.float32(b.grasp_penalty))
    # the same bytes as the import of the same episodes exported one file per episode
    make_demos(tmp_path / "again", lengths, 0)
    export_lerobot(tmp_path / "again", tmp_path / "per_file")
    import_lerobot(tmp_path / "per_file", tmp_path / "back_per_file")
    assert_same_episodes(tmp_path / "back", tmp_path / "back_per_file")


def test_opencv_streams_the_same_as_pyav(tmp_path, monkeypatch):
    """Without PyAV (OpenCV decodes): the same counts, the same spans, the same demos."""
    if not video_frames.have_pyav():
        pytest.skip("PyAV is not installed")
    packed, _ = packed_dataset(tmp_path, (4, 1, 3, 5))
    import_lerobot(packed, tmp_path / "pyav")
    monkeypatch.setattr(video_frames, "have_pyav", lambda: False)
    import_lerobot(packed, tmp_path / "opencv")
    assert_same_episodes(tmp_path / "pyav", tmp_path / "opencv")


def test_resize_and_action_range_stream_the_same(tmp_path):
    lengths = (4, 2, 5, 3)
    packed, original = packed_dataset(tmp_path, lengths, seed=1, action_space=UNITS, scale=2.0)
    small = gym.spaces.Dict({**OBS.spaces, "front": gym.spaces.Box(0, 255, (6, 8, 3), np.uint8)})
    kwargs = dict(obs_space=small, action_space=ACTION, fps=10, resize=True, action_range=ActionRange((-2.0,), (2.0,)))
    report = import_lerobot(packed, tmp_path / "back", **kwargs)
    assert report.resized == ["observation.images.front"]
    assert report.rescaled == "actions rescaled from [-2, 2] (--action-range)"
    back = load_demos(tmp_path / "back", small, ACTION)
    for ep_a, ep_b in zip(original, back):
        for a, b in zip(ep_a, ep_b):
            assert np.array_equal(b.obs["front"], cv2.resize(a.obs["front"], (8, 6), interpolation=cv2.INTER_AREA))
            assert np.array_equal(b.obs["wrist"], a.obs["wrist"])
            assert np.array_equal(b.action, (a.action / 2).astype(np.float32))
    manifest = json.loads((tmp_path / "back/manifest.json").read_text())
    assert manifest["action_rescale"][0]["episodes"] == [0, 3]
    make_demos(tmp_path / "again", lengths, 1, action_space=UNITS, scale=2.0)
    export_lerobot(tmp_path / "again", tmp_path / "per_file")
    import_lerobot(tmp_path / "per_file", tmp_path / "back_per_file", **kwargs)
    assert_same_episodes(tmp_path / "back", tmp_path / "back_per_file")


# --- memory: one episode's frames, not the dataset's ---

BIG = gym.spaces.Dict({"front": gym.spaces.Box(0, 255, (96, 128, 3), np.uint8),
                       "wrist": gym.spaces.Box(0, 255, (48, 64, 3), np.uint8),
                       "state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32)})


def _peak_import(tmp_path: Path, episodes: int) -> tuple[int, int]:
    """tracemalloc's peak (bytes) over an import of ``episodes`` episodes of 8 steps, and the bytes of
    all their camera frames."""
    packed, _ = packed_dataset(tmp_path, (8,) * episodes, seed=episodes, obs_space=BIG)
    frames = episodes * 8 * sum(int(np.prod(BIG[c].shape)) for c in CAMERAS)
    tracemalloc.start()
    try:
        import_lerobot(packed, tmp_path / f"back{episodes}")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(episode_files(tmp_path / f"back{episodes}")) == episodes
    return peak, frames


def test_peak_memory_does_not_grow_with_the_episode_count(tmp_path):
    small_peak, small_frames = _peak_import(tmp_path, 4)
    large_peak, large_frames = _peak_import(tmp_path, 16)
    print(f"peak traced memory: 4 episodes {small_peak / 1e6:.2f} MB ({small_frames / 1e6:.2f} MB of frames), "
          f"16 episodes {large_peak / 1e6:.2f} MB ({large_frames / 1e6:.2f} MB of frames)")
    # reading whole would hold every frame: 4x the frames would be 4x the peak
    assert large_peak < 1.3 * small_peak, (small_peak, large_peak)
    assert large_peak < large_frames / 2, (large_peak, large_frames)


def test_consecutive_episodes_are_decoded_once_reading_forward(tmp_path, monkeypatch):
    """The video files stay open across episodes: each frame is decoded once, the files opened once."""
    packed, _ = packed_dataset(tmp_path, (3, 4, 2, 5))
    opened, spans = [], []
    real_open, real_read = FrameSpans._open, FrameSpans.read

    def counting_open(self):
        opened.append(self.path.parent.parent.name)
        real_open(self)

    def counting_read(self, first, count):
        spans.append((self.path.parent.parent.name, first, count))
        return real_read(self, first, count)

    monkeypatch.setattr(FrameSpans, "_open", counting_open)
    monkeypatch.setattr(FrameSpans, "read", counting_read)
    import_lerobot(packed, tmp_path / "back")
    assert sorted(opened) == ["observation.images.front", "observation.images.wrist"]
    assert [s[1:] for s in spans if s[0].endswith("front")] == [(0, 3), (3, 4), (7, 2), (9, 5)]


# --- a failure after the check: what this import wrote is taken back ---


def _fail_on_episode(monkeypatch, k: int) -> None:
    """The video decoder fails on the k-th episode (damage the check could not see)."""
    real_read = FrameSpans.read
    calls: list[int] = []

    def read(self, first, count):
        calls.append(first)
        if len(calls) > k * len(CAMERAS):
            raise VideoError(f"{self.path}: cannot decode the video (Invalid data found when processing input)")
        return real_read(self, first, count)

    monkeypatch.setattr(FrameSpans, "read", read)


def _one_error(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("robot-rl: "), lines
    return lines[0]


def _tree(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.fixture
def packed(tmp_path):
    root, _ = packed_dataset(tmp_path, (3, 2, 4, 3))
    make_demos(tmp_path / "kept", (2, 3), seed=5)
    (tmp_path / "kept/notes.txt").write_text("mine")
    return root


def _import(root: Path, dest: Path, *extra: str) -> list[str]:
    return ["demos", "import", "--format", "lerobot", str(root), str(dest), *extra]


@pytest.mark.parametrize("k", [0, 2])
def test_a_failure_after_the_check_leaves_no_new_folder(packed, tmp_path, capsys, monkeypatch, k):
    _fail_on_episode(monkeypatch, k)
    line = _one_error(capsys, *_import(packed, tmp_path / "new"))
    video = packed / "videos/observation.images.front/chunk-000/file-000.mp4"
    assert line == (f"robot-rl: {video}: cannot decode the video (Invalid data found when processing input); "
                    f"nothing imported, {tmp_path / 'new'} is as it was")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demos0", "ds0", "kept"]


def test_a_failure_in_a_folder_without_demos_leaves_only_what_it_held(packed, tmp_path, capsys, monkeypatch):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("mine")
    _fail_on_episode(monkeypatch, 1)
    assert _one_error(capsys, *_import(packed, tmp_path / "mine")).endswith("is as it was")
    assert _tree(tmp_path / "mine") == {"notes.txt": b"mine"}
    monkeypatch.undo()
    assert main(_import(packed, tmp_path / "mine")) == 0
    assert len(episode_files(tmp_path / "mine")) == 4 and (tmp_path / "mine/notes.txt").read_text() == "mine"


@pytest.mark.parametrize("extra", [["--append"], ["--append", "--action-range", "-1", "1"], ["--force"]])
def test_a_failure_after_the_check_keeps_the_demos_that_were_there(packed, tmp_path, capsys, monkeypatch, extra):
    before = _tree(tmp_path / "kept")
    _fail_on_episode(monkeypatch, 3)
    line = _one_error(capsys, *_import(packed, tmp_path / "kept", *extra))
    assert line.endswith(f"nothing imported, {tmp_path / 'kept'} is as it was")
    assert _tree(tmp_path / "kept") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demos0", "ds0", "kept"]  # no .tmp, no .old


def test_a_disk_error_while_appending_takes_back_the_added_episodes(packed, tmp_path, monkeypatch):
    before = _tree(tmp_path / "kept")
    real = DemoWriter.write_episode
    written: list[Path] = []

    def write_episode(self, steps):
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(real(self, steps))
        return written[-1]

    monkeypatch.setattr(DemoWriter, "write_episode", write_episode)
    with pytest.raises(OSError, match="No space left"):
        import_lerobot(packed, tmp_path / "kept", append=True)
    assert [p.name for p in written] == ["episode_000002.npz", "episode_000003.npz"]
    assert _tree(tmp_path / "kept") == before


def test_force_replaces_the_demos_whole_and_keeps_other_files(packed, tmp_path, capsys):
    assert main(_import(packed, tmp_path / "kept")) == 2  # it holds demos: --force or --append
    assert "already holds demos (2 episodes); pass --force" in capsys.readouterr().err
    assert main(_import(packed, tmp_path / "kept", "--force")) == 0
    assert [p.name for p in episode_files(tmp_path / "kept")] == [f"episode_{i:06d}.npz" for i in range(4)]
    assert (tmp_path / "kept/notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demos0", "ds0", "kept"]
    import_lerobot(packed, tmp_path / "fresh")
    assert_same_episodes(tmp_path / "kept", tmp_path / "fresh")
    assert main(_import(packed, tmp_path / "kept", "--append")) == 0
    assert len(episode_files(tmp_path / "kept")) == 8


# --- hostile episode metadata: one line naming the file, nothing written ---

FROM = "videos/observation.images.front/from_timestamp"


@pytest.mark.parametrize("value,message", [
    (float("nan"), f"episode 1: '{FROM}' is nan"),
    (float("inf"), f"episode 1: '{FROM}' is inf"),
    (-0.1, f"episode 1: '{FROM}' is -0.1"),
    (1.1, "file-000.mp4: holds 12 frames, episode 1 of 'observation.images.front' needs frames 11..12 "
          "(a video cut short?)"),
    (1e300, "file-000.mp4: holds 12 frames, episode 1 of 'observation.images.front' needs frames 1"),
])
def test_a_from_timestamp_that_is_not_a_frame_of_the_video(packed, tmp_path, capsys, value, message):
    edit_episodes(packed, lambda rows: rows[1].update({FROM: value}))
    before = _tree(tmp_path / "kept")
    line = _one_error(capsys, *_import(packed, tmp_path / "kept", "--append"))
    assert message in line and _tree(tmp_path / "kept") == before
    assert line.startswith(f"robot-rl: {packed}")
    line = _one_error(capsys, *_import(packed, tmp_path / "new"))
    assert message in line and not (tmp_path / "new").exists() and not (tmp_path / "new.tmp").exists()


def test_two_episodes_sharing_frames_are_refused(packed, tmp_path, capsys):
    # episode 2 (4 frames from frame 5) moved back to frame 4: its first frame is episode 1's last
    edit_episodes(packed, lambda rows: rows[2].update({FROM: 0.4}))
    before = _tree(tmp_path / "kept")
    line = _one_error(capsys, *_import(packed, tmp_path / "kept", "--append"))
    video = packed / "videos/observation.images.front/chunk-000/file-000.mp4"
    assert line == f"robot-rl: {video}: episodes 1 and 2 of 'observation.images.front' share frames 4..4"
    assert _tree(tmp_path / "kept") == before
    # the same frames for two episodes (alternating back and forth along the file)
    edit_episodes(packed, lambda rows: [r.update({FROM: 0.0}) for r in rows])
    line = _one_error(capsys, *_import(packed, tmp_path / "new"))
    assert line == f"robot-rl: {video}: episodes 0 and 1 of 'observation.images.front' share frames 0..1"
    assert not (tmp_path / "new").exists()


def test_episodes_out_of_order_import_by_their_index(tmp_path):
    """Metadata rows listed out of order, and a video holding the episodes in another order than their
    index (read backwards along the file): each episode still gets its own frames."""
    lengths = (3, 2, 4, 3)
    make_demos(tmp_path / "demos", lengths)
    export_lerobot(tmp_path / "demos", tmp_path / "ds")
    import_lerobot(tmp_path / "ds", tmp_path / "expected")
    pack(tmp_path / "ds", video_order=[2, 0, 3, 1])
    edit_episodes(tmp_path / "ds", lambda rows: rows.reverse())
    assert [r["episode_index"] for r in pq.read_table(tmp_path / "ds" / EPISODES).to_pylist()] == [3, 2, 1, 0]
    import_lerobot(tmp_path / "ds", tmp_path / "back")
    assert_same_episodes(tmp_path / "back", tmp_path / "expected")


# --- the range reader, with PyAV and with OpenCV ---


@pytest.mark.parametrize("pyav", [True, False])
def test_frame_spans_give_exactly_the_frames_asked_for(tmp_path, monkeypatch, pyav):
    if pyav and not video_frames.have_pyav():
        pytest.skip("PyAV is not installed")
    monkeypatch.setattr(video_frames, "have_pyav", lambda: pyav)
    rng = np.random.default_rng(7)
    frames = [rng.integers(0, 256, (12, 16, 3), dtype=np.uint8) for _ in range(17)]
    video = LosslessMp4(tmp_path / "v.mp4", 10)
    for frame in frames:
        video.write(frame)
    video.finish()
    assert video_info(tmp_path / "v.mp4") == video_frames.VideoInfo(17, 12, 16)
    assert all(np.array_equal(a, b) for a, b in zip(read_frame_range(tmp_path / "v.mp4", 4, 3), frames[4:7]))
    with FrameSpans(tmp_path / "v.mp4") as spans:
        # forward, a gap, backwards (reopens), one frame, none, the last frames
        for first, count in [(0, 2), (2, 5), (10, 1), (1, 3), (16, 1), (16, 0), (14, 3)]:
            got = spans.read(first, count)
            assert len(got) == count and all(np.array_equal(a, b) for a, b in zip(got, frames[first:first + count]))
            assert all(g.dtype == np.uint8 and g.shape == (12, 16, 3) for g in got)
        with pytest.raises(VideoError) as err:
            spans.read(15, 4)
        assert str(err.value) == f"{tmp_path / 'v.mp4'}: holds 17 frames, frames 15..18 were asked for (a video " \
                                 "cut short?)"
        with pytest.raises(VideoError, match="frames -1..1 asked for"):
            spans.read(-1, 3)
        assert len(spans.read(0, 17)) == 17  # usable again after an error
    (tmp_path / "bad.mp4").write_bytes(b"\x00" * 1000)
    for call in (lambda: video_info(tmp_path / "bad.mp4"), lambda: read_frame_range(tmp_path / "bad.mp4", 0, 1),
                 lambda: read_frame_range(tmp_path / "none.mp4", 0, 1)):
        with pytest.raises(VideoError) as err:
            call()
        assert str(err.value).startswith(str(tmp_path)) and "\n" not in str(err.value)


def test_a_video_shorter_than_its_metadata_says_fails_in_one_line_and_writes_nothing(packed, tmp_path, capsys,
                                                                                        monkeypatch):
    """A container whose frame count is more than it decodes: found while writing, taken back."""
    real = video_frames.video_info
    monkeypatch.setattr("robot_rl.data.lerobot_import.video_info",
                        lambda path: dataclasses.replace(real(path), frames=real(path).frames + 5))
    edit_episodes(packed, lambda rows: rows[3].update({FROM: 1.2}))  # frames 12..14 of a 12-frame file
    before = _tree(tmp_path / "kept")
    line = _one_error(capsys, *_import(packed, tmp_path / "kept", "--append"))
    video = packed / "videos/observation.images.front/chunk-000/file-000.mp4"
    assert line == (f"robot-rl: {video}: holds 12 frames, frames 12..14 were asked for (a video cut short?); "
                    f"nothing imported, {tmp_path / 'kept'} is as it was")
    assert _tree(tmp_path / "kept") == before
