"""A 3Dconnexion SpaceMouse as an :class:`~robot_rl.interfaces.InputDevice`, through hidapi.

The library boundary is the ``hid`` module of the ``hidapi`` package (or its ``hidraw``
twin, same API): ``enumerate()``, ``device()``, ``open_path``, ``set_nonblocking``,
``read(size, timeout_ms)`` and ``close``. Everything above it is ours: finding the
device, decoding its reports (:mod:`.hid_reports`), deadband, scaling and axis mapping
(:mod:`.commands`). Tests hand in a fake ``hid`` module and run this same code.

A background thread reads reports as they come (up to about 60 per second while the puck
moves) and keeps the latest state, so ``read()`` never blocks and never returns a stale
queued report: reading one report per control step, as some drivers do, lets reports pile
up and the arm lags the hand by seconds.

Unplugging: the reader thread sees a read error, records it and ends quietly (no
traceback, no log spam). The next ``read()`` raises :class:`~robot_rl.errors.DeviceError`
once; later reads return a neutral command (no intervention, zero twist), so the caller
ends the intervention, lets the policy or the hold resume, logs one warning and keeps
its data (:class:`robot_rl.envs.inputs.FailSafeInput` does exactly that). ``close()`` works after an
unplug.
"""

from __future__ import annotations

import logging
import os
import sys
from types import ModuleType
from typing import Any

from robot_rl.config.input import InterventionConfig, SpaceMouseConfig
from robot_rl.errors import DeviceError, install_extra
from robot_rl.interfaces import InputCommand

from .commands import AxisMap, CommandBuilder, apply_deadband
from .hid_reports import ReportDecoder, button_levels, hid_to_operator
from .reader_device import ReaderDevice

log = logging.getLogger(__name__)

UDEV_RULE_FILE = "/etc/udev/rules.d/99-spacemouse.rules"
UDEV_HINT = f"install the udev rule {UDEV_RULE_FILE} (see README, 'SpaceMouse'), then replug the device"
INSTALL_HINT = f"{install_extra('real')} (the hidapi package)"

LOGITECH = 0x046D
THREEDCONNEXION = 0x256F
#: Logitech's vendor id covers every Logitech mouse and keyboard; only these are 3D mice.
LOGITECH_3D_MICE = {
    0xC603: "SpaceMouse Plus XT", 0xC605: "CadMan", 0xC606: "SpaceMouse Classic",
    0xC621: "SpaceBall 5000", 0xC623: "SpaceTraveler", 0xC625: "SpacePilot",
    0xC626: "SpaceNavigator", 0xC627: "SpaceExplorer", 0xC628: "SpaceNavigator for Notebooks",
    0xC629: "SpacePilot Pro", 0xC62B: "SpaceMouse Pro",
}
THREEDCONNEXION_MODELS = {
    0xC62E: "SpaceMouse Wireless (cable)", 0xC62F: "SpaceMouse Wireless (receiver)",
    0xC631: "SpaceMouse Pro Wireless (cable)", 0xC632: "SpaceMouse Pro Wireless (receiver)",
    0xC633: "SpaceMouse Enterprise", 0xC635: "SpaceMouse Compact",
    0xC638: "SpaceMouse Pro Wireless Bluetooth Edition", 0xC63A: "SpaceMouse Wireless BT",
    0xC652: "3Dconnexion Universal Receiver",
}
#: Models with just a left (0) and a right (1) button; the others report up to 32.
TWO_BUTTON_MODELS = {(LOGITECH, 0xC626), (LOGITECH, 0xC628), (THREEDCONNEXION, 0xC62E),
                     (THREEDCONNEXION, 0xC62F), (THREEDCONNEXION, 0xC635), (THREEDCONNEXION, 0xC63A)}
MULTI_AXIS_USAGE = (0x01, 0x08)  # Generic Desktop / Multi-axis Controller


