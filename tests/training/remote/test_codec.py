"""Tensors, spaces and transition batches survive the wire exactly, and bad bytes are refused."""

import numpy as np
import pytest

from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.codec import (
    DTYPES,
    decode_batch,
    decode_spaces,
    decode_tensor,
    decode_weights,
    encode_batch,
    encode_spaces,
    encode_tensor,
    encode_weights,
)
from robot_rl.training.remote.errors import PayloadError
from robot_rl.training.remote.proto import learning_pb2 as pb


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_tensor_roundtrip_every_dtype(dtype):
    rng = np.random.default_rng(0)
    arr = (rng.standard_normal((3, 4, 2)) * 100).astype(dtype)
    out = decode_tensor(encode_tensor(arr), "t")
    assert out.dtype == arr.dtype and out.shape == arr.shape
    np.testing.assert_array_equal(out, arr)


def test_tensor_scalar_empty_and_big_endian_input():
    assert decode_tensor(encode_tensor(np.float32(2.5)), "t").shape == ()
    assert decode_tensor(encode_tensor(np.zeros((0, 3), np.int16)), "t").shape == (0, 3)
    big = np.arange(6, dtype=">i4").reshape(2, 3)
    msg = encode_tensor(big)
    assert msg.data == np.arange(6, dtype="<i4").tobytes()  # always little-endian on the wire
    np.testing.assert_array_equal(decode_tensor(msg, "t"), big)


def test_tensor_refuses_objects():
    with pytest.raises(TypeError, match="cannot travel"):
        encode_tensor(np.array([object()], dtype=object))


@pytest.mark.parametrize("mutate, match", [
    (lambda m: setattr(m, "data", m.data[:-1]), r"bytes do not fill float32 \(2, 3\)"),
    (lambda m: setattr(m, "dtype", "object"), "unknown dtype 'object'"),
    (lambda m: setattr(m, "dtype", "complex64"), "unknown dtype"),
    (lambda m: m.shape.__setitem__(0, -2), "invalid shape"),
    (lambda m: setattr(m, "data", np.full((2, 3), np.nan, np.float32).tobytes()), "NaN"),
])
def test_tensor_malformed_is_refused_naming_the_field(mutate, match):
    msg = encode_tensor(np.ones((2, 3), np.float32))
    mutate(msg)
    with pytest.raises(PayloadError, match=match) as err:
        decode_tensor(msg, "obs['state']", finite=True)
    assert "obs['state']" in str(err.value)


def test_bool_tensor_with_stray_bytes_is_refused():
    msg = pb.Tensor(dtype="bool", shape=[2], data=bytes([1, 7]))
    with pytest.raises(PayloadError, match="bool"):
        decode_tensor(msg, "t")


def test_spaces_roundtrip_and_mismatch_names_the_key():
    spaces = syn.make_spaces(cameras=("front", "wrist"), image_size=64)
    back = decode_spaces(pb.Spaces.FromString(encode_spaces(spaces).SerializeToString()))
    assert spaces.mismatch(back) is None
    smaller = syn.make_spaces(cameras=("front", "wrist"), image_size=32)
    assert "'front'" in spaces.mismatch(smaller) and "shape" in spaces.mismatch(smaller)
    extra = syn.make_spaces(cameras=("front", "wrist", "side"), image_size=64)
    assert "'side'" in spaces.mismatch(extra)
    fewer = syn.make_spaces(cameras=("front",), image_size=64)
    assert "'wrist'" in spaces.mismatch(fewer)
    wider = syn.make_spaces(cameras=("front", "wrist"), image_size=64, action_dim=4)
    assert spaces.mismatch(wider).startswith("action")


