"""Training batches prepared on background threads while the update runs.

Copying a batch out of replay (for two 128x128 cameras, obs and next obs: about 50 MB
at batch 256) and moving it to a GPU takes as long as the update itself. The
:class:`BatchPrefetcher` does that for the next batches on worker threads while the main
thread runs the current update: the frames are gathered straight into pinned host
memory and copied on a side CUDA stream with ``non_blocking=True``; the update's stream
waits for that copy on the GPU, not on the host. Images stay ``uint8`` until they are on
the device (the encoder converts them there).

Results do not depend on prefetching, bit for bit:

* Which slots a batch takes is drawn on the main thread, in order, from the learner's
  one sampling RNG (:func:`robot_rl.data.replay.plan_mixed`); workers only copy. So the
  batches are those the learner would have sampled one by one.
* Batches drawn ahead are *speculative*: they assume nothing is added to replay before
  they are used. Anything that changes replay or reads the RNG state (ingesting a step,
  adding demos, saving or loading a checkpoint, an explicit ``sample()``) first calls
  :meth:`BatchPrefetcher.discard`: it waits for the copies in flight, drops them and
  rewinds the RNG to where the first dropped batch was drawn. The next update then
  draws again, from replay as it is now, exactly as without prefetching. (A batch is
  therefore never stale: no batch is used after data arrived that it could have held.)
  The price is wasted copies when data arrives after every few updates, which is why
  :meth:`Learner.train` asks for no more batches ahead than the updates it has left.

Workers only read replay while the main thread runs updates, which never write it; a
worker that fails hands its exception to the update that wanted its batch. The threads
belong to a ``ThreadPoolExecutor``: they sit idle between batches, stop when the
prefetcher is closed or garbage-collected, and do not hold up interpreter exit.
"""

from __future__ import annotations

import collections
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Generic, Mapping, TypeVar

import numpy as np
import torch

from robot_rl.data.replay import Alloc

Plan = TypeVar("Plan")
#: A gathered batch in host memory: arrays, or dicts of arrays (obs / next_obs), keyed like replay's.
HostBatch = Mapping[str, Any]


class _Ready:
    """A batch on its device, with the CUDA event its copy recorded (None on the CPU)."""

    def __init__(self, batch: dict[str, Any], event: Any) -> None:
        self.batch, self.event = batch, event


class BatchPrefetcher(Generic[Plan]):
    """Draws plans on the caller's thread, gathers and moves them to ``device`` on ``depth`` workers.

    ``draw()`` picks a batch's rows (and is the only user of the RNG); ``gather(plan,
    alloc)`` copies them into arrays from ``alloc`` (for :func:`robot_rl.data.replay.gather_mixed`);
    ``rng_state()`` / ``set_rng_state(s)`` save and rewind the RNG ``draw`` uses.
    """

    def __init__(self, draw: Callable[[], Plan], gather: Callable[[Plan, Alloc], HostBatch],
                 rng_state: Callable[[], Any], set_rng_state: Callable[[Any], None],
                 device: torch.device, depth: int = 2) -> None:
        if depth < 1:
            raise ValueError(f"prefetch depth must be at least 1, got {depth}")
        self._draw, self._gather = draw, gather
        self._rng_state, self._set_rng_state = rng_state, set_rng_state
        self.device, self.depth = device, depth
        self.cuda = device.type == "cuda"
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(max_workers=depth,
                                                                   thread_name_prefix="robot-rl-prefetch")
        self._queue: collections.deque[tuple[Any, Future[_Ready]]] = collections.deque()
        self._streams = threading.local()  # one side CUDA stream per worker thread
        self.discarded = 0  # batches drawn ahead and dropped (a measure of wasted copies)

    @property
    def pending(self) -> int:
        """Batches drawn ahead and not yet handed out."""
        return len(self._queue)

    def next(self, ahead: int | None = None) -> dict[str, Any]:
        """The next batch, on the device; then keep up to ``ahead`` (default ``depth``) more in the works."""
        if self._pool is None:
            raise RuntimeError("the batch prefetcher is closed")
        if not self._queue:
            self._submit()
        _, future = self._queue.popleft()
        self._top_up(self.depth if ahead is None else min(ahead, self.depth))
        ready = future.result()
        if ready.event is not None:  # the update's stream waits on the GPU for the copy, not the host
            stream = torch.cuda.current_stream(self.device)
            stream.wait_event(ready.event)
            for tensor in _tensors(ready.batch):  # allocated on the side stream, used on this one
                tensor.record_stream(stream)
        return ready.batch

    def discard(self) -> None:
        """Drop every batch drawn ahead and rewind the RNG to before the first of them."""
        if not self._queue:
            return
        for _, future in self._queue:
            future.cancel()
        for _, future in self._queue:  # a copy in flight still reads replay: let it finish
            if not future.cancelled():
                future.exception()
        self._set_rng_state(self._queue[0][0])
        self.discarded += len(self._queue)
        self._queue.clear()

    def close(self) -> None:
        """Discard what is pending and stop the worker threads (idempotent)."""
        if self._pool is None:
            return
        self.discard()
        self._pool.shutdown(wait=True)
        self._pool = None

    # --- internals -------------------------------------------------------------------

    def _top_up(self, ahead: int) -> None:
        while len(self._queue) < ahead:
            self._submit()

    def _submit(self) -> None:
        assert self._pool is not None
        state = self._rng_state()
        plan = self._draw()
        self._queue.append((state, self._pool.submit(self._prepare, plan)))

    def _prepare(self, plan: Plan) -> _Ready:
        """Worker side: gather (into pinned memory on CUDA) and start the copy to the device."""
        if not self.cuda:
            return _Ready(_map(self._gather(plan, np.empty), torch.from_numpy), None)
        pinned = _PinnedAlloc()
        host = self._gather(plan, pinned)
        stream = getattr(self._streams, "stream", None)
        if stream is None:
            stream = self._streams.stream = torch.cuda.Stream(self.device)
        with torch.cuda.device(self.device), torch.cuda.stream(stream):
            batch = _map(host, lambda a: pinned.tensor(a).to(self.device, non_blocking=True))
            event = torch.cuda.Event()
            event.record(stream)
        return _Ready(batch, event)


class _PinnedAlloc:
    """Output arrays in page-locked memory; remembers the tensor behind each array.

    The copy must be issued from that tensor (not from ``torch.from_numpy`` of the
    array): PyTorch's pinned-memory cache then keeps the block until the copy is done.
    """

    def __init__(self) -> None:
        self._tensors: dict[int, torch.Tensor] = {}

    def __call__(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        tensor = torch.empty(shape, dtype=torch.from_numpy(np.empty(0, dtype=dtype)).dtype, pin_memory=True)
        self._tensors[tensor.data_ptr()] = tensor
        return tensor.numpy()

    def tensor(self, array: np.ndarray) -> torch.Tensor:
        """The pinned tensor behind ``array``, or a pinned copy of a small array allocated elsewhere."""
        own = self._tensors.get(array.ctypes.data)
        if own is not None and tuple(own.shape) == array.shape:
            return own
        return torch.from_numpy(np.ascontiguousarray(array)).pin_memory()


def _map(batch: HostBatch, fn: Callable[[Any], torch.Tensor]) -> dict[str, Any]:
    return {k: ({kk: fn(vv) for kk, vv in v.items()} if isinstance(v, Mapping) else fn(v)) for k, v in batch.items()}


def _tensors(batch: Mapping[str, Any]) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for value in batch.values():
        out.extend(value.values() if isinstance(value, Mapping) else [value])
    return out