def import_hid(backend: str = "auto") -> ModuleType:
    """hidapi's module for ``backend``; a missing package is a one-line DeviceError.

    ``auto`` prefers ``hidraw`` on Linux (the kernel's hidraw nodes: the usbhid driver
    stays attached and the udev rule covers ``/dev/hidraw*``), then ``hid``.
    """
    names = {"auto": ["hidraw", "hid"] if sys.platform.startswith("linux") else ["hid"],
             "hidraw": ["hidraw"], "libusb": ["hid"]}[backend]
    errors = []
    for name in names:
        try:
            module = __import__(name)
        except ImportError as err:
            errors.append(f"import {name}: {err}")
            continue
        if not hasattr(module, "device") or not hasattr(module, "enumerate"):
            errors.append(f"the '{name}' module found ({getattr(module, '__file__', '?')}) is not hidapi's")
            continue
        return module
    raise DeviceError(f"SpaceMouse support needs the hidapi package ({'; '.join(errors)}): {INSTALL_HINT}")


def describe(info: dict[str, Any]) -> str:
    """``SpaceMouse Compact (256f:c635)`` for an enumerate() entry."""
    vid, pid = info.get("vendor_id", 0), info.get("product_id", 0)
    name = (LOGITECH_3D_MICE.get(pid) if vid == LOGITECH else THREEDCONNEXION_MODELS.get(pid)) \
        or info.get("product_string") or "HID device"
    return f"{name} ({vid:04x}:{pid:04x})"


def _path_str(path: Any) -> str:
    return path.decode(errors="replace") if isinstance(path, (bytes, bytearray)) else str(path)


def _is_candidate(info: dict[str, Any], cfg: SpaceMouseConfig) -> bool:
    vid, pid = info.get("vendor_id"), info.get("product_id")
    if vid not in cfg.vendor_ids:
        return False
    if cfg.product_id is not None:
        return pid == cfg.product_id
    return vid != LOGITECH or pid in LOGITECH_3D_MICE


def find_spacemouse(hid: ModuleType, cfg: SpaceMouseConfig) -> dict[str, Any]:
    """The enumerate() entry of the SpaceMouse to open, or a DeviceError naming what was seen.

    A receiver or a composite device lists several interfaces; the one whose usage is
    Generic Desktop / Multi-axis Controller carries the 6-axis reports (opening another
    one is a classic cause of "the SpaceMouse reads all zeros"). Backends that report no
    usage (0/0) are accepted as they are.
    """
    seen = list(hid.enumerate())
    found = [d for d in seen if _is_candidate(d, cfg)]
    if cfg.path is not None:
        found = [d for d in found if _path_str(d.get("path")) == cfg.path]
    usable = [d for d in found if (d.get("usage_page", 0), d.get("usage", 0)) in (MULTI_AXIS_USAGE, (0, 0))]
    if usable:
        usable.sort(key=lambda d: ((d.get("usage_page", 0), d.get("usage", 0)) != MULTI_AXIS_USAGE,
                                   _path_str(d.get("path"))))
        return usable[0]
    searched = ", ".join(f"{v:04x}" for v in cfg.vendor_ids)
    want = f" product id {cfg.product_id:04x}" if cfg.product_id is not None else ""
    want += f" at path {cfg.path}" if cfg.path is not None else ""
    if not seen:
        raise DeviceError(f"no SpaceMouse found: hid.enumerate() saw no HID devices at all (vendor ids searched: "
                          f"{searched}{want}); plug it in, check `lsusb`, and in a container pass /dev and /run/udev")
    kinds = sorted({describe(d) for d in seen})
    listing = ", ".join(kinds[:8]) + (f", and {len(kinds) - 8} more" if len(kinds) > 8 else "")
    if found:
        models = ", ".join(sorted({describe(d) for d in found}))
        raise DeviceError(f"no SpaceMouse found: the 3Dconnexion devices seen ({models}) expose no multi-axis "
                          f"interface (vendor ids searched: {searched}{want})")
    raise DeviceError(f"no SpaceMouse found: hid.enumerate() saw {len(seen)} HID interfaces ({listing}), none a "
                      f"3D mouse (vendor ids searched: {searched}{want}); plug it in or set "
                      "intervention.spacemouse.product_id")


