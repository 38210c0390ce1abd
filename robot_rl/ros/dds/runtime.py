"""Process-wide state of the DDS backend: ``init``/``shutdown``, and a single-threaded executor.

Mirrors rclpy's module functions: ``init(args)`` parses ``--ros-args`` and installs
SIGINT/SIGTERM handlers; ``spin(node)`` runs callbacks until shutdown; a signal shuts
the context down and ``spin`` then raises :class:`ExternalShutdownException`, which a
node's ``main`` catches next to ``KeyboardInterrupt``.

The executor waits on a DDS wait set of its nodes' readers and wakes early for the next
timer. Waits are sliced to at most 0.1 s, because a Python signal handler only runs
when the main thread is back in the interpreter.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from robot_rl.ros.dds.arguments import RosArguments, parse_ros_args

if TYPE_CHECKING:
    from robot_rl.ros.dds.node import Node
    from robot_rl.ros.dds.transport import Participant

_WAIT_SLICE_NS = 100_000_000


class ExternalShutdownException(Exception):
    """The context was shut down (Ctrl-C, SIGTERM, or ``shutdown()``) while spinning."""


class Context:
    def __init__(self) -> None:
        self._ok = False
        self.args = RosArguments()
        self._participant: Participant | None = None
        self._lock = threading.Lock()
        self._executors: list[Executor] = []
        self._on_shutdown: list[Callable[[], None]] = []

    def init(self, args: list[str] | None) -> None:
        with self._lock:
            if self._ok:
                raise RuntimeError("Context.init() must only be called once")
            self.args = parse_ros_args(list(sys.argv if args is None else args))
            self._ok = True

    def ok(self) -> bool:
        return self._ok

    def participant(self) -> "Participant":
        """The DDS participant, created with the first node (this is where cyclonedds loads)."""
        with self._lock:
            if not self._ok:
                raise RuntimeError("robot_rl.ros.init() must be called before creating a node")
            if self._participant is None:
                from robot_rl.ros.dds.config import settings_from_env
                from robot_rl.ros.dds.transport import Participant

                self._participant = Participant(settings_from_env())
            return self._participant

    def request_shutdown(self) -> None:
        """Stop spinning now; safe from a signal handler (no DDS calls but a wake-up)."""
        self._ok = False
        for executor in list(self._executors):
            executor.wake()

    def shutdown(self) -> None:
        with self._lock:
            self._ok = False
            callbacks, self._on_shutdown = self._on_shutdown, []
        for executor in list(self._executors):
            executor.wake()
        for callback in callbacks:
            callback()
        for executor in list(self._executors):
            executor._drop_waiter()
        with self._lock:
            participant, self._participant = self._participant, None
            self.args = RosArguments()
        if participant is not None:
            participant.close()

    def on_shutdown(self, callback: Callable[[], None]) -> None:
        self._on_shutdown.append(callback)


class Executor:
    """Runs the callbacks of its nodes' subscriptions and timers on the calling thread."""

    def __init__(self, context: Context | None = None) -> None:
        self.context = context or default_context
        self._nodes: list[Node] = []
        self._waiter: Any = None
        self._waiter_participant: Any = None
        self.context._executors.append(self)

    def add_node(self, node: "Node") -> bool:
        if node in self._nodes:
            return False
        self._nodes.append(node)
        node._executor = self
        self.wake()
        return True

    def remove_node(self, node: "Node") -> None:
        if node in self._nodes:
            self._nodes.remove(node)
            node._executor = None

    def get_nodes(self) -> list["Node"]:
        return list(self._nodes)

    def wake(self) -> None:
        if self._waiter is not None:
            try:
                self._waiter.wake()
            except Exception:  # the participant may be gone already; waking is best effort
                pass

    def spin(self) -> None:
        while self.context.ok():
            self.spin_once()

    def spin_once(self, timeout_sec: float | None = None) -> None:
        """Wait up to ``timeout_sec`` (None: until work) and run every ready callback."""
        deadline = None if timeout_sec is None else time.monotonic_ns() + int(max(timeout_sec, 0.0) * 1e9)
        while True:
            if not self.context.ok():
                raise ExternalShutdownException()
            nodes = [n for n in self._nodes if n._alive]
            if self._run_ready(nodes):
                return
            now = time.monotonic_ns()
            timers = [t._next_call_ns for n in nodes for t in n._timers if not t.is_canceled()]
            until = min(timers) if timers else now + _WAIT_SLICE_NS
            if deadline is not None:
                if now >= deadline:
                    return
                until = min(until, deadline)
            waiter = self._waiter_for(nodes)
            wait_ns = min(until - now, _WAIT_SLICE_NS)
            if waiter is None:
                time.sleep(max(wait_ns, 0) / 1e9)
            else:
                waiter.sync([s._reader for n in nodes for s in n._subscriptions])
                waiter.wait(wait_ns)

    def _waiter_for(self, nodes: list["Node"]):
        participant = self.context._participant
        if participant is None or not nodes:
            return None
        if self._waiter is None or self._waiter_participant is not participant:
            from robot_rl.ros.dds.transport import Waiter

            self._waiter, self._waiter_participant = Waiter(participant), participant
        return self._waiter

    def _drop_waiter(self) -> None:
        """Delete the wait set before its participant goes (called by Context.shutdown)."""
        waiter, self._waiter, self._waiter_participant = self._waiter, None, None
        if waiter is not None:
            waiter.close()

    def _run_ready(self, nodes: list["Node"]) -> bool:
        ran = False
        for node in nodes:
            for sub in list(node._subscriptions):
                ran = sub._dispatch() or ran
        now = time.monotonic_ns()
        for node in nodes:
            for timer in list(node._timers):
                ran = timer._fire_if_due(now) or ran
        return ran

    def shutdown(self) -> None:
        for node in list(self._nodes):
            self.remove_node(node)
        self._drop_waiter()
        if self in self.context._executors:
            self.context._executors.remove(self)


SingleThreadedExecutor = Executor

default_context = Context()
_global_executor: Executor | None = None
_saved_handlers: dict[int, Any] = {}


def init(*, args: list[str] | None = None, context: Context | None = None, domain_id: int | None = None,
         signal_handler_options: Any = None) -> Context:
    """rclpy.init: parse ``--ros-args`` (from ``sys.argv`` when ``args`` is None)."""
    ctx = context or default_context
    if domain_id is not None:
        import os

        os.environ["ROS_DOMAIN_ID"] = str(domain_id)
    ctx.init(args)
    if signal_handler_options is None or str(signal_handler_options).endswith(("ALL", "SIGINT", "SIGTERM")):
        _install_signal_handlers(ctx)
    from robot_rl.ros.dds.log import install_console_handler

    install_console_handler(_log_level(ctx.args.log_level))
    return ctx


def _log_level(name: str | None) -> int:
    import logging

    levels = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
              "warning": logging.WARNING, "error": logging.ERROR, "fatal": logging.CRITICAL}
    return levels.get((name or "info").lower(), logging.INFO)


def _install_signal_handlers(ctx: Context) -> None:
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: Any) -> None:
        ctx.request_shutdown()

    for sig in (signal.SIGINT, signal.SIGTERM):
        if sig not in _saved_handlers:
            _saved_handlers[sig] = signal.getsignal(sig)
        signal.signal(sig, handler)


def _uninstall_signal_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, previous in list(_saved_handlers.items()):
        signal.signal(sig, previous)
    _saved_handlers.clear()


def ok(*, context: Context | None = None) -> bool:
    return (context or default_context).ok()


def get_global_executor() -> Executor:
    global _global_executor
    if _global_executor is None or _global_executor not in default_context._executors:
        _global_executor = Executor(default_context)
    return _global_executor


def spin_once(node: "Node", *, executor: Executor | None = None, timeout_sec: float | None = None) -> None:
    executor = executor or get_global_executor()
    added = executor.add_node(node)
    try:
        executor.spin_once(timeout_sec=timeout_sec)
    finally:
        if added:
            executor.remove_node(node)


def spin(node: "Node", executor: Executor | None = None) -> None:
    executor = executor or get_global_executor()
    try:
        executor.add_node(node)
        while executor.context.ok():
            executor.spin_once()
    finally:
        executor.remove_node(node)


def shutdown(*, context: Context | None = None, uninstall_handlers: bool | None = None) -> None:
    ctx = context or default_context
    if not ctx.ok() and ctx._participant is None:
        raise RuntimeError("Context must be initialized before it can be shutdown")
    try_shutdown(context=ctx, uninstall_handlers=uninstall_handlers)


def try_shutdown(*, context: Context | None = None, uninstall_handlers: bool | None = None) -> None:
    ctx = context or default_context
    global _global_executor
    if ctx is default_context and _global_executor is not None:
        _global_executor.shutdown()
        _global_executor = None
    ctx.shutdown()
    if uninstall_handlers or (uninstall_handlers is None and ctx is default_context):
        _uninstall_signal_handlers()
