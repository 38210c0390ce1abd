"""DDS readers and writers that look, on the wire, like rmw_cyclonedds_cpp's.

For a ROS topic ``/camera/wrist/color/image_raw`` of type ``sensor_msgs/msg/Image``:

* the DDS topic is ``rt/camera/wrist/color/image_raw`` and its type
  ``sensor_msgs::msg::dds_::Image_``, a keyless final struct (:mod:`..messages.idl`);
* every reader and writer carries ``typehash=RIHS01_<hex>;`` in USER_DATA;
* QoS is mapped as rmw_cyclonedds_cpp's ``create_readwrite_qos`` does it: history
  and depth, reliability (reliable with infinite blocking time), durability (transient
  local with a matching durability service), automatic liveliness, no autodispose,
  plus the XCDR1 data representation that ROS 2 uses.

Samples skip cyclonedds-python's serializer: :meth:`Writer.write` hands the bytes from
:func:`robot_rl.ros.messages.serialize` to ``dds_write`` (through the binding's
``ddspy_write``) and :meth:`Reader.take` returns the raw CDR bytes of each valid sample.
Cyclone still checks incoming samples against the type (``dds_stream_normalize``), so
structurally broken data never reaches us; the strict decoder catches the rest.

One process has one DDS participant per domain, shared by all its nodes, as rmw does.
Its USER_DATA says ``enclave=/;`` and it announces its nodes and their endpoints on
``ros_discovery_info`` (:mod:`robot_rl.ros.dds.graph`), as rmw_cyclonedds_cpp's does. An
entity's ``gid`` is its 16-byte DDS GUID, the bytes rmw puts in an ``rmw_gid_t``.
"""

from __future__ import annotations

import threading
from importlib import metadata

from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.core import DDSException, GuardCondition, InstanceState, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.qos import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from robot_rl.ros.dds.config import DiscoverySettings, check_cyclonedds_version, cyclone_config
from robot_rl.ros.dds.names import dds_topic_name
from robot_rl.ros.dds.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from robot_rl.ros.errors import BackendError
from robot_rl.ros.messages import Message, type_hash
from robot_rl.ros.messages.idl import idl_type

_ANY_SAMPLE = SampleState.Any | ViewState.Any | InstanceState.Any
_INFINITY = duration(infinite=True)
_ENCLAVE = b"enclave=/;"  # rmw_cyclonedds_cpp's participant USER_DATA with the default enclave


def dds_qos(profile: QoSProfile, msg_type: type[Message], *, for_writer: bool) -> Qos:
    """rmw_cyclonedds_cpp's mapping of a ROS QoS profile, with the type hash in USER_DATA."""
    policies = [Policy.WriterDataLifecycle(autodispose=False)] if for_writer else []
    depth = max(profile.depth, 1)
    if profile.history == HistoryPolicy.KEEP_ALL:
        history = Policy.History.KeepAll
    else:
        history = Policy.History.KeepLast(depth)
    policies.append(history)
    reliability = profile.reliability
    if reliability == ReliabilityPolicy.BEST_AVAILABLE:
        # rmw resolves this against the endpoints it has seen; a best-effort reader and
        # a reliable writer match every peer, which is what it amounts to in practice.
        reliability = ReliabilityPolicy.RELIABLE if for_writer else ReliabilityPolicy.BEST_EFFORT
    if reliability == ReliabilityPolicy.BEST_EFFORT:
        policies.append(Policy.Reliability.BestEffort)
    else:
        policies.append(Policy.Reliability.Reliable(max_blocking_time=_INFINITY))
    durability = profile.durability
    if durability == DurabilityPolicy.BEST_AVAILABLE:
        durability = DurabilityPolicy.TRANSIENT_LOCAL if for_writer else DurabilityPolicy.VOLATILE
    if durability == DurabilityPolicy.TRANSIENT_LOCAL:
        policies.append(Policy.Durability.TransientLocal)
        policies.append(Policy.DurabilityService(cleanup_delay=0, history=history, max_samples=-1,
                                                 max_instances=-1, max_samples_per_instance=-1))
    else:
        policies.append(Policy.Durability.Volatile)
    policies.append(Policy.Liveliness.Automatic(lease_duration=_INFINITY))
    policies.append(Policy.DataRepresentation(use_cdrv0_representation=True))
    policies.append(Policy.Userdata(data=f"typehash={type_hash(msg_type)};".encode()))
    return Qos(*policies)


