"""A gamepad as an :class:`~robot_rl.interfaces.InputDevice`, through the Linux joystick API.

Why the joystick API (``/dev/input/js*``) and not evdev or SDL: it needs nothing but the
standard library (``os``, ``select``, ``struct``, ``fcntl``), the kernel's joydev driver
has already calibrated every axis to -32767 .. 32767 and numbers axes and buttons
densely from 0, and its nodes are readable by the logged-in user on common desktop
distributions without a udev rule. The library boundary is :class:`JoystickNodes`:
where the nodes are, their names, and opening one. Everything above it is ours:
finding the pad, decoding its events (:mod:`.js_events`), the mapping from axes and
buttons to a twist and actions (:class:`GamepadMapper`), deadband and gains
(:mod:`.commands`, the same code as the SpaceMouse's and the keyboard's). Tests hand in
a :class:`JoystickNodes` over a temporary directory with a FIFO per pad and run this
same code.

A background thread reads events as they come (a pad sends one per axis change, a few
hundred per second while both sticks move) and keeps the latest state, so ``read()``
never blocks, never lags the hand, and a button tapped between two reads still counts.

What is read must be a joystick node: a character device of the kernel's input major
(13) that answers joydev's ioctls, which returns whole ``js_event`` records only. A FIFO, a
relay's pty or socket, or any other byte stream can lose or gain bytes and misalign
every later record, so such a path is refused with one line unless
``intervention.gamepad.stream: true`` asks for it (tests' fake nodes ask through
:attr:`JoystickNodes.streams`). Either way every record is checked, and a stream that
goes out of step reads as a pad at rest until it is realigned (:mod:`.js_events`); the
decoder's ``resyncs`` and ``discarded`` bytes are :attr:`Gamepad.resyncs` and
:attr:`Gamepad.discarded_bytes`, and the first resync is logged as a warning.

Unplugging: the reader sees ``ENODEV`` (or end of file: the node is gone), records one
:class:`~robot_rl.errors.DeviceError` naming the pad and what to do, and ends quietly.
The next ``read()`` raises it once; later reads return a neutral command, so the caller
ends the intervention, logs one warning and keeps its data
(:class:`robot_rl.envs.inputs.FailSafeInput`), as for an unplugged SpaceMouse.
``close()`` works after an unplug.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import select
import stat
from dataclasses import dataclass
from typing import BinaryIO, Optional

import numpy as np

from robot_rl.config.input import MOTIONS, GamepadConfig, InterventionConfig
from robot_rl.errors import DeviceError
from robot_rl.interfaces import InputCommand

from .commands import AxisMap, CommandBuilder, apply_deadband
from .hid_reports import button_levels
from .js_events import EVENT_SIZE, JoystickState
from .reader_device import ReaderDevice

log = logging.getLogger(__name__)

# ioctl numbers of linux/joystick.h: _IOR('j', nr, size) = (2 << 30) | (size << 16) | ('j' << 8) | nr
JSIOCGAXES = 0x80016A11  # __u8: number of axes
JSIOCGBUTTONS = 0x80016A12  # __u8: number of buttons
NAME_LENGTH = 128
INPUT_MAJOR = 13  # the kernel's input subsystem: joydev's js* nodes (and evdev's event*)


def JSIOCGNAME(length: int) -> int:  # noqa: N802 - the kernel's name
    return (2 << 30) | (length << 16) | (0x6A << 8) | 0x13


#: Names of 3D mice, which have a js node too; discovery without a name skips them.
NOT_GAMEPADS = re.compile(r"3dconnexion|space ?(mouse|navigator|pilot|explorer|traveler|ball)", re.IGNORECASE)
REPLUG_HINT = ("the intervention ended and the policy (or the hold) has the arm; plug the pad back in and "
               "restart the session to take over again")
ACCESS_HINT = ("give your user read access: sudo usermod -aG input $USER and log in again, or a udev rule "
               "KERNEL==\"js[0-9]*\", MODE=\"0664\"")
READ_SIZE = EVENT_SIZE * 64  # joydev's per-reader queue holds 64 events
INITIAL_READS = 8  # reads of READ_SIZE at open, at most: a pad's whole state is a few dozen events


@dataclass(frozen=True)
class JoystickInfo:
    """What the kernel says about an opened joystick; ``None`` where it would not say."""

    name: Optional[str]
    axes: Optional[int]
    buttons: Optional[int]


class JoystickNodes:
    """The library boundary: where the joystick nodes are, their names, and opening one.

    Tests subclass it over a temporary directory (``tests/support/fake_gamepad.py``);
    their nodes are FIFOs, so they set :attr:`streams`.
    """

    #: Whether what :meth:`open` opens may be a byte stream rather than a joystick node (the
    #: same as ``intervention.gamepad.stream: true``): its records are checked and realigned.
    streams = False

    def __init__(self, dev_dir: str = "/dev/input", sys_dir: str = "/sys/class/input") -> None:
        self.dev_dir = dev_dir
        self.sys_dir = sys_dir

    def paths(self) -> list[str]:
        """The joystick nodes present, ``js0`` first."""
        try:
            names = os.listdir(self.dev_dir)
        except OSError:
            return []
        nodes = [n for n in names if re.fullmatch(r"js\d+", n)]
        return [os.path.join(self.dev_dir, n) for n in sorted(nodes, key=lambda n: int(n[2:]))]

    def name(self, path: str) -> Optional[str]:
        """The device name sysfs gives for the node (``/sys/class/input/js0/device/name``)."""
        try:
            with open(os.path.join(self.sys_dir, os.path.basename(path), "device", "name"), "rb") as f:
                return f.read(NAME_LENGTH * 2).decode(errors="replace").strip() or None
        except OSError:
            return None

    def open(self, path: str) -> BinaryIO:
        """The node opened for non-blocking reads (``read`` returns None when nothing is waiting)."""
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        return os.fdopen(fd, "rb", buffering=0)

    def query(self, file: BinaryIO) -> JoystickInfo:
        """Name, axis and button counts through joydev's ioctls; None for what fails (not a joydev node)."""
        def ioctl(request: int, size: int) -> Optional[bytes]:
            try:
                return fcntl.ioctl(file.fileno(), request, bytes(size))
            except (OSError, ValueError):
                return None

        raw_name = ioctl(JSIOCGNAME(NAME_LENGTH), NAME_LENGTH)
        axes, buttons = ioctl(JSIOCGAXES, 1), ioctl(JSIOCGBUTTONS, 1)
        name = raw_name.split(b"\0", 1)[0].decode(errors="replace").strip() if raw_name else None
        return JoystickInfo(name or None, axes[0] if axes else None, buttons[0] if buttons else None)


