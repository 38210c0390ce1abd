"""``Node``, ``Publisher``, ``Subscription`` and ``Timer`` with rclpy's interface, over DDS.

Only what robot_rl's nodes need, with rclpy's names, signatures and rules: topics,
timers, the node's clock (simulated time from ``/clock`` with ``use_sim_time``, see
:mod:`robot_rl.ros.dds.clock`), a logger, and parameters fed from ``--ros-args``. There
are no services, actions or parameter services; ``set_parameters`` works locally.

Importing this module does not import cyclonedds; the first node created in a process
starts the DDS participant (see :meth:`robot_rl.ros.dds.runtime.Context.participant`).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from robot_rl.ros.dds.clock import Clock, ClockType, Time
from robot_rl.ros.dds.log import Logger
from robot_rl.ros.dds.names import normalize_namespace, resolve_topic_name, validate_node_name
from robot_rl.ros.dds.parameters import Parameter, ParameterDescriptor, ParameterTable
from robot_rl.ros.dds.qos import QoSProfile, ReliabilityPolicy, as_profile
from robot_rl.ros.dds.runtime import Context, Executor, default_context
from robot_rl.ros.errors import MessageError
from robot_rl.ros.messages import Message, deserialize, serialize
from robot_rl.ros.status import NodeStatusMixin


def _check_msg_type(msg_type: Any) -> type[Message]:
    if not (isinstance(msg_type, type) and issubclass(msg_type, Message)):
        raise TypeError(f"{msg_type!r} is not a message class of the DDS backend; take message "
                        "classes from robot_rl.ros.msgs")
    return msg_type


CLOCK_TOPIC = "/clock"  # rclpy's TimeSource subscribes to this absolute name


class Publisher:
    def __init__(self, node: "Node", msg_type: type[Message], topic: str, qos_profile: QoSProfile) -> None:
        from robot_rl.ros.dds.transport import Writer

        self.msg_type, self.topic, self.qos_profile = msg_type, topic, qos_profile
        self._writer = Writer(node.context.participant(), topic, msg_type, qos_profile)

    @property
    def topic_name(self) -> str:
        return self.topic

    def publish(self, msg: Message | bytes) -> None:
        """Publish a message, or bytes already serialized as encapsulated CDR (like rclpy)."""
        if isinstance(msg, (bytes, bytearray, memoryview)):
            self._writer.write(bytes(msg))
            return
        if not isinstance(msg, self.msg_type):
            raise TypeError(f"Expected {self.msg_type._type}, got {type(msg).__name__}")
        self._writer.write(serialize(msg))

    def get_subscription_count(self) -> int:
        return self._writer.matched_count()

    def destroy(self) -> None:
        self._writer.close()


class Subscription:
    def __init__(self, node: "Node", msg_type: type[Message], topic: str, callback: Callable[[Any], None],
                 qos_profile: QoSProfile, raw: bool) -> None:
        from robot_rl.ros.dds.transport import Reader

        self.msg_type, self.topic, self.qos_profile, self.raw = msg_type, topic, qos_profile, raw
        self.callback = callback
        self._node = node
        self._reader = Reader(node.context.participant(), topic, msg_type, qos_profile)
        self._batch = max(1, min(qos_profile.depth or 64, 64))

    @property
    def topic_name(self) -> str:
        return self.topic

    def get_publisher_count(self) -> int:
        return self._reader.matched_count()

    def _dispatch(self) -> bool:
        """Run the callback on what has arrived; an undecodable sample is dropped and counted."""
        samples = self._reader.take(self._batch)
        for data in samples:
            if self.raw:
                self.callback(data)
                continue
            try:
                msg = deserialize(data, self.msg_type)
            except MessageError as err:
                self._node._drop_message(self.topic, str(err))
                continue
            self.callback(msg)
        return bool(samples)

    def destroy(self) -> None:
        self._reader.close()


class Timer:
    """Calls back every ``timer_period_ns``; missed periods are skipped, not queued (as rcl)."""

    def __init__(self, callback: Callable[[], Any], period_ns: int, autostart: bool = True) -> None:
        if period_ns <= 0:
            raise ValueError("timer period must be positive")
        self.callback, self.timer_period_ns = callback, period_ns
        self._canceled = not autostart
        self._next_call_ns = time.monotonic_ns() + period_ns

    def cancel(self) -> None:
        self._canceled = True

    def is_canceled(self) -> bool:
        return self._canceled

    def reset(self) -> None:
        self._canceled = False
        self._next_call_ns = time.monotonic_ns() + self.timer_period_ns

    def is_ready(self) -> bool:
        return not self._canceled and time.monotonic_ns() >= self._next_call_ns

    def time_until_next_call(self) -> int | None:
        return None if self._canceled else max(self._next_call_ns - time.monotonic_ns(), 0)

    def _fire_if_due(self, now: int) -> bool:
        if self._canceled or now < self._next_call_ns:
            return False
        self._next_call_ns += self.timer_period_ns
        if self._next_call_ns <= now:  # fell behind: realign to the period grid
            self._next_call_ns = now + self.timer_period_ns - (now - self._next_call_ns) % self.timer_period_ns
        self.callback()
        return True

    def destroy(self) -> None:
        self._canceled = True


class Node(NodeStatusMixin):
    """An rclpy-shaped node on the DDS backend; see the module docstring."""

    _backend_name = "dds"

    def __init__(self, node_name: str, *, context: Context | None = None, cli_args: list[str] | None = None,
                 namespace: str | None = None, use_global_arguments: bool = True,
                 parameter_overrides: list[Parameter] | None = None, allow_undeclared_parameters: bool = False,
                 automatically_declare_parameters_from_overrides: bool = False, **_rclpy_only: Any) -> None:
        self.context = context or default_context
        if not self.context.ok():
            raise RuntimeError("robot_rl.ros.init() must be called before creating a node")
        from robot_rl.ros.dds.arguments import RosArguments, parse_ros_args

        global_args = self.context.args if use_global_arguments else RosArguments()
        local_args = parse_ros_args(list(cli_args)) if cli_args else RosArguments()
        self._name = validate_node_name(local_args.node_name or global_args.node_name or node_name)
        self._namespace = normalize_namespace(local_args.namespace or global_args.namespace or namespace)
        self._remaps = [(n, f, t) for n, f, t in global_args.remaps + local_args.remaps if n in (None, self._name)]
        overrides = global_args.parameter_overrides(self.get_fully_qualified_name())
        overrides.update(local_args.parameter_overrides(self.get_fully_qualified_name()))
        overrides.update({p.name: p.value for p in parameter_overrides or []})
        self._parameters = ParameterTable(self._name, overrides)
        self._allow_undeclared = allow_undeclared_parameters
        self._logger = Logger(self._name)
        self._clock = Clock(clock_type=ClockType.ROS_TIME)
        self._clock_sub: Subscription | None = None
        self._publishers: list[Publisher] = []
        self._subscriptions: list[Subscription] = []
        self._timers: list[Timer] = []
        self._executor: Executor | None = None
        self._alive = True
        self._init_status()
        self.declare_parameter("use_sim_time", False)
        if automatically_declare_parameters_from_overrides:
            for name in overrides:
                if not self.has_parameter(name):
                    self.declare_parameter(name, overrides[name])
        self.context.participant()  # start DDS now, so a bad DDS setup fails at construction
        self._graph_changed()  # announce the node on ros_discovery_info (robot_rl.ros.dds.graph)
        self._use_sim_time(self.get_parameter("use_sim_time").value)

    # -- identity, clock, logging --------------------------------------------------------

    def get_name(self) -> str:
        return self._name

    def get_namespace(self) -> str:
        return self._namespace

    def get_fully_qualified_name(self) -> str:
        return self._namespace.rstrip("/") + "/" + self._name

    def get_clock(self) -> Clock:
        """ROS time: the system clock, or ``/clock`` while ``use_sim_time`` is true (see :mod:`.clock`)."""
        return self._clock

    def _use_sim_time(self, enabled: bool) -> None:
        """Follow ``/clock`` (rclpy's TimeSource: best-effort keep-last 1 on ``/clock``, remaps applied)."""
        if enabled and self._clock_sub is None:
            from robot_rl.ros.messages import Clock as ClockMsg

            self._clock_sub = self.create_subscription(
                ClockMsg, CLOCK_TOPIC, self._on_clock, QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        elif not enabled and self._clock_sub is not None:
            self.destroy_subscription(self._clock_sub)
            self._clock_sub = None
        self._clock._set_ros_time_is_active(enabled)

    def _on_clock(self, msg: Any) -> None:
        nanoseconds = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec
        if nanoseconds < 0:
            raise MessageError(f"/clock time {msg.clock.sec} s {msg.clock.nanosec} ns is before 0")
        self._clock.set_ros_time_override(Time(nanoseconds=nanoseconds))

    def get_logger(self) -> Logger:
        return self._logger

    @property
    def publishers(self) -> list[Publisher]:
        return list(self._publishers)

    @property
    def subscriptions(self) -> list[Subscription]:
        return list(self._subscriptions)

    @property
    def timers(self) -> list[Timer]:
        return list(self._timers)

    # -- topics and timers ---------------------------------------------------------------

    def resolve_topic_name(self, topic: str, *, only_expand: bool = False) -> str:
        resolved = resolve_topic_name(topic, self._name, self._namespace)
        if only_expand:
            return resolved
        for _, frm, to in self._remaps:
            if resolve_topic_name(frm, self._name, self._namespace) == resolved:
                return resolve_topic_name(to, self._name, self._namespace)
        return resolved

    def create_publisher(self, msg_type: type[Message], topic: str, qos_profile: QoSProfile | int,
                         **_rclpy_only: Any) -> Publisher:
        pub = Publisher(self, _check_msg_type(msg_type), self.resolve_topic_name(topic), as_profile(qos_profile))
        self._publishers.append(pub)
        self._graph_changed()
        return pub

    def create_subscription(self, msg_type: type[Message], topic: str, callback: Callable[[Any], None],
                            qos_profile: QoSProfile | int, *, raw: bool = False, **_rclpy_only: Any) -> Subscription:
        resolved = self.resolve_topic_name(topic)
        sub = Subscription(self, _check_msg_type(msg_type), resolved, self._guard_callback(resolved, callback),
                           as_profile(qos_profile), raw)
        self._subscriptions.append(sub)
        self._graph_changed()
        if self._executor is not None:
            self._executor.wake()
        return sub

    def create_timer(self, timer_period_sec: float, callback: Callable[[], Any], callback_group: Any = None,
                     clock: Any = None, autostart: bool = True) -> Timer:
        timer = Timer(callback, int(float(timer_period_sec) * 1e9), autostart)
        self._timers.append(timer)
        if self._executor is not None:
            self._executor.wake()
        return timer

    def destroy_publisher(self, publisher: Publisher) -> bool:
        if publisher not in self._publishers:
            return False
        self._publishers.remove(publisher)
        publisher.destroy()
        self._graph_changed()
        return True

    def destroy_subscription(self, subscription: Subscription) -> bool:
        if subscription not in self._subscriptions:
            return False
        self._subscriptions.remove(subscription)
        subscription.destroy()
        self._graph_changed()
        return True

    def destroy_timer(self, timer: Timer) -> bool:
        if timer not in self._timers:
            return False
        self._timers.remove(timer)
        timer.destroy()
        return True

    def destroy_node(self) -> None:
        """Delete this node's readers and writers (a no-op for those gone with the context)."""
        if not self._alive:
            return
        self._alive = False
        if self._executor is not None:
            self._executor.remove_node(self)
        participant = self.context._participant
        if participant is not None:
            for sub in self._subscriptions:
                sub.destroy()
            for pub in self._publishers:
                pub.destroy()
            participant.graph.node_removed(id(self))
        self._subscriptions, self._publishers, self._timers = [], [], []

    def _graph_changed(self) -> None:
        """Publish this node's name and endpoint gids again, as rmw does on every change."""
        participant = self.context._participant
        if participant is not None and self._alive:
            participant.graph.node_changed(id(self), self._namespace, self._name,
                                           [s._reader.gid for s in self._subscriptions],
                                           [p._writer.gid for p in self._publishers])

    # -- parameters ----------------------------------------------------------------------

    def declare_parameter(self, name: str, value: Any = None, descriptor: ParameterDescriptor | None = None,
                          ignore_override: bool = False) -> Parameter:
        return self._parameters.declare(name, value, descriptor, ignore_override)

    def declare_parameters(self, namespace: str, parameters: list[tuple], ignore_override: bool = False
                           ) -> list[Parameter]:
        out = []
        for entry in parameters:
            name = f"{namespace}.{entry[0]}" if namespace else entry[0]
            out.append(self.declare_parameter(name, *entry[1:3], ignore_override=ignore_override))
        return out

    def has_parameter(self, name: str) -> bool:
        return name in self._parameters.values

    def get_parameter(self, name: str) -> Parameter:
        if self._allow_undeclared and not self.has_parameter(name):
            return Parameter(name, Parameter.Type.NOT_SET, None)
        return self._parameters.get(name)

    def get_parameters(self, names: list[str]) -> list[Parameter]:
        return [self.get_parameter(n) for n in names]

    def get_parameter_or(self, name: str, alternative_value: Parameter | None = None) -> Parameter:
        if alternative_value is None:
            alternative_value = Parameter(name, Parameter.Type.NOT_SET)
        if not self.has_parameter(name):
            return alternative_value
        param = self._parameters.values[name]
        return alternative_value if param.type_ == Parameter.Type.NOT_SET else param

    def get_parameters_by_prefix(self, prefix: str) -> dict[str, Parameter]:
        dotted = prefix + "." if prefix else ""
        return {n[len(dotted):]: p for n, p in self._parameters.values.items() if n.startswith(dotted)}

    def set_parameters(self, parameter_list: list[Parameter]) -> list[Any]:
        from types import SimpleNamespace

        results = []
        for param in parameter_list:
            self._parameters.set(param)
            if param.name == "use_sim_time":
                self._use_sim_time(bool(param.value))
            results.append(SimpleNamespace(successful=True, reason=""))
        return results
