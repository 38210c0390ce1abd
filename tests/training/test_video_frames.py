"""Issue 26, items 12 and 14: videos name their cameras at a watchable size, strips wrap into a
grid, and the sim node's film of a graph evaluation has the plain eval video's form."""

from __future__ import annotations

import numpy as np
import pytest
from video_files import read_video

from robot_rl.errors import RobotRLError
from robot_rl.nodes.sim_film import EpisodeFilm
from robot_rl.training.evaluation import EpisodeVideo, hold_frames
from robot_rl.training.frames import FAILURE_RGB, MIN_VIDEO_HEIGHT, SUCCESS_RGB, camera_tiles, grid


def tile(value: int, shape: tuple[int, int] = (128, 128)) -> np.ndarray:
    return np.full((*shape, 3), value, np.uint8)


def test_a_strip_of_twelve_wraps_into_three_rows_of_four_in_reading_order():
    frames = [tile(10 * i, (128, 256)) for i in range(12)]
    image = grid(frames, 4)
    assert image.shape == (3 * 128, 4 * 256, 3)  # not one 3072x128 row
    for i in range(12):
        row, col = divmod(i, 4)
        assert (image[row * 128:(row + 1) * 128, col * 256:(col + 1) * 256] == 10 * i).all()


def test_a_short_last_row_and_smaller_frames_are_padded_black():
    image = grid([tile(200), tile(100, (64, 100)), tile(50), tile(25), tile(5)], 4)
    assert image.shape == (256, 512, 3)
    assert (image[128:, 128:] == 0).all() and (image[128:, :128] == 5).all()  # the last row: one frame, 3 empty
    assert (image[:64, 128:228] == 100).all() and (image[64:128, 128:256] == 0).all()
    assert grid([tile(1)], 4).shape == (128, 128, 3)  # fewer frames than columns: no empty cells


@pytest.mark.parametrize("frames, columns, message", [
    ([], 4, "at least one frame"),
    ([tile(1)], 0, "at least one column"),
    ([np.full((8, 8, 3), np.nan)], 2, "non-finite"),
    ([np.zeros((8, 8))], 2, "shape"),
])
def test_bad_strips_are_one_line_errors(frames, columns, message):
    with pytest.raises(RobotRLError, match=message):
        grid(frames, columns)


def text_pixels(region: np.ndarray) -> int:
    return int((region.min(axis=2) > 200).sum())


def test_every_camera_is_named_on_its_own_tile_below_the_scene():
    views = {"front": tile(90), "wrist": tile(90)}
    image = camera_tiles(views)
    assert image.shape == (128, 256, 3)
    for left in (0, 128):
        assert text_pixels(image[100:, left:left + 128]) > 10  # the name, white on a darkened band
        assert (image[:90, left:left + 128] == 90).all()  # the scene above it untouched
    assert not np.array_equal(image[100:, :128], image[100:, 128:])  # two names, not one twice
    with pytest.raises(RobotRLError, match="at least one camera"):
        camera_tiles({})


def test_the_eval_video_of_pick_cube_names_both_cameras_at_a_watchable_size(tmp_path):
    pytest.importorskip("mujoco")
    from robot_rl.assemble import make_env
    from robot_rl.paths import resolve_config
    from robot_rl.tasks import load_config

    env = make_env(load_config(resolve_config("pick_cube")), render_mode="rgb_array")
    video = EpisodeVideo(env, tmp_path / "v.mp4", keep_frames=True)
    try:
        video.reset(seed=0)
        video.step(np.zeros(env.action_space.shape, np.float32))
    finally:
        video.close()
    first = video.kept[0]
    # two 128 px cameras scaled x2 by whole pixels: 512x256 (was 256x128), each tile named at its bottom
    assert first.shape == (MIN_VIDEO_HEIGHT, 2 * MIN_VIDEO_HEIGHT, 3) == (256, 512, 3)
    for left in (0, 256):
        assert text_pixels(first[-24:, left:left + 256]) > 20
    assert read_video(tmp_path / "v.mp4")[0][0].shape == (256, 512, 3)


class Scene:
    """Two cameras whose brightness is the number of renders so far."""

    def __init__(self) -> None:
        self.renders = 0

    def __call__(self) -> dict[str, np.ndarray]:
        self.renders += 1
        return {"front": tile(self.renders % 200, (64, 64)), "wrist": tile(50, (64, 64))}


def test_the_sim_film_has_the_eval_videos_form_on_simulated_time(tmp_path):
    scene = Scene()
    film = EpisodeFilm(tmp_path / "eval.mp4", 10.0, scene)
    film.tick(0.5, True)  # before any actor's reset (the startup reset): nothing filmed
    assert scene.renders == 0
    for start, success in [(1.0, True), (3.0, False)]:
        film.reset(start)
        for k in range(1, 131):  # 1.04 s of 125 Hz state ticks; the verdict flickers, then settles on `success`
            film.tick(start + k * 0.008, success if k > 120 else bool(k % 2))
        film.tick(float("nan"), True)  # a broken clock writes no frame and changes no verdict
    path = film.close()
    assert path == tmp_path / "eval.mp4" and not list(tmp_path.glob("*.partial.mp4")) and film.episodes == 2
    hold = hold_frames(10.0)
    per_episode = 1 + 10 + 1 + hold  # its reset, one frame per 0.1 s of sim time, its marked last frame held
    frames = read_video(path)[0]
    assert len(frames) == film.writer.frames == 2 * per_episode
    assert frames[0].shape == (256, 512, 3)  # 64 px cameras scaled to a watchable size
    for end, color in ((per_episode - 1, SUCCESS_RGB), (2 * per_episode - 1, FAILURE_RGB)):
        assert np.abs(frames[end][-2, 20:-20].astype(int).mean(axis=0) - color).max() < 40
    with pytest.raises(ValueError, match="positive frame rate"):
        EpisodeFilm(tmp_path / "x.mp4", float("nan"), scene)
    assert EpisodeFilm(tmp_path / "none.mp4", 10.0, scene).close() is None  # nothing filmed, no file
    assert not (tmp_path / "none.mp4").exists()


@pytest.mark.parametrize("value", ["out.avi", "''", "eval", "eval.mp4.tmp"])
def test_a_film_that_is_no_mp4_is_refused_in_one_line(value):
    from robot_rl.errors import ConfigError
    from robot_rl.paths import resolve_config
    from robot_rl.tasks import load_config

    with pytest.raises(ConfigError, match=r"ros.video .* must name an .mp4 file") as refused:
        load_config(resolve_config("pick_cube"), [f"ros.video={value}"])
    assert "\n" not in str(refused.value)
    assert load_config(resolve_config("pick_cube"), ["ros.video=runs/x/eval.MP4"]).ros.video == "runs/x/eval.MP4"
