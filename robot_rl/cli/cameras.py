"""``robot-rl cameras list|check``: find the cameras, and check the ones a config names.

* ``list`` prints the serial numbers of the RealSense cameras librealsense sees and the
  V4L2 video nodes present: what goes into ``cameras.<name>.hardware``.
* ``check --config rig.yaml`` opens every real (non-sim) camera of the config, reads
  frames for a moment and prints size, frame rate and stamp age per camera.

A missing serial, a device that does not open or a camera that delivers no frames is one
line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from robot_rl.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "check"], help="what to do")
    parser.add_argument("--config", help="check: the config (a name or a path) whose cameras to open")
    parser.add_argument("--name", action="append", help="check: only this camera (repeatable)")
    parser.add_argument("--seconds", type=float, default=2.0, help="check: how long to read frames")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        return _list()
    if not args.config:
        raise ConfigError("cameras check: give --config with the cameras to open")
    from robot_rl.paths import resolve_config
    from robot_rl.tasks import load_config
    from robot_rl_drivers.cameras import camera_spec, make_camera

    cfg = load_config(resolve_config(args.config))
    # the cameras whose device robot_rl opens itself (the registry's backends with a factory)
    names = args.name or [n for n, c in cfg.cameras.items() if camera_spec(c.backend).factory is not None]
    unknown = [n for n in names if n not in cfg.cameras]
    if unknown:
        raise ConfigError(f"{args.config}: no camera named {', '.join(unknown)} (has: {', '.join(cfg.cameras)})")
    if not names:
        print(f"{args.config}: no cameras robot_rl opens itself (all are sim or topic cameras)")
        return 0
    for name in names:
        camera = make_camera(name, cfg.cameras[name], file=args.config)
        try:
            stamps, ages = [], []
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                frame = camera.read()
                if not stamps or frame.stamp != stamps[-1]:
                    stamps.append(frame.stamp)
                    ages.append(time.time() - frame.stamp)
                time.sleep(0.002)
            h, w, _ = frame.image.shape
            fps = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 and stamps[-1] > stamps[0] else 0.0
            depth = f", depth {frame.depth.shape[1]}x{frame.depth.shape[0]}" if frame.depth is not None else ""
            print(f"camera '{name}' ({cfg.cameras[name].backend}): {w}x{h}{depth}, {fps:.1f} fps, "
                  f"stamp age median {np.median(ages) * 1000:.1f} ms")
        finally:
            camera.close()
    return 0


def _list() -> int:
    """What every camera backend of the registry that can list devices finds connected."""
    from robot_rl_drivers.cameras import camera_specs
    from robot_rl_drivers.spec import resolve

    for spec in camera_specs():
        if spec.probe is not None:
            for line in resolve(spec.probe)():
                print(line)
    return 0
