"""Config files with a ``base``: merged key by key, refused in one line when malformed."""

from __future__ import annotations

import pytest

from robot_rl.config import ConfigError, to_dict
from robot_rl.config.bases import merge, read_config_file
from robot_rl.tasks import load_config


def test_the_pixel_variant_is_its_base_plus_what_it_states():
    base, pixels = load_config("configs/pick_cube.yaml"), load_config("configs/pick_cube_pixels.yaml")
    assert pixels.env.obs_mode == "pixels" and base.env.obs_mode == "state"
    assert pixels.cameras["front"].obs_shape() == (32, 32, 3)
    assert pixels.agent.encoder.channels == (16, 16, 16)
    # what the variant does not state comes from the base, nested keys included
    assert to_dict(pixels.task) == to_dict(base.task)
    assert pixels.robot.workspace == base.robot.workspace
    assert pixels.env.active_dims == base.env.active_dims and pixels.train.demo_fraction == base.train.demo_fraction


def test_overrides_apply_on_top_of_the_merged_file():
    cfg = load_config("configs/pick_cube_pixels.yaml", ["cameras.front.width=40", "train.utd_ratio=3"])
    assert cfg.cameras["front"].width == 40 and cfg.cameras["front"].height == 32 and cfg.train.utd_ratio == 3


def test_merge_replaces_lists_and_merges_mappings():
    out = merge({"a": {"x": 1, "y": [1, 2]}, "b": 1}, {"a": {"y": [3]}, "c": 2})
    assert out == {"a": {"x": 1, "y": [3]}, "b": 1, "c": 2}


def test_a_chain_of_bases_resolves_relative_to_each_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "root.yaml").write_text("seed: 1\ntrain: {utd_ratio: 2, batch_size: 64}\n")
    (tmp_path / "sub" / "mid.yaml").write_text("base: ../root\ntrain: {batch_size: 32}\n")
    (tmp_path / "leaf.yaml").write_text("base: sub/mid.yaml\nseed: 3\n")
    assert read_config_file(tmp_path / "leaf.yaml") == {"seed": 3, "train": {"utd_ratio": 2, "batch_size": 32}}


@pytest.mark.parametrize("files, message", [
    ({"a.yaml": "base: a.yaml\n"}, "'base' makes a cycle: a.yaml -> a.yaml"),
    ({"a.yaml": "base: b\n", "b.yaml": "base: a\n"}, "'base' makes a cycle: a.yaml -> b.yaml -> a.yaml"),
    ({"a.yaml": "base: missing.yaml\n"}, "'base' names"),
    ({"a.yaml": "base: [1, 2]\n"}, "'base' must name another config file"),
    ({"a.yaml": "base: ''\n"}, "'base' must name another config file"),
    ({"a.yaml": "base: b\n", "b.yaml": "base: c\n", "c.yaml": "base: d\n", "d.yaml": "base: e\n",
      "e.yaml": "base: f\n", "f.yaml": "seed: 1\n"}, "chains more than 4 files deep"),
    ({"a.yaml": "base: b\n", "b.yaml": "- not a mapping\n"}, "the top level must be a mapping"),
])
def test_malformed_bases_are_one_line(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as err:
        read_config_file(tmp_path / "a.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)