def _listing(nodes: JoystickNodes, paths: list[str]) -> str:
    shown = [f"{os.path.basename(p)} ({nodes.name(p) or 'unnamed'})" for p in paths[:8]]
    return ", ".join(shown) + (f", and {len(paths) - 8} more" if len(paths) > 8 else "")


def find_gamepad(nodes: JoystickNodes, cfg: GamepadConfig) -> str:
    """The node to open, or a DeviceError saying what was seen and what to do."""
    paths = nodes.paths()
    if cfg.path is not None:
        if os.path.exists(cfg.path):
            return cfg.path
        seen = f"the joystick nodes present: {_listing(nodes, paths)}" if paths else "no joystick node is present"
        raise DeviceError(f"no gamepad at {cfg.path} (intervention.gamepad.path): {seen}; plug it in or fix the path")
    if not paths:
        raise DeviceError(f"no gamepad found: {nodes.dev_dir} has no js* joystick nodes; plug one in, load the "
                          "joydev module (sudo modprobe joydev), and in a container pass /dev/input and /run/udev")
    if cfg.name is not None:
        wanted = cfg.name.lower()
        for path in paths:
            if wanted in (nodes.name(path) or "").lower():
                return path
        raise DeviceError(f"no gamepad named like {cfg.name!r} (intervention.gamepad.name); the joystick nodes "
                          f"present: {_listing(nodes, paths)}")
    for path in paths:
        if not NOT_GAMEPADS.search(nodes.name(path) or ""):
            return path
    raise DeviceError(f"no gamepad found: the joystick nodes present are 3D mice ({_listing(nodes, paths)}); "
                      "plug a gamepad in, or set intervention.gamepad.path")


