"""Pretrained ResNet-10 files: every layout loads to the same features; bad files are one line, load nothing."""

from __future__ import annotations

import pickle
import struct

import gymnasium as gym
import numpy as np
import pytest
import torch
from backbone_files import (
    float_state,
    images,
    lerobot_reference,
    random_backbone,
    save_safetensors,
    to_lerobot,
    to_transformers,
    transformers_reference,
)

from robot_rl.agents.encoders import ObsEncoder, ResNet10, load_backbone_weights
from robot_rl.agents.pretrained import backbone_spec, read_backbone_weights, save_backbone
from robot_rl.config.agent import EncoderConfig
from robot_rl.errors import ConfigError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WHERE = "agent.encoder.pretrained_path"


def features(net: ResNet10, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return net.eval()(x)


def loaded(path, variant="torchvision", **kw) -> ResNet10:
    net = ResNet10(variant)
    load_backbone_weights(net, str(path), **kw)
    return net.eval()


def refused(path, variant="torchvision", **kw) -> str:
    """Loading must fail with one line and leave a fresh backbone exactly as it was."""
    net = ResNet10(variant)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with pytest.raises(ConfigError) as err:
        load_backbone_weights(net, str(path), **kw)
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k]), f"{k} changed although loading failed"
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{WHERE}: "), message
    return message


# --- the network variants ---------------------------------------------------------------

@pytest.mark.parametrize("variant", ["torchvision", "hil_serl"])
def test_spec_describes_the_module(variant):
    state = ResNet10(variant).state_dict()
    spec = backbone_spec(variant)
    floats = {k: tuple(v.shape) for k, v in state.items() if v.is_floating_point()}
    assert floats == spec and list(floats) == list(spec)  # same tensors, same (forward) order
    learned = sum(int(np.prod(s)) for k, s in spec.items() if "running_" not in k)
    assert learned == sum(p.numel() for p in ResNet10(variant).parameters())
    assert learned == 4_905_792  # the parameter count helper2424/resnet10 publishes (the same in both variants)


@pytest.mark.parametrize("size", [64, 67, 128])
def test_hil_serl_variant_computes_the_helper2424_network(size):
    net = random_backbone("hil_serl", seed=3)
    src = to_lerobot(float_state(net))
    x = images(size=size)
    ours = features(net, x)
    assert ours.shape[1:] == (512, math_ceil(size, 32), math_ceil(size, 32))
    torch.testing.assert_close(ours, lerobot_reference(src, x), rtol=1e-4, atol=1e-5)


