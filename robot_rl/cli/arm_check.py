"""What the arm subcommands (``robot-rl franka``, ``robot-rl ur``) share: the child process
that talks to the arm, its timeouts, and where the address comes from.

An arm library may block without a timeout of its own (an address that swallows packets
blocks for minutes) and may hold the GIL while it waits, so a watchdog thread in this
process would never run; a child process can always be killed. The child reports each
stage it reaches (``("stage", name)``), so a hang is named by stage; it ends with
``("done", result)`` or ``("error", one line)``. It is spawned, not forked: a fork of a
process that runs BLAS or OpenMP worker threads (an embedding program, a test run after
training) can deadlock in the child's first numpy call.
"""

from __future__ import annotations

import argparse
import multiprocessing
from typing import Any, Callable, Optional

from robot_rl.errors import ConfigError, DeviceError


def add_arguments(parser: argparse.ArgumentParser, actions: list[str], *, arm: str, ip_help: str,
                  default_timeout: float, lib: str) -> None:
    """The arguments every arm subcommand takes; ``--lib`` (hidden) lets tests pass a fake library."""
    parser.add_argument("action", choices=actions, help="what to do")
    parser.add_argument("--config", help="a config whose robot.hardware names the arm")
    parser.add_argument("--ip", help=f"{ip_help} (overrides the config)")
    parser.add_argument("--timeout", type=float, default=None,
                        help=f"seconds to wait for the {arm} (default {default_timeout:g})")
    parser.add_argument("--lib", default=lib, help=argparse.SUPPRESS)


def in_child(talk: Callable[..., Any], args: tuple, *, where: str, describe: Callable[[BaseException], str],
             what: str, deadline: Callable[[Optional[str]], tuple[float, str]]) -> Any:
    """Run ``talk(*args, stage)`` in a spawned child and return what it returns.

    ``talk`` and ``describe`` must be module-level functions (the child imports them by
    name). ``stage(name)`` tells the parent how far the child got; ``deadline(stage)``
    says how long the parent waits at that stage (None: before the first) and the line it
    raises when nothing comes. A DeviceError in the child is raised here as it is; any
    other exception as ``"<where>: <describe(err)>"``; a child that ends without an answer
    names ``what`` it was doing.
    """
    ctx = multiprocessing.get_context("spawn")
    reader, writer = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child_main, args=(talk, args, where, describe, writer), daemon=True)
    child.start()
    writer.close()
    stage: Optional[str] = None
    try:
        while True:
            wait, late = deadline(stage)
            if not reader.poll(wait):
                raise DeviceError(late)
            try:
                kind, payload = reader.recv()
            except EOFError:
                raise DeviceError(f"{where}: the {what} process ended without an answer "
                                  f"(exit code {child.exitcode})") from None
            if kind == "stage":
                stage = payload
            elif kind == "error":
                raise DeviceError(payload)
            else:
                return payload
    finally:
        if child.is_alive():
            child.kill()
        child.join(1.0)
        reader.close()


def _child_main(talk: Callable[..., Any], args: tuple, where: str, describe: Callable[[BaseException], str],
                out: Any) -> None:
    try:
        out.send(("done", talk(*args, lambda stage: out.send(("stage", stage)))))
    except DeviceError as err:
        out.send(("error", str(err)))
    except Exception as err:  # noqa: BLE001 - anything the library raises becomes one line
        out.send(("error", f"{where}: {describe(err)}"))
    finally:
        out.close()


def address(args: argparse.Namespace, hardware: type, backend: str, default_timeout: float) -> tuple[str, float]:
    """The arm's address and how long to wait for it: ``--ip`` (else ``robot.hardware.ip`` of
    ``--config``, whose ``robot.hardware`` must be a ``hardware``) and ``--timeout`` (else the
    config's ``connect_timeout_s``, else ``default_timeout``). A ConfigError says what is wrong."""
    timeout = default_timeout
    ip = args.ip
    if args.config:
        from robot_rl.paths import resolve_config
        from robot_rl.tasks import load_config
        from robot_rl_drivers.robots import robot_hardware

        cfg = load_config(resolve_config(args.config))
        hw = robot_hardware(cfg.robot, file=args.config)
        if not isinstance(hw, hardware):
            raise ConfigError(f"{args.config}: robot.backend is {cfg.robot.backend!r}, not {backend!r}")
        ip = ip or hw.ip
        timeout = hw.connect_timeout_s
    if not ip:
        raise ConfigError(f"{backend}: give --ip, or --config with a robot.hardware.ip")
    from robot_rl_drivers.robots.settings import check_host

    try:
        check_host(ip)
    except ValueError as err:
        raise ConfigError(f"--ip: {err}") from None
    return ip, args.timeout if args.timeout is not None else timeout
