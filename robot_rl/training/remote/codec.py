"""numpy arrays, spaces, Steps and weights to and from the learning plane's messages.

Tensors travel as raw little-endian bytes in C order with a dtype name from
:data:`DTYPES` and a shape; decoding checks that the bytes fill exactly that shape and
refuses anything else with a :class:`PayloadError` naming the field, so a bad message
can never turn into a mis-shaped array or a pickle load. Nothing here imports grpc.

Transition batches are columnar: each observation key is one ``[n, *shape]`` tensor.
Inside an episode the next observation of step ``t`` is the observation of step
``t + 1`` (see :mod:`robot_rl.data.transition`), so only an episode's last step carries
its ``next_obs``. Decoded Steps that are not last have ``next_obs == {}``; the learner's
:class:`robot_rl.training.remote.assembler.EpisodeAssembler` fills it from the following step.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from robot_rl.data.transition import Step
from robot_rl.training.remote.errors import PayloadError
from robot_rl.training.remote.proto import learning_pb2 as pb
from robot_rl.training.remote.spaces import EnvSpaces, SpaceSpec

DTYPES = frozenset({"bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
                    "float16", "float32", "float64"})
MAX_NDIM = 8
# No message is larger than 2 GiB, so no tensor is either; a shape that claims more (even
# next to a zero dim, which makes its byte count 0) is malformed, not a numpy error.
MAX_TENSOR_BYTES = 2**31
# robot_rl's rewards are O(1); a finite reward this large is a corrupt value, not a signal.
MAX_ABS_REWARD = 1e6
# Actions may exceed their Box bounds by float rounding, never by more.
ACTION_TOLERANCE = 1e-5


def encode_tensor(array: np.ndarray, dtype: str | np.dtype | None = None) -> pb.Tensor:
    """One array as a Tensor message (cast to ``dtype`` first when given)."""
    arr = np.asarray(array, dtype=dtype)
    name = arr.dtype.name
    if name not in DTYPES:
        raise TypeError(f"dtype {name} cannot travel on the learning plane (allowed: {sorted(DTYPES)})")
    little = np.asarray(arr, dtype=arr.dtype.newbyteorder("<"), order="C")
    return pb.Tensor(dtype=name, shape=list(arr.shape), data=little.tobytes())


def decode_tensor(msg: pb.Tensor, where: str, *, finite: bool = False) -> np.ndarray:
    """The array a Tensor message holds, read-only; PayloadError names ``where`` if malformed."""
    if msg.dtype not in DTYPES:
        raise PayloadError(f"{where}: unknown dtype {msg.dtype!r}")
    dtype = np.dtype(msg.dtype).newbyteorder("<")
    shape = _shape(msg.shape, dtype.itemsize, where)
    data = msg.data
    expected = math.prod(shape) * dtype.itemsize
    if len(data) != expected:
        raise PayloadError(f"{where}: {len(data)} bytes do not fill {msg.dtype} {shape} "
                           f"({expected} bytes)")
    arr = np.frombuffer(data, dtype=dtype).reshape(shape)
    if dtype.kind == "b" and arr.size and arr.view(np.uint8).max() > 1:
        raise PayloadError(f"{where}: bool tensor holds bytes other than 0 and 1")
    if finite and dtype.kind == "f" and not np.isfinite(arr).all():
        raise PayloadError(f"{where}: holds NaN or infinite values", "non_finite")
    return arr.astype(arr.dtype.newbyteorder("="), copy=False)


def _shape(dims: Sequence[int], itemsize: int, where: str) -> tuple[int, ...]:
    """A tensor's shape, refused unless numpy can hold it and a message can carry it."""
    shape = tuple(int(d) for d in dims)
    if len(shape) > MAX_NDIM or any(d < 0 for d in shape):
        raise PayloadError(f"{where}: invalid shape {list(shape)[:MAX_NDIM + 1]}")
    if math.prod(d for d in shape if d) * itemsize > MAX_TENSOR_BYTES:
        raise PayloadError(f"{where}: shape {list(shape)} is larger than any message can carry")
    return shape


# ----------------------------------------------------------------------------- spaces

def encode_space(spec: SpaceSpec) -> pb.SpaceSpec:
    return pb.SpaceSpec(key=spec.key, dtype=spec.dtype, shape=list(spec.shape),
                        low=encode_tensor(spec.low, spec.dtype), high=encode_tensor(spec.high, spec.dtype))


def decode_space(msg: pb.SpaceSpec, where: str) -> SpaceSpec:
    if msg.dtype not in DTYPES:
        raise PayloadError(f"{where}: unknown dtype {msg.dtype!r}")
    shape = _shape(msg.shape, np.dtype(msg.dtype).itemsize, where)
    low = decode_tensor(msg.low, f"{where}.low")
    high = decode_tensor(msg.high, f"{where}.high")
    for name, bound in (("low", low), ("high", high)):
        if bound.shape != shape or bound.dtype.name != msg.dtype:
            raise PayloadError(f"{where}.{name}: {bound.dtype.name} {bound.shape} does not match "
                               f"the space's {msg.dtype} {shape}")
    return SpaceSpec(msg.key, msg.dtype, shape, low, high)


