"""Config files with a ``base``: merged key by key, refused in one line when malformed."""

from __future__ import annotations

from pathlib import Path

import pytest

import robot_rl
from robot_rl.config import ConfigError, to_dict
from robot_rl.config.bases import merge, read_config_file
from robot_rl.tasks import load_config

#: The project folder (its ``configs/`` is one of the folders a base may be in).
PROJECT = Path(robot_rl.__file__).resolve().parents[1]


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


# --- where a base may be ------------------------------------------------------------------------

#: Every bad name: (the ``base:`` line, what the one-line error says).
BAD_BASES = [
    ('base: "pick\\0cube"\n', "'base' holds a control character"),
    ('base: "a\\nb"\n', "'base' holds a control character"),
    (f"base: {'x' * 5000}\n", "'base' is 5000 characters long (at most 1024)"),
    (f"base: {'x' * 300}\n", "which cannot be opened (File name too long)"),
    (f"base: {'d/' * 400}x\n", "which is not a file"),
    ("base: ../outside.yaml\n", "which is outside the folders a base may be in"),
    ("base: ../outside\n", "which is outside the folders a base may be in"),
    ("base: sub/../../outside.yaml\n", "which is outside the folders a base may be in"),
    ("base: {outside}\n", "which is outside the folders a base may be in"),  # absolute
    ("base: link.yaml\n", "which is outside the folders a base may be in"),  # a symlink out
    ("base: loop.yaml\n", "'base' names 'loop.yaml'"),  # a symlink loop
    ("base: .\n", "which is a folder, not a config file"),
    ("base: sub/..\n", "which is a folder, not a config file"),
    ("base: sub\n", "which is not a file"),  # a folder
]


@pytest.mark.parametrize("line, message", BAD_BASES, ids=[f"bad{i}" for i in range(len(BAD_BASES))])
def test_every_bad_base_name_is_one_line_naming_the_file_and_key(tmp_path, line, message):
    cell = tmp_path / "cell"
    (cell / "sub").mkdir(parents=True)
    outside = tmp_path / "outside.yaml"
    outside.write_text("seed: 666\n")
    (cell / "link.yaml").symlink_to(outside)
    (cell / "loop.yaml").symlink_to(cell / "loop.yaml")
    config = cell / "a.yaml"
    config.write_text(line.replace("{outside}", str(outside)))
    for load in (read_config_file, load_config):
        with pytest.raises(ConfigError) as err:
            load(config)
        msg = str(err.value)
        assert msg.startswith(f"{config}: 'base' ") and message in msg and "\n" not in msg, msg
        # the message never echoes a huge name: without the two folders it may quote, it stays short
        # (the folders themselves are as long as the machine makes them, e.g. under pytest-xdist)
        bare = msg.replace(str(tmp_path), "T").replace(str(PROJECT), "P")
        assert len(bare) < 300, bare


def test_a_plain_name_is_found_beside_the_file_then_in_the_project_configs(tmp_path):
    (tmp_path / "mine.yaml").write_text("base: pick_cube\nseed: 11\n")
    cfg = load_config(tmp_path / "mine.yaml")
    assert cfg.seed == 11 and cfg.task.name == load_config("configs/pick_cube.yaml").task.name
    (tmp_path / "pick_cube.yaml").write_text("seed: 5\ntrain: {utd_ratio: 3}\n")  # beside the file wins
    assert read_config_file(tmp_path / "mine.yaml") == {"seed": 11, "train": {"utd_ratio": 3}}


def test_an_absolute_base_or_a_symlink_inside_the_allowed_folders_is_taken(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "root.yaml").write_text("seed: 2\n")
    (tmp_path / "alias.yaml").symlink_to(tmp_path / "sub" / "root.yaml")
    (tmp_path / "a.yaml").write_text(f"base: {tmp_path / 'sub' / 'root.yaml'}\n")
    (tmp_path / "b.yaml").write_text("base: alias\n")
    assert read_config_file(tmp_path / "a.yaml") == {"seed": 2} == read_config_file(tmp_path / "b.yaml")


def test_a_base_in_a_subfolder_may_not_climb_above_the_loaded_files_folder(tmp_path):
    (tmp_path / "cell" / "sub").mkdir(parents=True)
    (tmp_path / "secret.yaml").write_text("seed: 1\n")
    (tmp_path / "cell" / "sub" / "mid.yaml").write_text("base: ../../secret\n")
    (tmp_path / "cell" / "leaf.yaml").write_text("base: sub/mid\n")
    with pytest.raises(ConfigError, match=r"mid.yaml: 'base' names '../../secret' -> .*secret.yaml, which is "
                                          r"outside the folders a base may be in"):
        read_config_file(tmp_path / "cell" / "leaf.yaml")