def source_kind(file: BinaryIO, info: JoystickInfo) -> Optional[str]:
    """None for a joystick node (a character device of the input major that answered joydev's
    ioctls), else what it is, for the message that refuses it."""
    try:
        st = os.fstat(file.fileno())
    except (OSError, ValueError) as err:
        return f"file that cannot be examined ({getattr(err, 'strerror', None) or err})"
    if stat.S_ISCHR(st.st_mode):
        if os.major(st.st_rdev) != INPUT_MAJOR:
            return f"character device of major {os.major(st.st_rdev)} (not an input device)"
        if info.axes is None or info.buttons is None:
            return "input device that does not answer joydev's ioctls (an evdev event* node?)"
        return None
    kinds = [(stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISREG, "regular file"),
             (stat.S_ISBLK, "block device")]
    return next((name for test, name in kinds if test(st.st_mode)), "file of an unknown kind")


def open_gamepad(nodes: JoystickNodes, path: str) -> BinaryIO:
    """Open ``path``; permission trouble names the fix."""
    try:
        return nodes.open(path)
    except PermissionError:
        raise DeviceError(f"cannot open the gamepad at {path}: permission denied; {ACCESS_HINT}") from None
    except FileNotFoundError:
        raise DeviceError(f"cannot open the gamepad at {path}: it went away while opening; plug it in again") \
            from None
    except OSError as err:
        raise DeviceError(f"cannot open the gamepad at {path}: {err.strerror or err}") from None


class GamepadMapper:
    """Joystick state -> (operator-frame twist, held actions, pressed actions).

    Pure logic over :class:`.js_events.JoystickState`: the mapped axes in [-1, 1]
    (triggers as 0 .. 1), flipped for the motions in ``invert``, with the deadband cut
    per axis. Buttons map to actions through ``gamepad.buttons``.
    """

    def __init__(self, cfg: GamepadConfig) -> None:
        bound = cfg.axes.bound()
        self.motions = [MOTIONS.index(m) for m in bound]
        self.axes = list(bound.values())
        self.signs = np.array([-1.0 if m in cfg.invert else 1.0 for m in bound])
        self.triggers = frozenset(cfg.triggers)
        self.deadband = cfg.deadband
        self.buttons = cfg.buttons.bound()

    def operator_twist(self, state: JoystickState) -> np.ndarray:
        twist = np.zeros(6)
        if self.axes:
            values = state.normalized(self.axes, self.triggers) * self.signs
            twist[self.motions] = apply_deadband(values, self.deadband)
        return twist

    def actions(self, mask: int) -> set[str]:
        return {action for action, button in self.buttons.items() if (mask >> button) & 1}


class Gamepad(ReaderDevice):
    """A gamepad on a joystick node; see the module docstring for the threading contract
    (:class:`.reader_device.ReaderDevice` has the reader thread, the unplug and close).

    ``read()`` maps the latest state through :class:`GamepadMapper`, then the operator ->
    robot ``axis_map`` and the per-axis ``scale``, and builds the command with the same
    :class:`.commands.CommandBuilder` as the SpaceMouse and the keyboard.
    """

    log = log
    handle = "node"

    def __init__(self, cfg: InterventionConfig, *, nodes: JoystickNodes | None = None) -> None:
        self.cfg = cfg.gamepad
        nodes = nodes if nodes is not None else JoystickNodes()
        self.path = find_gamepad(nodes, self.cfg)
        self._file = open_gamepad(nodes, self.path)
        try:
            info = nodes.query(self._file)
            self.name = info.name or nodes.name(self.path) or "gamepad"
            self.where = f"gamepad '{self.name}' at {self.path}"
            self._check_mapping(info)
            self.source = source_kind(self._file, info)  # None: a joystick node
            if self.source is not None and not (self.cfg.stream or nodes.streams):
                raise DeviceError(f"{self.where} is a {self.source}, not a joystick node (/dev/input/js*): a byte "
                                  "stream can misalign its records; give a js* node, or set "
                                  "intervention.gamepad.stream: true to read js_event records from a stream")
        except BaseException:
            self._file.close()
            raise
        self.axis_count, self.reported_buttons = info.axes, info.buttons
        self.mapper = GamepadMapper(self.cfg)
        self._builder = CommandBuilder(AxisMap(cfg.axis_map, self.cfg.scale), intervene_mode=cfg.intervene_mode,
                                       intervene_on_motion=self.cfg.intervene_on_motion)
        self._state = JoystickState(rest_low=self.cfg.triggers, axes=info.axes, buttons=info.buttons,
                                    aligned=self.source is None)
        self._warned_resync = False
        self._take_initial_state()
        self._start_reader(self._read_events, "gamepad-reader")

    def _take_initial_state(self) -> None:
        """Feed what the node holds right after opening: joydev queues the pad's whole state
        (``JS_EVENT_INIT`` events) on open, so the first ``read()`` already sees a stick or
        button held from the start, however late the reader thread gets to run. Trouble
        here is left to the reader, which reports it."""
        try:
            fd = self._file.fileno()
            for _ in range(INITIAL_READS):
                if not select.select([fd], [], [], 0.0)[0]:
                    return
                data = self._file.read(READ_SIZE)
                if not data:  # nothing after all, or end of file (the reader reports that)
                    return
                self._feed(data)
        except (OSError, ValueError):
            return

    def _feed(self, data: bytes) -> None:
        """Decode ``data`` (under the lock, or before the reader starts); warn once when a stream misaligns."""
        resyncs = self._state.resyncs
        self._state.feed(data)
        if self._state.resyncs > resyncs and not self._warned_resync:
            self._warned_resync = True
            self.log.warning("%s: a record did not decode (stray bytes?); the pad reads at rest until its stream "
                             "is realigned (resyncs and discarded bytes are counted; warned once)", self.where)

    def _check_mapping(self, info: JoystickInfo) -> None:
        """A mapped axis or button the pad does not have is a one-line error naming the key."""
        if info.axes is not None:
            for motion, axis in self.cfg.axes.bound().items():
                if axis >= info.axes:
                    raise DeviceError(f"intervention.gamepad.axes.{motion} is axis {axis}, but the {self.where} has "
                                      f"{info.axes} axes (0 .. {info.axes - 1}); remap it or set it to null")
        if info.buttons is not None:
            for action, button in self.cfg.buttons.bound().items():
                if button >= info.buttons:
                    raise DeviceError(f"intervention.gamepad.buttons.{action} is button {button}, but the "
                                      f"{self.where} has {info.buttons} buttons (0 .. {info.buttons - 1}); remap "
                                      "it or set it to null")

    @property
    def events_received(self) -> int:
        """Valid records decoded (refused ones are not counted)."""
        return self._state.events

    @property
    def resyncs(self) -> int:
        """Times the stream went out of step (an invalid record); the pad read at rest until realigned."""
        return self._state.resyncs

    @property
    def discarded_bytes(self) -> int:
        """Bytes dropped while looking for the records' alignment."""
        return self._state.discarded

    @property
    def synced(self) -> bool:
        """Whether the records are believed aligned (False: the pad reads at rest)."""
        return self._state.synced

    @property
    def button_count(self) -> int:
        """The length of ``InputCommand.buttons``: configured, else what the pad reports, else what was seen."""
        if self.cfg.button_count is not None:
            return self.cfg.button_count
        if self.reported_buttons:
            return self.reported_buttons
        return max(self._state.highest_button + 1, 1 + max(self.cfg.buttons.bound().values(), default=-1))

    def _gone(self, reason: str) -> None:
        self._lost(f"{self.where} went away ({reason}): {REPLUG_HINT}", reason)

    def _read_events(self) -> None:
        timeout = self.cfg.read_timeout_ms / 1000.0
        try:
            fd = self._file.fileno()
        except (OSError, ValueError) as err:
            self._gone(str(err))
            return
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], timeout)
            except (OSError, ValueError) as err:  # the descriptor went bad under us
                self._gone(str(err))
                return
            if not ready:
                with self._lock:
                    self._state.settle()  # a stream's last record counts once the stream is quiet
                continue
            try:
                data = self._file.read(READ_SIZE)
            except BlockingIOError:
                continue
            except (OSError, ValueError) as err:  # ENODEV after an unplug; any other error ends the reader too
                self._gone(f"read: {getattr(err, 'strerror', None) or err}")
                return
            if data is None:  # nothing waiting after all
                continue
            if not data:  # end of file: the node is no longer there
                self._gone("the joystick node closed")
                return
            with self._lock:
                self._feed(data)

    def read(self) -> InputCommand:
        with self._lock:
            if not self._readable():
                return InputCommand()
            self._state.settle()
            operator_twist = self.mapper.operator_twist(self._state)
            held_mask, pressed_mask = self._state.buttons, self._state.take_pressed()
            count = self.button_count
        return self._builder.build(operator_twist, self.mapper.actions(held_mask), self.mapper.actions(pressed_mask),
                                   button_levels(held_mask, count))

    def _close_handle(self) -> None:
        self._file.close()
