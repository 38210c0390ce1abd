"""A Robotiq 2F gripper (2F-85, 2F-140) on a UR's tool connector, through the Robotiq URCap's socket.

The Robotiq URCap on the UR serves a text protocol on port 63352: ``SET <VAR> <value> ...``
answered by ``ack``, and ``GET <VAR>`` answered by ``<VAR> <value>``, one request at a
time. The registers robot_rl uses: ``ACT`` (1 activates), ``GTO`` (1: go to the requested
position), ``POS`` (position request when set, the finger position when read; 0 open ..
255 closed), ``SPE`` and ``FOR`` (speed and grip force, 0..255), ``STA`` (0 reset, 1
activating, 3 active) and ``OBJ`` (0 moving, 1 or 2 stopped on an object, 3 at the
requested position).

:class:`RobotiqGripper` is a :class:`~robot_rl_drivers.robots.gripper.ThreadedGripper`:
it activates the gripper on start if it is not active, executes the newest opening
request on a worker thread and reads the finger position on another (``state_hz``).
Mapping (:class:`~robot_rl_drivers.robots.ur.settings.RobotiqSettings`): ``binary`` closes fully
below ``threshold`` (the fingers stop on an object with ``force``) and opens fully
otherwise; ``continuous`` goes to the position the fraction maps to between
``open_position`` and ``closed_position``. A URCap that does not answer at start is one
line (DeviceError); a request that fails later is logged and counted, not raised.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

from robot_rl.control.commands import log_rejection
from robot_rl.errors import DeviceError, one_line
from robot_rl_drivers.robots.gripper import ThreadedGripper
from robot_rl_drivers.robots.ur.settings import RobotiqSettings

log = logging.getLogger("robot_rl_drivers.robots.ur.robotiq")

ACTIVE = 3  # STA of an activated gripper
MAX_REPLY = 1024


class RobotiqError(Exception):
    """A request the URCap did not answer as the protocol says; the message says how."""


class RobotiqGripper(ThreadedGripper):
    def __init__(self, host: str, settings: RobotiqSettings) -> None:
        self.settings = settings
        self.where = f"Robotiq gripper at {host}:{settings.port}"
        self._sock_lock = threading.Lock()  # one request/answer exchange at a time
        self._unanswered = False
        try:
            self._sock = socket.create_connection((host, settings.port), timeout=settings.socket_timeout_s)
        except OSError as err:
            raise DeviceError(f"{self.where} does not answer ({one_line(err)}): is the Robotiq URCap installed "
                              "on the UR and the gripper on the tool connector?") from None
        try:
            self._activate()
            self.position = self.get("POS")
        except (OSError, RobotiqError) as err:
            self._sock.close()
            raise DeviceError(f"{self.where}: {one_line(err) if isinstance(err, OSError) else err} (check the "
                              "gripper in the Robotiq URCap on the teach pendant)") from None
        self.read_failures = 0
        self.object_detected = False
        self._start_threads("robotiq")

    # ------------------------------------------------------------------ protocol

    def _exchange(self, request: str) -> str:
        with self._sock_lock:
            if self._unanswered:  # a late answer to a request that timed out must not answer this one
                self._drain()
            self._unanswered = True
            self._sock.sendall(request.encode("ascii") + b"\n")
            reply = self._sock.recv(MAX_REPLY)
            self._unanswered = False
        if not reply:
            raise RobotiqError(f"the URCap closed the connection (after {request!r})")
        try:
            return reply.decode("ascii").strip()
        except UnicodeDecodeError:
            raise RobotiqError(f"unreadable answer {reply[:40]!r} to {request!r}") from None

    def _drain(self) -> None:
        self._sock.setblocking(False)
        try:
            while self._sock.recv(MAX_REPLY):
                pass
        except (BlockingIOError, OSError):
            pass
        finally:
            self._sock.settimeout(self.settings.socket_timeout_s)

    def set(self, **registers: int) -> None:
        """``SET NAME value ...``; RobotiqError unless the URCap answers ``ack``."""
        request = "SET " + " ".join(f"{name} {int(value)}" for name, value in registers.items())
        reply = self._exchange(request)
        if reply != "ack":
            raise RobotiqError(f"{request!r} was answered {reply[:40]!r}, not 'ack'")

    def get(self, name: str) -> int:
        """``GET NAME``: the register's value; RobotiqError unless the answer is ``NAME <int>``."""
        reply = self._exchange(f"GET {name}")
        parts = reply.split()
        if len(parts) != 2 or parts[0] != name:
            raise RobotiqError(f"'GET {name}' was answered {reply[:40]!r}")
        try:
            value = int(parts[1])
        except ValueError:
            raise RobotiqError(f"'GET {name}' was answered {reply[:40]!r}") from None
        if not 0 <= value <= 255:
            raise RobotiqError(f"'GET {name}' was answered {value}, outside 0..255")
        return value

    def _activate(self) -> None:
        if self.get("STA") == ACTIVE:
            return
        self.set(ACT=0)  # clears a fault, if any
        self.set(ACT=1)
        deadline = time.monotonic() + self.settings.activation_timeout_s
        status = self.get("STA")
        while status != ACTIVE:
            if time.monotonic() > deadline:
                raise RobotiqError(f"did not activate within {self.settings.activation_timeout_s:g} s (STA {status})")
            time.sleep(0.05)
            status = self.get("STA")
        log.info("%s: activated", self.where)

    # ------------------------------------------------------------------ Gripper

    def register_of(self, fraction: float) -> int:
        """The position register an opening fraction maps to (1 open .. 0 closed)."""
        s = self.settings
        return int(round(s.closed_position - fraction * (s.closed_position - s.open_position)))

    @property
    def fraction(self) -> float:
        s = self.settings
        return min(1.0, max(0.0, (s.closed_position - self.position) / (s.closed_position - s.open_position)))

    def _execute(self, fraction: float) -> None:
        s = self.settings
        try:
            self.set(POS=self.register_of(fraction), SPE=s.speed, FOR=s.force, GTO=1)
            self.commands += 1
        except (OSError, RobotiqError) as err:
            self.failures += 1
            log_rejection(log, "gripper request", self.failures, f"{self.where}: {err}", "the fingers stay")

    def _read(self) -> None:
        try:
            self.position = self.get("POS")
            self.object_detected = self.get("OBJ") in (1, 2)
        except (OSError, RobotiqError) as err:
            self.read_failures += 1
            log_rejection(log, "gripper reading", self.read_failures, f"{self.where}: {err}",
                          "the last position is reported")

    def _disconnect(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass
