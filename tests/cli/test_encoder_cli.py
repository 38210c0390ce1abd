"""``robot-rl encoder check|convert``: verified conversion to the project format, one-line refusals."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
import torch
from backbone_files import float_state, images, lerobot_reference, random_backbone, save_safetensors, to_lerobot

from robot_rl.agents.encoders import ResNet10, load_backbone_weights
from robot_rl.agents.pretrained import read_backbone_weights
from robot_rl.cli import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def succeeds(capsys, *argv: str) -> tuple[str, dict]:
    assert main(list(argv)) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2, lines
    return lines[0], json.loads(lines[1])


def fails(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("robot-rl: "), lines
    assert not captured.out
    return lines[0]


@pytest.fixture
def lerobot_file(tmp_path):
    ref = random_backbone("hil_serl", seed=21)
    src = to_lerobot(float_state(ref))
    path = save_safetensors(tmp_path / "model.safetensors", src)
    return path, src


def test_convert_writes_a_project_file_that_loads_to_the_source_network(capsys, tmp_path, lerobot_file):
    source, src = lerobot_file
    out = tmp_path / "resnet10_hilserl.safetensors"
    line, report = succeeds(capsys, "encoder", "convert", str(source), str(out))
    assert line.startswith(f"wrote {out}: ResNet-10, variant hil_serl, lerobot layout: 36 tensors, "
                           "4,905,792 parameters")
    assert "agent.encoder.resnet_variant: hil_serl" in line
    assert report["ok"] and report["output"] == str(out) and report["variant"] == "hil_serl"
    assert report["feature_shape"] == [512, 4, 4]
    weights = read_backbone_weights(out, layout="robot_rl")
    assert weights.metadata["format"] == "robot_rl.backbone" and weights.metadata["source_layout"] == "lerobot"
    net = ResNet10("hil_serl")
    load_backbone_weights(net, str(out))
    x = images()
    with torch.no_grad():
        torch.testing.assert_close(net.eval()(x), lerobot_reference(src, x), rtol=1e-4, atol=1e-5)
    # checking the written file reports it as the project format
    line, report = succeeds(capsys, "encoder", "check", str(out))
    assert report["layout"] == "robot_rl" and report["variant"] == "hil_serl" and report["tensors"] == 36


def test_check_reports_layout_prefix_and_ignored_keys(capsys, tmp_path):
    ref = random_backbone("torchvision", seed=22)
    path = tmp_path / "r10.pt"
    torch.save({"model": {**ref.state_dict(), "fc.weight": torch.ones(3, 512), "fc.bias": torch.ones(3)}}, path)
    line, report = succeeds(capsys, "encoder", "check", str(path))
    assert report["layout"] == "torchvision" and report["prefix"] == "model." and report["ignored"] == 14
    assert "under prefix 'model.'" in line and "14 known-harmless keys ignored" in line


def test_convert_refuses_to_overwrite_unless_forced(capsys, tmp_path, lerobot_file):
    source, _ = lerobot_file
    out = tmp_path / "out.safetensors"
    out.write_bytes(b"keep")
    assert fails(capsys, "encoder", "convert", str(source), str(out)) == \
        f"robot-rl: {out}: exists (use --force to replace it)"
    assert out.read_bytes() == b"keep"
    succeeds(capsys, "encoder", "convert", str(source), str(out), "--force")
    assert read_backbone_weights(out).layout == "robot_rl"
    assert fails(capsys, "encoder", "convert", str(out), str(out), "--force") == \
        f"robot-rl: {out}: OUT is IN; write the converted file elsewhere"


@pytest.mark.parametrize("name,message", [
    ("out.pt", "{out}: the project format is a safetensors file; name OUT *.safetensors"),
    ("missing/out.safetensors", "{out}: folder {parent} does not exist"),
])
def test_convert_refuses_bad_output_paths(capsys, tmp_path, lerobot_file, name, message):
    out = tmp_path / name
    line = fails(capsys, "encoder", "convert", str(lerobot_file[0]), str(out))
    assert line == "robot-rl: " + message.format(out=out, parent=out.parent)
    assert not out.exists()


def test_convert_refuses_unverifiable_input_and_writes_nothing(capsys, tmp_path, lerobot_file):
    _, src = lerobot_file
    bad = dict(src)
    bad["encoder.stages.2.conv2.conv.weight"] = bad["encoder.stages.2.conv2.conv.weight"].clone()
    bad["encoder.stages.2.conv2.conv.weight"][0, 0, 0, 0] = float("nan")
    nan_file = save_safetensors(tmp_path / "nan.safetensors", bad)
    out = tmp_path / "out.safetensors"
    assert fails(capsys, "encoder", "convert", str(nan_file), str(out)) == (
        f"robot-rl: {nan_file}: 'encoder.stages.2.conv2.conv.weight' (the backbone's 'layer3.0.conv2.weight') "
        "holds 1 NaN, infinite or beyond-float32 values")
    pkl = tmp_path / "resnet10_params.pkl"
    pkl.write_bytes(pickle.dumps({"conv_init": {"kernel": [1.0]}}))
    assert "is a pickle" in fails(capsys, "encoder", "convert", str(pkl), str(out))
    assert fails(capsys, "encoder", "convert", str(lerobot_file[0]), str(out), "--layout", "transformers") == (
        f"robot-rl: {lerobot_file[0]}: 'embedder.embedder.convolution.weight' (the backbone's 'conv1.weight') "
        "is missing (60/60 backbone tensors absent, read as transformers ResNetModel layout)")
    assert not out.exists()


def test_values_that_overflow_the_network_are_refused(capsys, tmp_path):
    """Finite weights whose features are not (a stem scaled to 1e30 overflows float32)."""
    state = float_state(random_backbone("torchvision", seed=23))
    state["conv1.weight"] = state["conv1.weight"] * 1e30
    state["layer1.0.conv1.weight"] = state["layer1.0.conv1.weight"] * 1e30
    path = save_safetensors(tmp_path / "big.safetensors", state)
    assert fails(capsys, "encoder", "check", str(path)) == (
        f"robot-rl: {path}: the backbone gives non-finite features with these weights "
        "(every tensor is finite, but their values overflow)")


def test_the_installed_command_exits_2_with_one_line(tmp_path):
    empty = tmp_path / "w.safetensors"
    empty.write_bytes(b"")
    out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "encoder", "check", str(empty)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert out.stderr.strip() == f"robot-rl: {empty}: is empty" and not out.stdout


def test_a_fifo_is_refused_at_once_by_check_and_convert(tmp_path):
    """open() on a FIFO waited for a writer forever (376 s until one came); now one line, exit 2, at once."""
    import os
    import time

    fifo = tmp_path / "weights.safetensors"
    os.mkfifo(fifo)
    for argv in (["check", str(fifo)], ["convert", str(fifo), str(tmp_path / "out.safetensors")]):
        started = time.monotonic()
        out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "encoder", *argv],
                             capture_output=True, text=True, timeout=120)
        took = time.monotonic() - started
        assert out.returncode == 2, out.stderr
        assert out.stderr.strip() == (f"robot-rl: {fifo}: is a FIFO (named pipe), not a regular file; "
                                      "weights are read from files only") and not out.stdout
        assert took < 60  # the interpreter's start and imports; the refusal itself is immediate
    assert not (tmp_path / "out.safetensors").exists()


def test_a_deep_or_malformed_header_is_one_line(capsys, tmp_path):
    import struct

    deep = b"[" * 100_000 + b"]" * 100_000  # 200 KB that ended in a RecursionError traceback
    path = tmp_path / "deep.safetensors"
    path.write_bytes(struct.pack("<Q", len(deep)) + deep)
    assert fails(capsys, "encoder", "check", str(path)) == (
        f"robot-rl: {path}: is not a valid safetensors file: its header nests 100000 levels deep "
        "(the format's header is a flat mapping, 3 levels at most)")
    flat_list = tmp_path / "list.safetensors"
    flat_list.write_bytes(struct.pack("<Q", 2) + b"[]")
    assert fails(capsys, "encoder", "check", str(flat_list)) == (
        f"robot-rl: {flat_list}: is not a valid safetensors file: its header is not a JSON object")
    long = tmp_path / "long.safetensors"
    long.write_bytes(struct.pack("<Q", 1 << 20) + b'{"a": 1}')
    assert fails(capsys, "encoder", "convert", str(long), str(tmp_path / "o.safetensors")) == (
        f"robot-rl: {long}: is truncated: its header needs 1048576 bytes, 8 follow")
    assert fails(capsys, "encoder", "check", str(tmp_path)) == (
        f"robot-rl: {tmp_path}: is a directory, not a weights file")