def test_batch_roundtrip_sends_next_obs_only_for_last_steps():
    spaces = syn.make_spaces(cameras=("front", "wrist"), image_size=32)
    rng = np.random.default_rng(1)
    steps = list(syn.episode(spaces, 7, 5, rng, intervene_every=2, success=True))
    steps += list(syn.episode(spaces, 8, 3, rng))[:2]  # a second episode, not finished
    msg = encode_batch(steps, spaces, actor_id="a", incarnation="i", seq=3)
    assert [f.index for f in msg.next_obs] == [4]
    wire = pb.TransitionBatch.FromString(msg.SerializeToString())
    batch = decode_batch(wire, spaces)
    assert (batch.actor_id, batch.incarnation, batch.seq) == ("a", "i", 3)
    assert len(batch.steps) == len(steps)
    for got, want in zip(batch.steps, steps):
        assert (got.episode_id, got.step, got.terminated, got.truncated, got.intervened, got.success) == \
            (want.episode_id, want.step, want.terminated, want.truncated, want.intervened, want.success)
        assert got.reward == pytest.approx(want.reward)
        np.testing.assert_array_equal(got.action, want.action)
        for key in spaces.observation:
            np.testing.assert_array_equal(got.obs[key], want.obs[key])
        if want.last:
            for key in spaces.observation:
                np.testing.assert_array_equal(got.next_obs[key], want.next_obs[key])
        else:
            assert got.next_obs == {}


def _batch():
    spaces = syn.make_spaces(cameras=("front",), image_size=16)
    steps = list(syn.episode(spaces, 0, 4, np.random.default_rng(2)))
    return spaces, encode_batch(steps, spaces, actor_id="a", incarnation="i", seq=1)


@pytest.mark.parametrize("mutate, match", [
    (lambda m: m.obs["front"].__setattr__("data", m.obs["front"].data[:-3]), r"obs\['front'\]: .*bytes do not fill"),
    (lambda m: m.obs["state"].__setattr__("dtype", "float64"), r"obs\['state'\]"),
    (lambda m: m.obs["front"].shape.__setitem__(1, 8), r"obs\['front'\]"),
    (lambda m: m.obs["extra"].CopyFrom(m.obs["state"]), "extra"),
    (lambda m: m.action.__setattr__("data", np.full((4, 7), np.nan, np.float32).tobytes()), "action.*NaN"),
    (lambda m: m.reward.append(1.0), "column 'reward'"),
    (lambda m: m.reward.__setitem__(0, float("inf")), "reward"),
    (lambda m: m.step.__setitem__(0, -1), "negative"),
    (lambda m: m.next_obs.pop(), "carry next_obs"),
    (lambda m: m.next_obs[0].__setattr__("index", 1), "not a distinct episode end"),
    (lambda m: m.ClearField("episode_id"), "0 transitions"),
])
def test_malformed_batches_are_refused(mutate, match):
    spaces, msg = _batch()
    mutate(msg)
    with pytest.raises(PayloadError, match=match):
        decode_batch(msg, spaces)


def test_weights_roundtrip():
    rng = np.random.default_rng(3)
    weights = syn.policy_weights(rng)
    weights["steps"] = np.array(5, dtype=np.int64)
    msg = encode_weights(weights, version=4, learner_updates=400, published_unix=12.5)
    got = decode_weights(pb.Weights.FromString(msg.SerializeToString()))
    assert (got.version, got.learner_updates, got.published_unix) == (4, 400, 12.5)
    assert set(got.tensors) == set(weights)
    for name, value in weights.items():
        np.testing.assert_array_equal(got.tensors[name], value)
        assert got.tensors[name].dtype == value.dtype


def test_committed_generated_code_matches_the_proto(tmp_path):
    pytest.importorskip("grpc_tools")
    from pathlib import Path

    from robot_rl.training.remote.proto import generate

    assert generate.main(["--out", str(tmp_path)]) == 0
    for name in ("learning_pb2.py", "learning_pb2.pyi", "learning_pb2_grpc.py"):
        fresh = (tmp_path / generate.PROTO_DIR.relative_to(generate.ROOT) / name).read_text()
        committed = (Path(generate.__file__).parent / name).read_text()
        assert fresh == committed, f"{name} is stale: run python -m robot_rl.training.remote.proto.generate"