def encode_spaces(spaces: EnvSpaces) -> pb.Spaces:
    return pb.Spaces(observation=[encode_space(s) for _, s in sorted(spaces.observation.items())],
                     action=encode_space(spaces.action))


def decode_spaces(msg: pb.Spaces) -> EnvSpaces:
    obs = {}
    for i, entry in enumerate(msg.observation):
        if not entry.key or entry.key in obs:
            raise PayloadError(f"spaces.observation[{i}]: empty or repeated key {entry.key!r}")
        obs[entry.key] = decode_space(entry, f"spaces.observation['{entry.key}']")
    if not msg.HasField("action"):
        raise PayloadError("spaces.action is missing")
    return EnvSpaces(obs, decode_space(msg.action, "spaces.action"))


# ----------------------------------------------------------------------------- transitions

@dataclass
class ActorReport:
    """Cumulative counters an actor sends with each batch (see learning.proto)."""

    env_steps: int = 0
    episodes: int = 0
    dropped_steps: int = 0
    dropped_intervention_steps: int = 0
    queued_steps: int = 0
    weight_version: int = 0


@dataclass
class DecodedBatch:
    actor_id: str
    incarnation: str
    seq: int
    steps: list[Step]
    report: ActorReport = field(default_factory=ActorReport)


def encode_batch(steps: Sequence[Step], spaces: EnvSpaces, *, actor_id: str, incarnation: str,
                 seq: int, report: ActorReport | None = None) -> pb.TransitionBatch:
    """Steps (in order) as one columnar TransitionBatch, cast to the spaces' dtypes."""
    if not steps:
        raise ValueError("encode_batch needs at least one step")
    msg = pb.TransitionBatch(
        actor_id=actor_id, incarnation=incarnation, seq=seq,
        episode_id=[s.episode_id for s in steps], step=[s.step for s in steps],
        terminated=[bool(s.terminated) for s in steps], truncated=[bool(s.truncated) for s in steps],
        intervened=[bool(s.intervened) for s in steps], success=[bool(s.success) for s in steps],
        reward=[float(s.reward) for s in steps], grasp_penalty=[float(s.grasp_penalty) for s in steps],
        action=encode_tensor(np.stack([np.asarray(s.action) for s in steps]), spaces.action.dtype),
    )
    for key, spec in spaces.observation.items():
        msg.obs[key].CopyFrom(encode_tensor(np.stack([s.obs[key] for s in steps]), spec.dtype))
    for i, s in enumerate(steps):
        if s.last:
            final = msg.next_obs.add(index=i)
            for key, spec in spaces.observation.items():
                final.obs[key].CopyFrom(encode_tensor(s.next_obs[key], spec.dtype))
    if report is not None:
        msg.report.CopyFrom(pb.ActorReport(**vars(report)))
    return msg


