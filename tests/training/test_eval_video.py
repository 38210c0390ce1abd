"""EpisodeVideo: which episodes it films, how many frames, the outcome mark, and that it
changes nothing about the evaluation it films."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from video_files import read_video

from robot_rl.errors import RobotRLError
from robot_rl.training.evaluation import EpisodeVideo, evaluate, hold_frames
from robot_rl.training.frames import FAILURE_RGB, SUCCESS_RGB


class Corridor(gym.Env):
    """Walk right to the end within ``max_steps``; an episode's start depends on its seed.

    Renders a grey frame whose brightness is the position; counts its renders.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 8}

    def __init__(self, render_mode: str | None = "rgb_array", size: tuple[int, int] = (40, 64)) -> None:
        self.render_mode = render_mode
        self.size = size
        self.observation_space = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)})
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.renders = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = int(self.np_random.integers(0, 4)), 0
        return {"state": np.array([self.pos], np.float32)}, {"success": False}

    def step(self, action):
        self.pos += 1 if float(action[0]) > 0 else 0
        self.t += 1
        success = self.pos >= 6
        return {"state": np.array([self.pos], np.float32)}, float(success), success, self.t >= 5, {"success": success}

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        self.renders += 1
        return np.full((*self.size, 3), 20 * self.pos, np.uint8)


class Policy:
    def __init__(self, direction: float) -> None:
        self.direction = direction

    def act(self, obs, deterministic=True, generator=None):
        return np.array([self.direction], np.float32)


def test_it_films_only_the_first_episodes_with_the_frame_count_the_lengths_give(tmp_path):
    env = Corridor()
    video = EpisodeVideo(env, tmp_path / "v.mp4", episodes=2, keep_frames=True)
    result = evaluate(video, Policy(1.0), episodes=4, seed=3)
    path = video.finish()
    assert path == tmp_path / "v.mp4" and not list(tmp_path.glob("*partial*"))
    hold = hold_frames(8.0)
    expected = sum(1 + n + hold for n in result.lengths[:2])
    frames = read_video(path)[0]
    assert len(frames) == video.frames == len(video.kept) == expected
    assert env.renders == sum(1 + n for n in result.lengths[:2])  # episodes 3 and 4 are never rendered
    # a 40-row render is scaled up by whole pixels (x7, to MIN_VIDEO_HEIGHT 256) so that it is
    # watchable and the label fits above the scene
    assert video.episodes == 2 and video.size == (448, 280) and frames[0].shape == (280, 448, 3)


@pytest.mark.parametrize("size, scale", [((32, 32), 8), ((100, 60), 3), ((128, 256), 2), ((256, 512), 1),
                                         ((300, 20), 1)])
def test_small_renders_are_scaled_up_by_whole_pixels(tmp_path, size, scale):
    video = EpisodeVideo(Corridor(size=size), tmp_path / "v.mp4", episodes=1, keep_frames=True)
    evaluate(video, Policy(1.0), episodes=1, seed=0)
    video.finish()
    first = video.kept[0]
    assert first.shape == (size[0] * scale, size[1] * scale, 3)
    # whole-pixel blocks: the bottom row (below the label) repeats each source pixel `scale` times
    assert np.array_equal(first[-1], np.repeat(first[-1][::scale], scale, axis=0))


def test_the_last_frame_of_each_episode_is_marked_with_its_outcome_and_held(tmp_path):
    for direction, success, color in ((1.0, True, SUCCESS_RGB), (-1.0, False, FAILURE_RGB)):
        video = EpisodeVideo(Corridor(), tmp_path / f"{success}.mp4", episodes=1, keep_frames=True)
        result = evaluate(video, Policy(direction), episodes=1, seed=0)
        video.finish()
        assert result.successes == [success]
        n = result.lengths[0]
        marked = video.kept[1 + n - 1:]
        assert len(marked) == 1 + hold_frames(8.0) and all(np.array_equal(m, marked[0]) for m in marked)
        assert (marked[0][-1] == color).all() and (marked[0][:, 0] == color).all()
        assert not (video.kept[0][-1] == color).all()  # the frames before the end are not marked
        decoded = read_video(tmp_path / f"{success}.mp4")[0][-1]  # and the mark survives compression
        assert np.abs(decoded[-2].astype(int).mean(axis=0) - color).max() < 40


def test_filming_changes_nothing_the_evaluation_computes(tmp_path):
    plain = evaluate(Corridor(render_mode=None), Policy(1.0), episodes=5, seed=11)
    video = EpisodeVideo(Corridor(), tmp_path / "v.mp4", episodes=2)
    filmed = evaluate(video, Policy(1.0), episodes=5, seed=11)
    video.finish()
    assert filmed == plain and len(filmed.lengths) == 5


def test_an_env_that_does_not_render_or_changes_size_is_a_one_line_error(tmp_path):
    video = EpisodeVideo(Corridor(render_mode=None), tmp_path / "v.mp4")
    with pytest.raises(RobotRLError, match="renders no frames"):
        video.reset(seed=0)

    class Growing(Corridor):
        def render(self):
            frame = super().render()
            return np.pad(frame, ((0, self.t), (0, 0), (0, 0)))

    video = EpisodeVideo(Growing(), tmp_path / "g.mp4")
    video.reset(seed=0)
    with pytest.raises(RobotRLError, match="a 448x287 frame in a 448x280 video"):
        video.step(np.array([1.0], np.float32))
    video.finish()


@pytest.mark.parametrize("fps", [0.0, -1.0, float("nan"), float("inf")])
def test_a_bad_frame_rate_is_refused(tmp_path, fps):
    with pytest.raises(RobotRLError, match="frame rate"):
        EpisodeVideo(Corridor(), tmp_path / "v.mp4", fps=fps)
