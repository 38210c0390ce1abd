"""Which DDS domain to join and how to discover peers, from the same variables ROS 2 reads.

* ``ROS_DOMAIN_ID`` (default 0) picks the DDS domain.
* ``ROS_AUTOMATIC_DISCOVERY_RANGE`` = ``LOCALHOST`` | ``SUBNET`` | ``OFF`` |
  ``SYSTEM_DEFAULT`` and ``ROS_STATIC_PEERS`` (``;``-separated) are applied the way
  rmw_cyclonedds_cpp (Jazzy) applies them, so a mixed graph of our nodes and rclpy nodes
  with the same settings finds itself. The deprecated ``ROS_LOCALHOST_ONLY=1`` means
  ``LOCALHOST``. **Unlike ROS 2, the default is LOCALHOST**: an unconfigured robot_rl
  process never sends discovery traffic off the machine. Set
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET`` on every process to span machines.
* ``ROBOT_RL_DDS_LOCALHOST=1`` is stricter still, for tests and CI: besides no
  multicast and localhost as the only peer, it binds DDS to the loopback interface, so
  no packet carries a non-loopback address. (Such a process cannot send to a peer that
  advertises only a LAN address, e.g. a ROS 2 node in plain LOCALHOST mode; use it
  among robot_rl processes.)
* ``CYCLONEDDS_URI`` is appended last, as rmw_cyclonedds_cpp does, so site settings win.

Late joiners. Cyclone DDS 11 (the PyPI wheel) treats the configured peers (``localhost``,
static peers, and in LOCALHOST mode its own address) as *initial locators*, and stops
announcing itself to those nobody answered after ``Discovery/InitialLocatorPruneDelay``
(30 s). A participant is thus found only by peers that start within 30 s of it, or that
announce themselves to it in a way it accepts: a Cyclone 11 participant bound to the LAN
interface drops participant announcements that arrive on the loopback interface, which
is where a ROS 2 (Cyclone 0.10) localhost peer sends them. So a ROS 2 node started later
than that never saw robot_rl's nodes, nor they it. Wherever peers are configured,
:func:`cyclone_config` sets the delay to ``inf``: we keep announcing ourselves to every
localhost port and static peer, and a late peer answers. That element exists from
Cyclone 11 on (0.10 refuses unknown elements), which is one reason the floor is
``cyclonedds>=11`` (:func:`check_cyclonedds_version`).

When all traffic stays on the host (LOCALHOST, no static peers), large fragments (62 kB, as the loopback MTU allows,
instead of Cyclone's 1344 B) cut the per-image packet count 46-fold; that is most of
what keeps 640x480 images under a few milliseconds across processes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from robot_rl.ros.errors import BackendError

RANGES = ("LOCALHOST", "SUBNET", "OFF", "SYSTEM_DEFAULT")
MIN_CYCLONEDDS = (11, 0)
_KEEP_ANNOUNCING = "<InitialLocatorPruneDelay>inf</InitialLocatorPruneDelay>"  # see the module docstring
_LOOPBACK_TUNING = "<MaxMessageSize>65500B</MaxMessageSize><FragmentSize>62000B</FragmentSize>"


@dataclass(frozen=True)
class DiscoverySettings:
    domain_id: int
    range: str  # one of RANGES
    static_peers: tuple[str, ...]
    loopback_only: bool  # ROBOT_RL_DDS_LOCALHOST: bind to 127.0.0.1 as well
    user_uri: str  # CYCLONEDDS_URI contents, appended verbatim


def settings_from_env(env: dict[str, str] | None = None) -> DiscoverySettings:
    """Read the discovery settings; a malformed value is one clear :class:`BackendError`."""
    env = dict(os.environ if env is None else env)
    raw_id = env.get("ROS_DOMAIN_ID", "").strip() or "0"
    try:
        domain_id = int(raw_id)
    except ValueError:
        raise BackendError(f"ROS_DOMAIN_ID={raw_id!r} is not an integer") from None
    if not 0 <= domain_id <= 232:
        raise BackendError(f"ROS_DOMAIN_ID={domain_id} is outside 0..232")
    loopback_only = env.get("ROBOT_RL_DDS_LOCALHOST", "").strip() in ("1", "true", "True", "yes")
    range_ = env.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "").strip().upper()
    if not range_:
        range_ = "LOCALHOST"  # ours; ROS 2's own default is SUBNET (see module docstring)
        if env.get("ROS_LOCALHOST_ONLY", "").strip() == "0":
            range_ = "SUBNET"
    if range_ not in RANGES:
        raise BackendError(f"ROS_AUTOMATIC_DISCOVERY_RANGE={range_!r} is not one of {', '.join(RANGES)}")
    if loopback_only:
        range_ = "LOCALHOST"
    peers = tuple(p.strip() for p in env.get("ROS_STATIC_PEERS", "").split(";") if p.strip())
    return DiscoverySettings(domain_id, range_, peers, loopback_only, env.get("CYCLONEDDS_URI", ""))


def cyclone_config(s: DiscoverySettings) -> str:
    """The configuration string for ``dds_create_domain`` (rmw_cyclonedds_cpp's, plus tuning)."""
    add_localhost = s.range == "LOCALHOST"
    add_static = s.range in ("LOCALHOST", "SUBNET")
    no_multicast = s.range in ("LOCALHOST", "OFF")
    general = ""
    if s.loopback_only:
        general += '<Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>'
    if no_multicast:
        general += "<AllowMulticast>false</AllowMulticast>"
    if s.range == "LOCALHOST" and not s.static_peers:  # every packet stays on this host
        general += _LOOPBACK_TUNING
    discovery = ""
    if s.range == "OFF":
        discovery = f"<ParticipantIndex>none</ParticipantIndex><Tag>ros_discovery_off_{os.getpid()}</Tag>"
    elif add_localhost or (add_static and s.static_peers) or no_multicast:
        discovery = "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>"
    peers = (["localhost"] if add_localhost else []) + (list(s.static_peers) if add_static else [])
    if peers:
        discovery += "<Peers>" + "".join(f"<Peer address={quoteattr(p)}/>" for p in peers) + "</Peers>"
        # With unicast peers, a ROS 2 (Cyclone 0.10) process that starts after us learns of
        # us only from our periodic participant announcement (SPDP): announce every second,
        # not every 30 s, so late-starting ROS 2 nodes find robot_rl's nodes at once.
        discovery += "<SPDPInterval>1s</SPDPInterval>"
        discovery += _KEEP_ANNOUNCING
    config = ""
    if general or discovery:
        config = "<CycloneDDS><Domain>"
        config += f"<General>{general}</General>" if general else ""
        config += f"<Discovery>{discovery}</Discovery>" if discovery else ""
        config += "</Domain></CycloneDDS>,"
    return config + s.user_uri


def check_cyclonedds_version(version: str) -> None:
    """Refuse a cyclonedds older than 11 in one line: its binding API and config differ from what we use.

    cyclonedds-python 0.10 takes samples without a state mask and its Cyclone refuses the
    ``InitialLocatorPruneDelay`` element; the project pins ``cyclonedds>=11``, so an older one
    is a stale install. A version string we cannot read is let through.
    """
    match = re.match(r"(\d+)\.(\d+)", version.strip())
    if match and (int(match.group(1)), int(match.group(2))) < MIN_CYCLONEDDS:
        raise BackendError(f"cyclonedds {version} is installed, but the DDS backend needs cyclonedds >= "
                           f"{MIN_CYCLONEDDS[0]} (pip install -U 'cyclonedds>={MIN_CYCLONEDDS[0]}')")