def decode_batch(msg: pb.TransitionBatch, spaces: EnvSpaces, max_steps: int = 1 << 20) -> DecodedBatch:
    """Check a TransitionBatch against ``spaces`` and return its Steps.

    Raises PayloadError (naming the field) on any inconsistency: column lengths, keys,
    dtypes, shapes, byte counts, non-finite floats, rewards beyond ``MAX_ABS_REWARD``,
    actions outside the action space, missing or stray final observations.
    """
    n = len(msg.episode_id)
    if n == 0 or n > max_steps:
        raise PayloadError(f"batch holds {n} transitions (1..{max_steps} allowed)")
    for name in ("step", "terminated", "truncated", "intervened", "success", "reward", "grasp_penalty"):
        if len(getattr(msg, name)) != n:
            raise PayloadError(f"column '{name}' has {len(getattr(msg, name))} entries, episode_id has {n}")
    steps_idx = np.asarray(msg.step, dtype=np.int64)
    if (steps_idx < 0).any():
        raise PayloadError("column 'step' holds a negative step index")
    reward = np.asarray(msg.reward, dtype=np.float64)
    penalty = np.asarray(msg.grasp_penalty, dtype=np.float64)
    for name, column in (("reward", reward), ("grasp_penalty", penalty)):
        if not np.isfinite(column).all():
            raise PayloadError(f"column '{name}' holds NaN or infinite values", "non_finite")
        if (np.abs(column) > MAX_ABS_REWARD).any():
            raise PayloadError(f"column '{name}' holds values beyond +-{MAX_ABS_REWARD:g}", "out_of_space")
    action = _column(msg.action, "action", spaces.action, n)
    _check_bounds(action, spaces.action, "action")
    keys = set(msg.obs.keys())
    if keys != set(spaces.observation):
        extra, missing = sorted(keys - set(spaces.observation)), sorted(set(spaces.observation) - keys)
        raise PayloadError(f"obs keys differ from the registered spaces (extra {extra}, missing {missing})")
    obs = {k: _column(msg.obs[k], f"obs['{k}']", spec, n) for k, spec in spaces.observation.items()}
    last = [t or u for t, u in zip(msg.terminated, msg.truncated)]
    finals: dict[int, dict[str, np.ndarray]] = {}
    for j, final in enumerate(msg.next_obs):
        i = int(final.index)
        if i >= n or not last[i] or i in finals:
            raise PayloadError(f"next_obs[{j}] has index {i}, which is not a distinct episode end in the batch")
        if set(final.obs.keys()) != set(spaces.observation):
            raise PayloadError(f"next_obs[{j}] keys {sorted(final.obs.keys())} differ from the registered spaces")
        finals[i] = {k: _value(final.obs[k], f"next_obs[{j}].obs['{k}']", spec)
                     for k, spec in spaces.observation.items()}
    if len(finals) != sum(last):
        raise PayloadError(f"{sum(last)} transitions end an episode but {len(finals)} carry next_obs")
    steps = [
        Step(episode_id=int(msg.episode_id[i]), step=int(steps_idx[i]),
             obs={k: v[i] for k, v in obs.items()}, action=action[i], reward=float(reward[i]),
             terminated=bool(msg.terminated[i]), truncated=bool(msg.truncated[i]),
             next_obs=finals.get(i, {}), intervened=bool(msg.intervened[i]),
             success=bool(msg.success[i]), grasp_penalty=float(penalty[i]))
        for i in range(n)
    ]
    r = msg.report
    report = ActorReport(r.env_steps, r.episodes, r.dropped_steps, r.dropped_intervention_steps,
                         r.queued_steps, r.weight_version)
    return DecodedBatch(msg.actor_id, msg.incarnation, int(msg.seq), steps, report)


def _column(msg: pb.Tensor, where: str, spec: SpaceSpec, n: int) -> np.ndarray:
    arr = decode_tensor(msg, where, finite=True)
    if arr.dtype.name != spec.dtype or arr.shape != (n, *spec.shape):
        raise PayloadError(f"{where}: {arr.dtype.name} {arr.shape}, expected {spec.dtype} {(n, *spec.shape)}")
    return arr


def _check_bounds(values: np.ndarray, spec: SpaceSpec, where: str) -> None:
    """Refuse values outside the Box ``spec`` (beyond float rounding)."""
    low, high = spec.low.astype(np.float64), spec.high.astype(np.float64)
    tol_low = ACTION_TOLERANCE * np.maximum(1.0, np.abs(np.where(np.isfinite(low), low, 0.0)))
    tol_high = ACTION_TOLERANCE * np.maximum(1.0, np.abs(np.where(np.isfinite(high), high, 0.0)))
    v = values.astype(np.float64)
    outside = (v < low - tol_low) | (v > high + tol_high)
    if outside.any():
        row = int(np.argwhere(outside)[0][0]) if v.ndim > 1 else 0
        raise PayloadError(f"{where}[{row}] is outside the {where} space [{spec.low.min():g}, "
                           f"{spec.high.max():g}] (e.g. {v[outside].flat[0]:g})", "out_of_space")


def _value(msg: pb.Tensor, where: str, spec: SpaceSpec) -> np.ndarray:
    arr = decode_tensor(msg, where, finite=True)
    if arr.dtype.name != spec.dtype or arr.shape != spec.shape:
        raise PayloadError(f"{where}: {arr.dtype.name} {arr.shape}, expected {spec.dtype} {spec.shape}")
    return arr


# ----------------------------------------------------------------------------- weights

@dataclass(frozen=True)
class WeightVersion:
    """One complete set of policy weights, as an actor receives it."""

    version: int
    tensors: Mapping[str, np.ndarray]
    learner_updates: int = 0
    published_unix: float = 0.0
    received_unix: float = 0.0


def encode_weights(tensors: Mapping[str, np.ndarray], *, version: int, learner_updates: int = 0,
                   published_unix: float | None = None) -> pb.Weights:
    msg = pb.Weights(version=version, learner_updates=learner_updates,
                     published_unix=time.time() if published_unix is None else published_unix)
    for name, value in tensors.items():
        msg.tensors[name].CopyFrom(encode_tensor(value))
    return msg


def decode_weights(msg: pb.Weights) -> WeightVersion:
    """Decoded weights own writable copies (torch refuses to adopt read-only buffers)."""
    tensors = {name: decode_tensor(t, f"weights['{name}']", finite=True).copy() for name, t in msg.tensors.items()}
    return WeightVersion(int(msg.version), tensors, int(msg.learner_updates), float(msg.published_unix),
                         time.time())