def math_ceil(n: int, d: int) -> int:
    return -(-n // d)


def test_the_variants_differ_where_they_should():
    """Same conv weights, other norm and padding: another function (so a mix-up cannot pass)."""
    a, b = random_backbone("torchvision"), random_backbone("hil_serl")
    assert not torch.allclose(features(a, images()), features(b, images()))


# --- every layout loads to the same features ---------------------------------------------

def test_torchvision_layout_safetensors_and_pt_load_like_the_weights_themselves(tmp_path):
    ref = random_backbone("torchvision", seed=1)
    state = ref.state_dict()  # with num_batches_tracked, as torchvision writes it
    head = {"fc.weight": torch.randn(10, 512), "fc.bias": torch.randn(10)}
    save_safetensors(tmp_path / "tv.safetensors", {**float_state(ref), **head})
    torch.save({"state_dict": {**state, **head}, "epoch": 3}, tmp_path / "tv.pt")
    torch.save({f"module.{k}": v for k, v in state.items()}, tmp_path / "dp.pth")  # DataParallel prefix
    torch.save(state, tmp_path / "renamed.safetensors")  # the bytes decide, not the name
    x = images()
    for name in ("tv.safetensors", "tv.pt", "dp.pth", "renamed.safetensors"):
        net = loaded(tmp_path / name)
        assert torch.equal(features(net, x), features(ref, x)), name
    weights = read_backbone_weights(tmp_path / "tv.pt")
    assert (weights.layout, weights.variant, weights.prefix) == ("torchvision", "torchvision", "state_dict.")
    assert weights.outside == 1  # "epoch"
    assert sorted(weights.ignored)[:2] == ["state_dict.bn1.num_batches_tracked", "state_dict.fc.bias"]


def test_resnet18_file_keeps_the_first_block_of_each_stage(tmp_path):
    ref = random_backbone("torchvision", seed=2)
    deeper = {k.replace("layer1.0.", "layer1.1."): v + 1 for k, v in float_state(ref).items()
              if k.startswith("layer1.0.")}
    save_safetensors(tmp_path / "r18.safetensors", {**float_state(ref), **deeper})
    weights = read_backbone_weights(tmp_path / "r18.safetensors")
    assert len(weights.ignored) == len(deeper)
    assert torch.equal(features(loaded(tmp_path / "r18.safetensors"), images()), features(ref, images()))


@pytest.mark.parametrize("wrapper", ["", "resnet."])
def test_transformers_layout_loads_to_the_transformers_network(tmp_path, wrapper):
    ref = random_backbone("torchvision", seed=4)
    src = to_transformers(float_state(ref))
    extra = {"classifier.1.weight": torch.randn(5, 512), "classifier.1.bias": torch.randn(5)}
    save_safetensors(tmp_path / "hf.safetensors", {**{wrapper + k: v for k, v in src.items()}, **extra})
    net = loaded(tmp_path / "hf.safetensors")
    x = images()
    torch.testing.assert_close(features(net, x), transformers_reference(src, x), rtol=1e-4, atol=1e-5)
    assert torch.equal(features(net, x), features(ref, x))
    weights = read_backbone_weights(tmp_path / "hf.safetensors")
    assert (weights.layout, weights.variant, weights.prefix) == ("transformers", "torchvision", wrapper)


@pytest.mark.parametrize("group_norm_level", [True, False])
def test_lerobot_layout_loads_to_the_helper2424_network(tmp_path, group_norm_level):
    ref = random_backbone("hil_serl", seed=5)
    src = to_lerobot(float_state(ref), group_norm_level)
    save_safetensors(tmp_path / "model.safetensors", src)
    net = loaded(tmp_path / "model.safetensors", variant="hil_serl")
    x = images()
    torch.testing.assert_close(features(net, x), lerobot_reference(to_lerobot(float_state(ref)), x),
                               rtol=1e-4, atol=1e-5)
    assert torch.equal(features(net, x), features(ref, x))
    assert read_backbone_weights(tmp_path / "model.safetensors").layout == "lerobot"


def test_a_lerobot_sac_policy_file_yields_its_shared_encoder(tmp_path):
    ref = random_backbone("hil_serl", seed=6)
    src = to_lerobot(float_state(ref))
    policy = {"actor.network.net.0.weight": torch.randn(8, 4), "critic.0.bias": torch.randn(8)}
    for p in ("encoder_critic.image_encoder.image_enc_layers.", "encoder_actor.image_encoder.image_enc_layers."):
        policy.update({p + k: v.clone() for k, v in src.items()})
    save_safetensors(tmp_path / "policy.safetensors", policy)
    weights = read_backbone_weights(tmp_path / "policy.safetensors")
    assert weights.prefix == "encoder_actor.image_encoder.image_enc_layers." and weights.variant == "hil_serl"
    assert weights.outside == len(policy) - len(src)
    assert torch.equal(features(loaded(tmp_path / "policy.safetensors", "hil_serl"), images()),
                       features(ref, images()))
    # two *different* backbones: the reader will not guess
    other = {k: v + 1 for k, v in src.items()}
    policy.update({"encoder_actor.image_encoder.image_enc_layers." + k: v for k, v in other.items()})
    save_safetensors(tmp_path / "two.safetensors", policy)
    assert "holds 2 different ResNet-10 backbones" in refused(tmp_path / "two.safetensors", "hil_serl")
    chosen = loaded(tmp_path / "two.safetensors", "hil_serl", prefix="encoder_critic.image_encoder.image_enc_layers.")
    assert torch.equal(features(chosen, images()), features(ref, images()))


@pytest.mark.parametrize("variant", ["torchvision", "hil_serl"])
def test_project_format_round_trips_exactly(tmp_path, variant):
    ref = random_backbone(variant, seed=7)
    src = float_state(ref) if variant == "torchvision" else to_lerobot(float_state(ref))
    save_safetensors(tmp_path / "in.safetensors", {k: v.to(torch.float16) for k, v in src.items()})
    weights = read_backbone_weights(tmp_path / "in.safetensors")
    save_backbone(tmp_path / "out.safetensors", weights)
    again = read_backbone_weights(tmp_path / "out.safetensors", layout="robot_rl")
    assert (again.layout, again.variant, again.metadata["source_layout"]) == ("robot_rl", variant, weights.layout)
    assert read_backbone_weights(tmp_path / "out.safetensors").layout == "robot_rl"  # auto finds the metadata
    for k, v in weights.tensors.items():
        assert again.tensors[k].dtype == torch.float32 and torch.equal(again.tensors[k], v), k
        assert torch.equal(v, src_value(src, k, variant).to(torch.float16).float()), k


def src_value(src, key, variant):
    return src[key] if variant == "torchvision" else src[to_lerobot({key: torch.zeros(1)}).popitem()[0]]


def test_obs_encoder_builds_the_variant_and_loads_the_file(tmp_path):
    ref = random_backbone("hil_serl", seed=8)
    save_safetensors(tmp_path / "model.safetensors", to_lerobot(float_state(ref)))
    space = gym.spaces.Dict({"front": gym.spaces.Box(0, 255, (64, 64, 3), np.uint8),
                             "state": gym.spaces.Box(-1, 1, (3,), np.float32)})
    cfg = EncoderConfig(kind="resnet10", resnet_variant="hil_serl", pretrained_path=str(tmp_path / "model.safetensors"),
                        latent_dim=8, spatial_features=2)
    encoder = ObsEncoder(space, cfg)
    backbone = encoder.backbones["front"]
    assert isinstance(backbone, ResNet10) and backbone.variant == "hil_serl"
    assert torch.equal(features(backbone, images()), features(ref, images()))
    with pytest.raises(ConfigError) as err:  # the default variant cannot take GroupNorm weights
        ObsEncoder(space, EncoderConfig(kind="resnet10", pretrained_path=str(tmp_path / "model.safetensors")))
    assert str(err.value) == (f"{WHERE}: {tmp_path / 'model.safetensors'} holds a hil_serl ResNet-10 "
                              "(lerobot layout), but agent.encoder.resnet_variant is torchvision: "
                              "set agent.encoder.resnet_variant: hil_serl")


# --- a wrong mapping fails the comparison ---------------------------------------------------

def test_swapped_norms_or_stages_give_other_features(tmp_path):
    """The checks above are sensitive: the same tensors in the wrong places change the output."""
    ref = random_backbone("hil_serl", seed=9)
    src = to_lerobot(float_state(ref))
    x = images()
    want = lerobot_reference(src, x)
    swapped = dict(src)
    for p in ("weight", "bias"):
        a, b = f"encoder.stages.0.norm1.group_norm.{p}", f"encoder.stages.0.norm2.group_norm.{p}"
        swapped[a], swapped[b] = src[b], src[a]
    save_safetensors(tmp_path / "swapped.safetensors", swapped)
    assert not torch.allclose(features(loaded(tmp_path / "swapped.safetensors", "hil_serl"), x), want, atol=1e-3)
    tv = random_backbone("torchvision", seed=9)
    hf = to_transformers(float_state(tv))
    for p in ("weight", "bias", "running_mean", "running_var"):
        a = f"encoder.stages.1.layers.0.layer.0.normalization.{p}"
        b = f"encoder.stages.1.layers.0.shortcut.normalization.{p}"
        hf[a], hf[b] = hf[b], hf[a]
    save_safetensors(tmp_path / "hf.safetensors", hf)
    assert not torch.allclose(features(loaded(tmp_path / "hf.safetensors"), x), features(tv, x), atol=1e-3)


# --- bad input: one line naming the file and the key; nothing loaded -------------------------

def tv_file(tmp_path, name="w.safetensors", **changes):
    state = float_state(random_backbone("torchvision", seed=10))
    for key, value in changes.items():
        key = key.replace("__", ".")
        if value is None:
            del state[key]
        else:
            state[key] = value
    return save_safetensors(tmp_path / name, state)


def test_other_shape_names_the_file_and_key(tmp_path):
    path = tv_file(tmp_path, **{"layer2.0.conv1.weight": torch.zeros(64, 64, 3, 3)})
    assert refused(path) == (f"{WHERE}: {path}: 'layer2.0.conv1.weight' has shape (64, 64, 3, 3), "
                             "the backbone needs (128, 64, 3, 3)")


def test_missing_key_is_named(tmp_path):
    path = tv_file(tmp_path, **{"layer3.0.bn2.running_var": None})
    n = len(backbone_spec("torchvision"))
    assert refused(path) == (f"{WHERE}: {path}: 'layer3.0.bn2.running_var' is missing "
                             f"(1/{n} backbone tensors absent, read as torchvision ResNet layout)")


def test_wrong_layout_names_the_first_key_it_lacks(tmp_path):
    path = tv_file(tmp_path)
    n = len(backbone_spec("hil_serl"))
    assert refused(path, layout="lerobot") == (
        f"{WHERE}: {path}: 'embedder.0.weight' (the backbone's 'conv1.weight') is missing "
        f"({n}/{n} backbone tensors absent, read as LeRobot/HIL-SERL ResNet-10 layout)")
    message = refused(path, variant="hil_serl")  # a BatchNorm file for the GroupNorm network
    assert "holds a torchvision ResNet-10 (torchvision layout), but agent.encoder.resnet_variant is hil_serl" \
        in message


@pytest.mark.parametrize("value,fragment", [
    (torch.full((64,), float("nan")), "holds 64 NaN, infinite or beyond-float32 values"),
    (torch.tensor([float("inf")] + [1.0] * 63), "holds 1 NaN, infinite or beyond-float32 values"),
    (torch.full((64,), 1e300, dtype=torch.float64), "holds 64 NaN, infinite or beyond-float32 values"),
    (torch.ones(64, dtype=torch.int64), "has dtype int64, not a floating-point type"),
    (torch.ones(64, dtype=torch.bool), "has dtype bool, not a floating-point type"),
])
def test_non_finite_or_non_float_weights_are_refused(tmp_path, value, fragment):
    path = tv_file(tmp_path, **{"layer1.0.bn1.weight": value})
    assert refused(path) == f"{WHERE}: {path}: 'layer1.0.bn1.weight' {fragment}"


def test_negative_running_variance_is_refused(tmp_path):
    path = tv_file(tmp_path, **{"bn1.running_var": -torch.ones(64)})
    assert refused(path) == f"{WHERE}: {path}: 'bn1.running_var' holds negative variances"


def test_unknown_extra_key_is_refused_and_a_classifier_head_is_not(tmp_path):
    path = tv_file(tmp_path, **{"layer2.0.se.fc.weight": torch.ones(8, 128)})
    assert refused(path) == (f"{WHERE}: {path}: holds 1 key(s) the torchvision ResNet layout does not have, "
                             "first 'layer2.0.se.fc.weight' (not a ResNet-10 in that layout, or another model's "
                             "weights)")
    ok = tv_file(tmp_path, "head.safetensors", fc__weight=torch.ones(3, 512), fc__bias=torch.ones(3))
    assert loaded(ok) is not None


def test_a_file_of_no_known_layout(tmp_path):
    path = save_safetensors(tmp_path / "mlp.safetensors", {"net.0.weight": torch.ones(4, 4)})
    assert refused(path) == (f"{WHERE}: {path}: matches no known ResNet-10 layout (first key 'net.0.weight'); "
                             "torchvision, transformers, lerobot and robot_rl files are read "
                             "(see robot-rl encoder convert --help)")


def test_truncated_or_corrupt_safetensors(tmp_path):
    good = tv_file(tmp_path).read_bytes()
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(good[: len(good) // 2])
    assert "is truncated: tensor '" in refused(cut)
    short = tmp_path / "short.safetensors"
    short.write_bytes(good[:5])
    assert refused(short) == f"{WHERE}: {short}: is truncated: 5 bytes, a safetensors file starts with an " \
                             "8-byte header length"
    header_cut = tmp_path / "header.safetensors"
    header_cut.write_bytes(good[:100])
    assert "is truncated: its header needs" in refused(header_cut)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(struct.pack("<Q", 10) + b"{not json}" + b"\0" * 32)
    assert "its header is not JSON" in refused(garbage)
    bad_offsets = tmp_path / "offsets.safetensors"
    header = b'{"conv1.weight":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}'
    bad_offsets.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    assert "tensor 'conv1.weight' has no valid data_offsets" in refused(bad_offsets)
    lying = tmp_path / "lying.safetensors"  # offsets inside the file, but not what the shape needs
    header = b'{"conv1.weight":{"dtype":"F32","shape":[64,3,7,7],"data_offsets":[0,8]}}'
    lying.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    assert "is not a readable safetensors file (" in refused(lying)


def test_huge_header_length(tmp_path):
    path = tmp_path / "huge.safetensors"
    path.write_bytes(struct.pack("<Q", 2 ** 62) + b"{}")
    assert refused(path) == (f"{WHERE}: {path}: is not a valid safetensors file: header length {2 ** 62} bytes "
                             "(at most 16777216; corrupt or another format)")
    other = tmp_path / "huge.bin"  # no hint from the name either
    other.write_bytes(struct.pack("<Q", 2 ** 62) + b"{}")
    assert "is neither a safetensors file nor a PyTorch zip archive" in refused(other)


class Payload:
    """Unpickling this would run code; weights_only must refuse before it does."""

    ran = False

    def __reduce__(self):
        return (_mark, ())


def _mark():
    Payload.ran = True
    return torch.zeros(64, 3, 7, 7)


def test_pickles_are_never_unpickled(tmp_path):
    state = float_state(random_backbone("torchvision", seed=11))
    raw = tmp_path / "w.pkl"
    raw.write_bytes(pickle.dumps({**state, "conv1.weight": Payload()}))
    assert refused(raw) == (f"{WHERE}: {raw}: is a pickle (a legacy torch.save or a .pkl file); robot_rl never "
                            "unpickles weights: save them as safetensors, or with torch.save's default zip format")
    legacy = tmp_path / "legacy.pt"
    torch.save(state, legacy, _use_new_zipfile_serialization=False)
    assert "is a pickle" in refused(legacy)
    zipped = tmp_path / "object.pt"
    torch.save({**state, "conv1.weight": Payload()}, zipped)
    message = refused(zipped)
    assert message.startswith(f"{WHERE}: {zipped}: cannot be read as a PyTorch state dict with weights_only=True (")
    assert not Payload.ran
    model = tmp_path / "module.pt"
    torch.save([1, 2], model)
    assert refused(model) == f"{WHERE}: {model}: holds a list, not a state dict (a mapping of names to tensors)"


def test_directory_empty_and_missing_files(tmp_path):
    folder = tmp_path / "resnet10"
    folder.mkdir()
    assert refused(folder) == f"{WHERE}: {folder}: is a directory, not a weights file"
    tv_file(tmp_path, "resnet10/model.safetensors")
    assert refused(folder).endswith(f"(did you mean {folder / 'model.safetensors'}?)")
    empty = tmp_path / "empty.safetensors"
    empty.write_bytes(b"")
    assert refused(empty) == f"{WHERE}: {empty}: is empty"
    assert refused(tmp_path / "none.pt") == f"{WHERE}: {tmp_path / 'none.pt'}: weights file not found"


def test_project_format_metadata_is_checked(tmp_path):
    state = float_state(random_backbone("torchvision", seed=12))
    meta = {"format": "robot_rl.backbone", "version": "2", "arch": "resnet10", "variant": "torchvision"}
    newer = save_safetensors(tmp_path / "v2.safetensors", state, meta)
    assert refused(newer) == f"{WHERE}: {newer}: has project format version '2'; this robot_rl reads version 1"
    odd = save_safetensors(tmp_path / "odd.safetensors", state, {**meta, "version": "1", "variant": "resnet18"})
    assert "names an unknown ResNet-10 variant 'resnet18'" in refused(odd)
    plain = save_safetensors(tmp_path / "plain.safetensors", state)
    assert refused(plain, layout="robot_rl") == (
        f"{WHERE}: {plain}: is not in the robot_rl project format (no 'robot_rl.backbone' metadata); "
        "convert it with: robot-rl encoder convert IN OUT")


# --- hostile paths and headers: refused in one line, before anything blocks or recurses ----------------


def _header_file(path, header: bytes, data: bytes = b"\0" * 8):
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return path


def test_a_fifo_socket_or_device_is_refused_before_it_is_opened(tmp_path):
    import os
    import socket
    import time

    fifo = tmp_path / "w.safetensors"
    os.mkfifo(fifo)  # open() on it would wait for a writer forever
    started = time.monotonic()
    assert refused(fifo) == (f"{WHERE}: {fifo}: is a FIFO (named pipe), not a regular file; "
                             "weights are read from files only")
    assert time.monotonic() - started < 5.0
    assert refused("/dev/null").endswith("/dev/null: is a character device, not a regular file; "
                                         "weights are read from files only")
    sock_path = tmp_path / "s.pt"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        assert "is a socket, not a regular file" in refused(sock_path)
    link = tmp_path / "link.safetensors"  # a link is followed: to a FIFO it is still a FIFO
    link.symlink_to(fifo)
    assert "is a FIFO (named pipe), not a regular file" in refused(link)
    assert "cannot read it (ValueError: embedded null byte)" in refused(str(tmp_path / "a\0b.pt"))


def test_a_deeply_nested_header_is_refused_without_recursion(tmp_path):
    import time

    from robot_rl.agents.pretrained import MAX_HEADER_DEPTH, json_depth

    deep = b"[" * 100_000 + b"]" * 100_000  # 200 KB: json.loads raised RecursionError on it
    path = _header_file(tmp_path / "deep.safetensors", deep)
    started = time.monotonic()
    assert refused(path) == (f"{WHERE}: {path}: is not a valid safetensors file: its header nests 100000 levels "
                             f"deep (the format's header is a flat mapping, {MAX_HEADER_DEPTH} levels at most)")
    assert time.monotonic() - started < 5.0
    inside = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
    assert "nests 50000 levels deep" in refused(_header_file(tmp_path / "objects.safetensors", inside))
    # brackets inside strings do not count, escaped quotes do not end a string, escaped backslashes do
    assert json_depth(b'{"a[[[[": {"b": [1, 2]}, "c\\"[[[": "x", "d\\\\": [[[]]]}') == 4
    assert json_depth(b'{"k": "\\\\\\"[[["}') == 1
    assert json_depth(b"") == 0 and json_depth(b"]]]") == 0


@pytest.mark.parametrize("header, words", [
    (b"[]", "its header is not a JSON object"),
    (b'"conv1.weight"', "its header is not a JSON object"),
    (b'{"conv1.weight": [1, 2]}', "tensor 'conv1.weight' is a JSON list in the header, not a mapping"),
    (b'{"conv1.weight": {"dtype": 3, "shape": [2], "data_offsets": [0, 8]}}',
     "tensor 'conv1.weight' has no valid dtype and shape"),
    (b'{"conv1.weight": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}',
     "tensor 'conv1.weight' has no valid dtype and shape"),
    (b'{"conv1.weight": {"dtype": "F32", "shape": [true], "data_offsets": [0, 8]}}',
     "tensor 'conv1.weight' has no valid dtype and shape"),
    (b'{"__metadata__": {"format": ["x"]}}', "its __metadata__ is not a mapping of strings"),
    (b'{"__metadata__": [1]}', "its __metadata__ is not a mapping of strings"),
    (b'{"a\\nb": 1}', "tensor 'a\\nb' is a JSON int in the header"),  # one line, escaped
])
def test_a_header_that_is_not_the_format_s_flat_mapping_is_one_line(tmp_path, header, words):
    message = refused(_header_file(tmp_path / "bad.safetensors", header))
    assert f"is not a valid safetensors file: {words}" in message, message


def test_a_header_length_beyond_the_file_or_the_bound_is_one_line(tmp_path):
    from robot_rl.agents.pretrained import MAX_HEADER_BYTES

    path = tmp_path / "long.safetensors"
    path.write_bytes(struct.pack("<Q", 5000) + b'{"a": 1}')
    assert refused(path) == f"{WHERE}: {path}: is truncated: its header needs 5000 bytes, 8 follow"
    big = tmp_path / "big.safetensors"
    big.write_bytes(struct.pack("<Q", MAX_HEADER_BYTES + 1) + b"{" + b" " * 64)
    assert refused(big) == (f"{WHERE}: {big}: is not a valid safetensors file: header length "
                            f"{MAX_HEADER_BYTES + 1} bytes (at most {MAX_HEADER_BYTES}; corrupt or another format)")


def test_a_path_swapped_for_a_fifo_after_the_check_is_still_refused(tmp_path, monkeypatch):
    """The race: stat saw a regular file, then the path became a FIFO; the O_NONBLOCK open and fstat catch it."""
    import os

    from robot_rl.agents import pretrained

    fifo = tmp_path / "swapped.safetensors"
    os.mkfifo(fifo)
    real_stat = os.stat
    regular = real_stat(tv_file(tmp_path))

    def stat_sees_a_file(path, *args, **kwargs):
        return regular if str(path) == str(fifo) else real_stat(path, *args, **kwargs)

    monkeypatch.setattr(pretrained.os, "stat", stat_sees_a_file)
    assert "is a FIFO (named pipe), not a regular file" in refused(fifo)


def test_a_hugging_face_snapshot_folder_stands_for_its_safetensors(tmp_path):
    """config.json + model.safetensors (save_pretrained, a Hub download): the folder loads as its file;
    a snapshot without one model.safetensors, or a plain folder, is one line naming the folder."""
    tv = random_backbone("torchvision", seed=21)
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "config.json").write_text('{"model_type": "resnet", "depths": [1, 1, 1, 1]}')
    save_safetensors(snapshot / "model.safetensors", to_transformers(float_state(tv)))
    x = images(2, seed=3)
    assert torch.allclose(features(loaded(snapshot), x), features(tv, x), atol=1e-5)
    assert torch.allclose(features(loaded(snapshot / "model.safetensors"), x), features(tv, x), atol=1e-5)
    sharded = tmp_path / "sharded"
    sharded.mkdir()
    (sharded / "config.json").write_text("{}")
    (sharded / "model.safetensors.index.json").write_text("{}")
    assert refused(sharded) == (f"{WHERE}: {sharded}: is a Hugging Face snapshot folder without a single "
                                "model.safetensors (its weights are sharded; robot_rl reads config.json + "
                                "model.safetensors)")
    bin_only = tmp_path / "bin_only"
    bin_only.mkdir()
    (bin_only / "config.json").write_text("{}")
    torch.save(float_state(tv), bin_only / "pytorch_model.bin")
    assert "without a single model.safetensors (robot_rl reads" in refused(bin_only)
    (snapshot / "model.safetensors").write_bytes(b"\x00" * 4)  # a snapshot whose weights are truncated
    assert refused(snapshot).startswith(f"{WHERE}: {snapshot / 'model.safetensors'}: is truncated")
