"""Replay buffers that store every observation frame once.

A buffer is a ring of *slots*. Slot ``i`` holds one observation frame (every obs key,
images as ``uint8``) and, when it starts a transition, that transition's action, reward
and flags, plus ``next_slot[i]``: the slot of its next observation. Inside an episode
that is the slot where the episode's following step was written; after an episode's
last step it is an extra slot holding the final ``next_obs`` (the only ``next_obs`` ever
stored, as the :class:`~robot_rl.data.transition.Step` contract allows). An episode that
ends ``terminated`` needs no final frame at all: its last transition does not bootstrap,
so its ``next_obs`` is never used, and sampling returns the transition's own ``obs`` in
its place (only ``truncated`` endings store the final frame).

Steps of different episodes may arrive interleaved (several actors feeding one
learner): each ``(source, episode_id)`` keeps its own pending step, which becomes
sampleable (``valid``) once its successor's frame is in place. A step still waiting for
its successor, a final frame, or a step whose episode was cut off is never sampled.
Overwriting the oldest slot invalidates the transition in it and the one whose next
frame it held.

So a transition costs one frame, plus ``1/T`` of a frame for truncated episodes of
length ``T``: for two 128x128 RGB cameras 98.4 KB, or 99.4 KB with 100-step episodes
that time out (:meth:`ReplayBuffer.bytes_per_transition`).

The online and demo buffers are two instances; :func:`sample_mixed` draws a batch from
both (HIL-SERL/RLPD: half and half). Sampling is two steps, so that the second can run
on another thread without touching the random generator: :func:`plan_mixed` draws which
slots (the only use of ``rng``), :func:`gather_mixed` copies them out, optionally into
arrays the caller allocates (pinned memory for a GPU). Gathering only reads the buffer;
the caller must not add to it meanwhile (see :mod:`robot_rl.training.prefetch`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple

import gymnasium as gym
import numpy as np

from robot_rl.data.durable import durable_writer
from robot_rl.data.transition import Step

_FIELDS = {  # per-slot transition data besides the frame: name -> dtype
    "reward": np.float32,
    "terminated": np.bool_,
    "truncated": np.bool_,
    "grasp_penalty": np.float32,
    "intervened": np.bool_,
    "success": np.bool_,
    "episode_id": np.int64,
    "step": np.int64,
}
_NONE = -1

#: Allocates an output array ``(shape, dtype)`` for :func:`gather_mixed`; ``np.empty`` by default.
Alloc = Callable[[tuple[int, ...], np.dtype], np.ndarray]
#: Which slots of which buffer a batch takes, in batch order (what :func:`plan_mixed` returns).
Plan = list[tuple["ReplayBuffer", np.ndarray]]


class _Pending(NamedTuple):
    slot: int
    step: int
    frame_number: int  # frames_written when it was written: tells whether it was overwritten since


class ReplayBuffer:
    """A ring buffer of Steps, frames stored once; see the module docstring."""

    def __init__(self, obs_space: gym.spaces.Dict, action_dim: int, capacity: int) -> None:
        if capacity < 2:
            raise ValueError("replay capacity must be at least 2 frames")
        self.obs_space = obs_space
        self.capacity = int(capacity)
        self.action_dim = int(action_dim)
        self.frames = {k: np.zeros((capacity, *s.shape), dtype=s.dtype) for k, s in obs_space.spaces.items()}
        self.action = np.zeros((capacity, action_dim), dtype=np.float32)
        self.fields = {k: np.zeros(capacity, dtype=dt) for k, dt in _FIELDS.items()}
        self.valid = np.zeros(capacity, dtype=bool)
        self.next_slot = np.full(capacity, _NONE, dtype=np.int64)
        self.prev_slot = np.full(capacity, _NONE, dtype=np.int64)  # the slot whose next frame this is
        self.ptr = 0  # next slot to write
        self.frames_written = 0  # total, never wraps
        self.transitions_added = 0  # total complete transitions, never wraps
        self.pending: dict[tuple[int, int], _Pending] = {}  # (source, episode_id) -> step awaiting its successor
        self._valid_idx: np.ndarray | None = None

    # --- adding ----------------------------------------------------------------------

    def add(self, step: Step, source: int = 0) -> None:
        """Append one step of episode ``(source, step.episode_id)``; ``next_obs`` is read only when ``step.last``."""
        key = (source, step.episode_id)
        previous = self.pending.pop(key, None)
        continues = (previous is not None and previous.step + 1 == step.step
                     and self.frames_written - previous.frame_number < self.capacity)
        slot = self._write_frame(step.obs)
        self.action[slot] = step.action
        for name in _FIELDS:
            self.fields[name][slot] = getattr(step, name)
        if continues:
            self._link(previous.slot, slot)
        if step.last:
            if step.terminated:  # no bootstrap: the next frame is never looked at
                self._link(slot, slot)
            else:
                self._link(slot, self._write_frame(step.next_obs))
        else:
            self.pending[key] = _Pending(slot, step.step, self.frames_written - 1)
            if len(self.pending) > 4096:
                self._drop_stale_pending()

    def close_pending(self, step: Step, source: int = 0) -> bool:
        """Store only ``step.obs``, as the next frame of the pending step before it, if any.

        For a buffer that keeps part of an episode (the demo buffer keeps intervened
        steps): the last kept step gets its successor's observation as its next_obs.
        Returns whether a transition was completed.
        """
        previous = self.pending.pop((source, step.episode_id), None)
        if (previous is None or previous.step + 1 != step.step
                or self.frames_written - previous.frame_number >= self.capacity):
            return False
        self._link(previous.slot, self._write_frame(step.obs))
        return True

    def add_episode(self, steps: list[Step], source: int = 0) -> None:
        for step in steps:
            self.add(step, source)

    def _write_frame(self, obs: Mapping[str, np.ndarray]) -> int:
        slot = self.ptr
        self._forget(slot)
        for key, store in self.frames.items():
            store[slot] = obs[key]
        self.ptr = (slot + 1) % self.capacity
        self.frames_written += 1
        return slot

    def _forget(self, slot: int) -> None:
        """The oldest slot is about to be overwritten: drop its transition and the one leading into it."""
        before = self.prev_slot[slot]
        if before != _NONE and self.next_slot[before] == slot:
            self.valid[before] = False
            self.next_slot[before] = _NONE
        self.valid[slot] = False
        self.next_slot[slot] = self.prev_slot[slot] = _NONE
        self.action[slot] = 0.0
        for arr in self.fields.values():
            arr[slot] = 0
        self._valid_idx = None

    def _link(self, slot: int, next_slot: int) -> None:
        self.next_slot[slot] = next_slot
        if next_slot != slot:
            self.prev_slot[next_slot] = slot
        self.valid[slot] = True
        self.transitions_added += 1
        self._valid_idx = None

    def _drop_stale_pending(self) -> None:
        self.pending = {k: p for k, p in self.pending.items() if self.frames_written - p.frame_number < self.capacity}

    # --- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        """Number of sampleable transitions."""
        return int(self.valid_indices().size)

    def valid_indices(self) -> np.ndarray:
        if self._valid_idx is None:
            self._valid_idx = np.flatnonzero(self.valid)
        return self._valid_idx

    def sample(self, batch_size: int, rng: np.random.Generator, n_step: int = 1,
               discount: float = 1.0) -> dict[str, Any]:
        """``batch_size`` transitions drawn uniformly with replacement (numpy arrays)."""
        return self.gather(self.sample_slots(batch_size, rng), n_step, discount)

    def sample_slots(self, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        """The slots :meth:`sample` would gather: ``batch_size`` valid slots, uniform with replacement."""
        idx = self.valid_indices()
        if idx.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        return idx[rng.integers(0, idx.size, size=batch_size)]

    def gather(self, slots: np.ndarray, n_step: int = 1, discount: float = 1.0) -> dict[str, Any]:
        """The transitions starting at ``slots``; with ``n_step > 1``, n-step transitions.

        An n-step transition sums ``discount**k * reward`` over up to ``n_step`` steps of
        its episode, stopping early at the episode's end or where the next step has not
        arrived yet; ``next_obs`` is the frame after the last step taken, and ``steps``
        (per row) is how many steps were taken: the bootstrap factor is
        ``discount**steps``. ``discount`` must be the agent's.
        """
        batch, nxt = self.gather_fields(slots, n_step, discount)
        return {"obs": {k: v[slots] for k, v in self.frames.items()},
                "next_obs": {k: v[nxt] for k, v in self.frames.items()}, **batch}

    def gather_fields(self, slots: np.ndarray, n_step: int = 1,
                      discount: float = 1.0) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """:meth:`gather` without the frames: the per-row arrays, and the slots of each row's next frame."""
        f = self.fields
        reward = f["reward"][slots].astype(np.float32)
        penalty = f["grasp_penalty"][slots].astype(np.float32)
        terminated = f["terminated"][slots].copy()
        truncated = f["truncated"][slots].copy()
        ended = terminated | truncated
        nxt = self.next_slot[slots].copy()
        steps = np.ones(len(slots), dtype=np.int64)
        for _ in range(1, n_step):
            go = ~ended & self.valid[nxt]  # the next frame starts a complete transition of this episode
            if not go.any():
                break
            at = nxt[go]
            scale = discount ** steps[go]
            reward[go] += scale * f["reward"][at]
            penalty[go] += scale * f["grasp_penalty"][at]
            terminated[go] = f["terminated"][at]
            truncated[go] = f["truncated"][at]
            ended[go] = terminated[go] | truncated[go]
            nxt[go] = self.next_slot[at]
            steps[go] += 1
            ended |= ~go
        return {
            "action": self.action[slots],
            "reward": reward,
            "terminated": terminated.astype(np.float32),
            "truncated": truncated.astype(np.float32),
            "grasp_penalty": penalty,
            "steps": steps.astype(np.float32),
            "intervened": f["intervened"][slots],
        }, nxt

    def bytes_per_slot(self) -> int:
        frame = sum(v.itemsize * int(np.prod(v.shape[1:])) for v in self.frames.values())
        other = (self.action.itemsize * self.action_dim + sum(v.itemsize for v in self.fields.values())
                 + 1 + self.next_slot.itemsize + self.prev_slot.itemsize)
        return frame + other

    def bytes_per_transition(self, episode_length: float | None = None) -> float:
        """Bytes one transition costs, counting the final frames episodes add.

        With ``episode_length`` the figure is for episodes of that length that all time
        out (the worst case: each stores a final frame); otherwise it is measured from
        what this buffer holds.
        """
        if episode_length is not None:
            return self.bytes_per_slot() * (1.0 + 1.0 / episode_length)
        if self.transitions_added == 0:
            return float(self.bytes_per_slot())
        return self.bytes_per_slot() * self.frames_written / self.transitions_added

    # --- persistence -----------------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to rebuild the buffer exactly (only the filled slots' data)."""
        n = min(self.frames_written, self.capacity)
        state = {f"frames/{k}": v[:n] for k, v in self.frames.items()}
        state.update({f"fields/{k}": v[:n] for k, v in self.fields.items()})
        pending = np.array([[src, ep, p.slot, p.step, p.frame_number] for (src, ep), p in self.pending.items()],
                           dtype=np.int64).reshape(-1, 5)
        state.update(action=self.action[:n], valid=self.valid[:n], next_slot=self.next_slot[:n],
                     prev_slot=self.prev_slot[:n], pending=pending,
                     counters=np.array([self.capacity, self.ptr, self.frames_written, self.transitions_added],
                                       dtype=np.int64))
        return state

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        capacity, ptr, frames_written, transitions_added = (int(x) for x in state["counters"])
        if capacity != self.capacity:
            raise ValueError(f"saved replay has capacity {capacity}, this buffer {self.capacity}")
        n = min(frames_written, capacity)
        for k, v in self.frames.items():
            saved = state[f"frames/{k}"]
            if saved.shape[1:] != v.shape[1:] or saved.dtype != v.dtype:
                raise ValueError(f"saved replay key '{k}' is {saved.dtype}{saved.shape[1:]}, "
                                 f"this buffer stores {v.dtype}{v.shape[1:]}")
            v[:n] = saved
        for k, v in self.fields.items():
            v[:n] = state[f"fields/{k}"]
        self.action[:n] = state["action"]
        for name in ("valid", "next_slot", "prev_slot"):
            arr = getattr(self, name)
            arr[:] = False if name == "valid" else _NONE
            arr[:n] = state[name]
        self.ptr, self.frames_written, self.transitions_added = ptr, frames_written, transitions_added
        self.pending = {(int(src), int(ep)): _Pending(int(slot), int(step), int(num))
                        for src, ep, slot, step, num in state["pending"]}
        self._valid_idx = None

    def save(self, path: str | Path) -> None:
        """Write the buffer to ``path`` (an ``.npz``) through the one durable write."""
        with durable_writer(path) as f:
            np.savez(f, **self.state_dict())

    def load(self, path: str | Path) -> None:
        with np.load(path) as data:
            self.load_state_dict({k: data[k] for k in data.files})


