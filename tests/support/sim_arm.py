"""Driving a control law on the MuJoCo arm (tests/sim): the world, stepping it, pushing the
TCP, and the figures both laws are held to (step response, no jump on start, watchdog hold).

The Panda (impedance law) and the UR5e (admittance law, ``sim.arm=ur5e``) are held to the
same figures with their own thresholds, so the measurement is written once, here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robot_rl.sim import build_world
from robot_rl.tasks import load_config, make_task

CONFIG = "configs/pick_cube.yaml"


def make_world(*overrides: str) -> Any:
    """pick_cube's world with ``overrides``, its task reset with a fixed seed."""
    cfg = load_config(CONFIG, list(overrides))
    world = build_world(make_task(cfg), [])
    world.task.reset(np.random.default_rng(0))
    return world


def tcp(world: Any) -> np.ndarray:
    world.forward()
    return world.data.site_xpos[world.tcp_site].copy()


def run(world: Any, seconds: float, target: Any = None, quat: Any = None, record: bool = False) -> list:
    """Step physics, re-sending ``target`` each step (so the watchdog stays quiet); with
    ``record``, each step's ``(time, TCP position, the law's last output)``."""
    traj = []
    t_end = world.now() + seconds
    while world.now() < t_end - 1e-9:
        if target is not None:
            world.robot.controller.set_target(target, quat, world.now())
        world.physics_step()
        if record:
            traj.append((world.now(), world.data.site_xpos[world.tcp_site].copy(),
                         world.robot.controller.last_output))
    return traj


def push(world: Any, force: np.ndarray) -> None:
    """A force at the TCP, as a force and moment on the hand's centre of mass (xfrc_applied)."""
    hand = world.model.body("hand").id
    d = world.data
    d.xfrc_applied[hand, :3] = force
    d.xfrc_applied[hand, 3:] = np.cross(d.site_xpos[world.tcp_site] - d.xipos[hand], force)


def held_under_force(world: Any, axis: int, newtons: float = 10.0, seconds: float = 2.0) -> np.ndarray:
    """Hold the current pose, then push the TCP along ``axis`` for ``seconds`` while the target
    stays that pose: how far the TCP gave way (m, per axis)."""
    state = world.robot.state()
    hold_pos, hold_quat = state.tcp_pos.copy(), state.tcp_quat.copy()
    force = np.zeros(3)
    force[axis] = newtons
    run(world, 0.2, hold_pos, hold_quat)
    for _ in range(int(seconds / world.dt)):
        push(world, force)
        world.robot.controller.set_target(hold_pos, hold_quat, world.now())
        world.physics_step()
    return tcp(world) - hold_pos


def step_response(world: Any, axis: int, sign: int, seconds: float) -> tuple[float, float, np.ndarray]:
    """A 5 cm step of the target along ``axis``, held for ``seconds``: the time after which the
    TCP stays within 2 mm (inf if it never gets there), the overshoot (m) and the error per step."""
    state = world.robot.state()
    start = state.tcp_pos.copy()
    target = start.copy()
    target[axis] += sign * 0.05
    t0 = world.now()
    traj = run(world, seconds, target, state.tcp_quat, record=True)
    times = np.array([t - t0 for t, _, _ in traj])
    pos = np.array([p for _, p, _ in traj])
    err = np.linalg.norm(pos - target, axis=1)
    outside = np.nonzero(err > 0.002)[0]
    if len(outside) == len(err):
        settle_time = float("inf")
    else:
        settle_time = float(times[outside[-1] + 1]) if len(outside) else 0.0
    progress = (pos - start) @ (target - start) / 0.05
    overshoot = max(0.0, float(progress.max()) - 0.05)
    return settle_time, overshoot, err


def assert_no_jump_on_start_and_watchdog_holds(world: Any) -> None:
    """No target at all holds the start pose; when targets stop, the watchdog holds the arm."""
    start = tcp(world)
    run(world, 1.0)  # no target at all: the start pose is held, then the watchdog holds it
    assert np.linalg.norm(tcp(world) - start) < 0.001
    state = world.robot.state()
    world.robot.command(state.tcp_pos + [0.0, 0.0, -0.1], state.tcp_quat)
    run(world, 0.2)  # moving, then targets stop
    run(world, 1.0)
    assert world.robot.controller.stats.watchdog_holds >= 1
    held = tcp(world)
    run(world, 1.0)
    assert np.linalg.norm(tcp(world) - held) < 0.005