def open_device(hid: ModuleType, info: dict[str, Any]) -> Any:
    """Open the enumerate() entry ``info``; permission trouble names the udev rule."""
    path = info.get("path")
    where = f"{describe(info)} at {_path_str(path)}"
    device = hid.device()
    try:
        device.open_path(path)
    except OSError as err:
        detail = ""
        try:
            detail = str(device.error() or "")
        except Exception:  # noqa: BLE001 - hidapi builds differ; the message is a courtesy
            detail = ""
        detail = detail if detail and "not implemented" not in detail else str(err)
        node = _path_str(path)
        denied = "permission denied" in detail.lower() or isinstance(err, PermissionError) or (
            node.startswith("/dev/") and os.path.exists(node) and not os.access(node, os.R_OK | os.W_OK))
        if denied:
            raise DeviceError(f"cannot open {where}: permission denied; {UDEV_HINT}") from None
        raise DeviceError(f"cannot open {where}: {detail}; another program may hold it, or {UDEV_HINT}") from None
    return device


class SpaceMouse(ReaderDevice):
    """A 6-axis 3D mouse with buttons; see the module docstring for the threading contract
    (:class:`.reader_device.ReaderDevice` has the reader thread, the unplug and close).

    ``read()`` maps the latest axes through deadband, the operator -> robot ``axis_map``
    and the per-axis ``scale``; buttons map to actions through ``spacemouse.buttons``.
    """

    log = log
    handle = "device"

    def __init__(self, cfg: InterventionConfig, *, hid_module: ModuleType | None = None) -> None:
        self.cfg = cfg.spacemouse
        hid = hid_module if hid_module is not None else import_hid(self.cfg.backend)
        self.info = find_spacemouse(hid, self.cfg)
        self.name = describe(self.info)
        self.where = f"{self.name} at {_path_str(self.info.get('path'))}"
        self._device = open_device(hid, self.info)
        self._device.set_nonblocking(False)  # reads wait inside hidapi, up to read_timeout_ms
        key = (self.info.get("vendor_id"), self.info.get("product_id"))
        self.button_count = self.cfg.button_count or (2 if key in TWO_BUTTON_MODELS else 32)
        self._builder = CommandBuilder(AxisMap(cfg.axis_map, self.cfg.scale),
                                       intervene_mode=cfg.intervene_mode,
                                       intervene_on_motion=self.cfg.intervene_on_motion)
        self._decoder = ReportDecoder()
        self._pressed = 0  # buttons that went down since the last read()
        self._start_reader(self._read_reports, "spacemouse-reader")

    @property
    def reports_received(self) -> int:
        return self._decoder.reports

    def _read_reports(self) -> None:
        timeout_ms = self.cfg.read_timeout_ms
        while not self._stop.is_set():
            try:
                data = self._device.read(64, timeout_ms)
            except (OSError, ValueError) as err:  # hidapi raises IOError("read error") on unplug
                self._lost(f"{self.where} stopped responding (unplugged?): {err}", err)
                return
            if not data:
                continue
            with self._lock:
                before = self._decoder.buttons
                self._decoder.feed(data)
                self._pressed |= self._decoder.buttons & ~before

    def read(self) -> InputCommand:
        with self._lock:
            if not self._readable():
                return InputCommand()
            raw_axes = self._decoder.axes.copy()
            held_mask, pressed_mask = self._decoder.buttons, self._pressed
            self._pressed = 0
        operator_twist = apply_deadband(hid_to_operator(raw_axes, self.cfg.full_scale), self.cfg.deadband)
        held = {a for a, i in self.cfg.buttons.items() if (held_mask >> i) & 1}
        pressed = {a for a, i in self.cfg.buttons.items() if (pressed_mask >> i) & 1}
        return self._builder.build(operator_twist, held, pressed, button_levels(held_mask, self.button_count))

    def _close_handle(self) -> None:
        self._device.close()