def sample_mixed(online: ReplayBuffer, demo: ReplayBuffer | None, batch_size: int, demo_fraction: float,
                 rng: np.random.Generator, n_step: int = 1, discount: float = 1.0) -> dict[str, Any]:
    """``demo_fraction`` of the batch from ``demo``, the rest from ``online``.

    An empty buffer gives its share to the other one, so training can start with demos
    only or with no demos at all.
    """
    return gather_mixed(plan_mixed(online, demo, batch_size, demo_fraction, rng), n_step, discount)


def plan_mixed(online: ReplayBuffer, demo: ReplayBuffer | None, batch_size: int, demo_fraction: float,
               rng: np.random.Generator) -> Plan:
    """The slots :func:`sample_mixed` takes (online first, then demo): all it draws from ``rng``."""
    n_demo = int(round(batch_size * demo_fraction)) if demo is not None and len(demo) else 0
    if len(online) == 0:
        n_demo = batch_size
    n_online = batch_size - n_demo
    plan: Plan = []
    if n_online:
        plan.append((online, online.sample_slots(n_online, rng)))
    if n_demo:
        plan.append((demo, demo.sample_slots(n_demo, rng)))  # type: ignore[arg-type, union-attr]
    return plan


def gather_mixed(plan: Plan, n_step: int = 1, discount: float = 1.0, alloc: Alloc | None = None) -> dict[str, Any]:
    """The batch ``plan`` names, rows in plan order.

    Frames (the bulk of an image batch) are copied once, straight into arrays from
    ``alloc`` when given (e.g. pinned host memory, so a GPU copy can be asynchronous);
    the small per-row arrays are concatenated as usual.
    """
    if alloc is None and len(plan) == 1:
        buffer, slots = plan[0]
        return buffer.gather(slots, n_step, discount)
    alloc = alloc or np.empty
    parts, nexts = zip(*(buffer.gather_fields(slots, n_step, discount) for buffer, slots in plan))
    out = concat_batches(list(parts)) if len(parts) > 1 else dict(parts[0])
    rows = sum(len(slots) for _, slots in plan)
    for name, which in (("obs", [slots for _, slots in plan]), ("next_obs", list(nexts))):
        frames = {}
        for key, store in plan[0][0].frames.items():
            dest = alloc((rows, *store.shape[1:]), store.dtype)
            start = 0
            for (buffer, _), idx in zip(plan, which):
                # mode="clip": slots are valid already, and "raise" would copy through a temporary
                np.take(buffer.frames[key], idx, axis=0, out=dest[start:start + len(idx)], mode="clip")
                start += len(idx)
            frames[key] = dest
        out[name] = frames
    return out


def concat_batches(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in parts[0].items():
        if isinstance(value, dict):
            out[key] = {k: np.concatenate([p[key][k] for p in parts]) for k in value}
        else:
            out[key] = np.concatenate([p[key] for p in parts])
    return out