class Participant:
    """The process's DDS participant in one domain, with its configuration applied."""

    def __init__(self, settings: DiscoverySettings) -> None:
        self.settings = settings
        try:
            check_cyclonedds_version(metadata.version("cyclonedds"))
        except metadata.PackageNotFoundError:  # a source build without package metadata
            pass
        try:
            self._domain = Domain(settings.domain_id, cyclone_config(settings))
            self.dds = DomainParticipant(settings.domain_id, qos=Qos(Policy.Userdata(data=_ENCLAVE)))
        except Exception as err:  # DDSException carries Cyclone's return code only
            raise BackendError(f"cannot start DDS in domain {settings.domain_id}: {err} "
                               "(check CYCLONEDDS_URI and the ROS_* discovery variables)") from None
        self.gid = self.dds.guid.bytes
        self._topics: dict[str, tuple[Topic, type[Message]]] = {}
        self._lock = threading.Lock()
        from robot_rl.ros.dds.graph import GraphAnnouncer

        self.graph = GraphAnnouncer(self)

    def topic(self, fq_topic: str, msg_type: type[Message], *, dds_name: str | None = None) -> Topic:
        """The DDS topic of a ROS topic (``rt/...``), or one named ``dds_name`` as is."""
        name = dds_name or dds_topic_name(fq_topic)
        with self._lock:
            found = self._topics.get(name)
            if found is not None:
                if found[1] is not msg_type:
                    raise TypeError(f"topic {fq_topic} is already used with {found[1]._type} in this "
                                    f"process, not {msg_type._type}")
                return found[0]
            topic = Topic(self.dds, name, idl_type(msg_type))
            self._topics[name] = (topic, msg_type)
            return topic

    def close(self) -> None:
        for entity in (self.dds, self._domain):
            entity.__del__()  # dds_delete now, rather than whenever Python collects it
        self._topics.clear()


class Writer:
    def __init__(self, participant: Participant, fq_topic: str, msg_type: type[Message],
                 profile: QoSProfile, *, dds_name: str | None = None) -> None:
        self.topic = fq_topic
        self._writer = DataWriter(participant.dds, participant.topic(fq_topic, msg_type, dds_name=dds_name),
                                  dds_qos(profile, msg_type, for_writer=True))
        self._ref = self._writer._ref
        self.gid = self._writer.guid.bytes

    def write(self, cdr: bytes | bytearray) -> None:
        """Write one encapsulated CDR sample; padded to 4 bytes as rmw_cyclonedds_cpp pads it."""
        pad = -len(cdr) % 4
        if pad and isinstance(cdr, bytearray):
            cdr += b"\x00" * pad  # in place: no copy of a large image
        elif pad:
            cdr = bytes(cdr) + b"\x00" * pad
        ret = ddspy_write(self._ref, cdr)
        if ret < 0:
            raise BackendError(f"DDS write on {self.topic} failed (return code {ret})")

    def matched_count(self) -> int:
        return len(self._writer.get_matched_subscriptions())

    def close(self) -> None:
        self._writer.__del__()


class Reader:
    def __init__(self, participant: Participant, fq_topic: str, msg_type: type[Message],
                 profile: QoSProfile) -> None:
        self.topic = fq_topic
        self._reader = DataReader(participant.dds, participant.topic(fq_topic, msg_type),
                                  dds_qos(profile, msg_type, for_writer=False))
        self._ref = self._reader._ref
        self.gid = self._reader.guid.bytes
        self.condition = ReadCondition(self._reader, _ANY_SAMPLE)

    def take(self, max_samples: int = 64) -> list[bytes]:
        """Raw CDR bytes of up to ``max_samples`` valid samples, oldest first."""
        ret = ddspy_take(self._ref, _ANY_SAMPLE, max_samples)
        if isinstance(ret, int):
            raise BackendError(f"DDS take on {self.topic} failed (return code {ret})")
        return [data for data, info in ret if info.valid_data]

    def matched_count(self) -> int:
        return len(self._reader.get_matched_publications())

    def close(self) -> None:
        self.condition.__del__()
        self._reader.__del__()


class Waiter:
    """A DDS wait set over reader conditions, plus a guard condition to wake it from any thread."""

    def __init__(self, participant: Participant) -> None:
        self._waitset = WaitSet(participant.dds)
        self._guard = GuardCondition(participant.dds)
        self._waitset.attach(self._guard)
        self._attached: dict[int, Reader] = {}

    def sync(self, readers: list[Reader]) -> None:
        """Wait on exactly these readers from now on."""
        wanted = {id(r): r for r in readers}
        for key, reader in wanted.items():
            if key not in self._attached:
                self._waitset.attach(reader.condition)
        for key in set(self._attached) - set(wanted):
            self._detach(self._attached[key])
        self._attached = wanted

    def _detach(self, reader: Reader) -> None:
        try:
            self._waitset.detach(reader.condition)
        except DDSException:  # the reader was deleted already, and Cyclone detached it then
            self._waitset.attached = [a for a in self._waitset.attached if a[0] is not reader.condition]

    def wait(self, timeout_ns: int) -> None:
        self._waitset.wait(max(timeout_ns, 0))
        self._guard.take()

    def wake(self) -> None:
        self._guard.set(True)

    def close(self) -> None:
        for reader in self._attached.values():
            self._detach(reader)
        self._attached = {}
        self._waitset.__del__()
        self._guard.__del__()
