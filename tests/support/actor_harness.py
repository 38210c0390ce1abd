"""The actor node's core wired to a sim on a thread by plain calls, and a scripted person.

Shared by the actor-core tests in tests/nodes (episodes, demo and reward recording).
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np

from robot_rl.nodes.actor import ActorSession, Senders, make_topic_parts
from robot_rl.nodes.description import build_graph
from robot_rl.nodes.sim import SimServer
from robot_rl.nodes.task import parse_reset_request
from robot_rl.nodes.topics import task_state_names

PICK = "configs/pick_cube.yaml"


class LoopbackSim:
    """SimServer on a thread at the state rate, wired to the actor's parts by plain calls."""

    def __init__(self, cfg) -> None:
        self.sim = SimServer(cfg)
        self.names = task_state_names(self.sim.state_dim)
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self.parts = None
        self.stop = threading.Event()
        self.next_resend = 0.0
        topics = build_graph(cfg, PICK).node("actor_node").parameters["topics"]
        senders = Senders(target=lambda p, q: self._locked(self.sim.controller.on_target, p, q),
                          gripper=lambda g: self._locked(self.sim.controller.on_gripper, g),
                          reset=self.requests.append,
                          posture=lambda q, k: self._locked(self.sim.controller.on_posture, q, k))
        self.parts = make_topic_parts(cfg, topics, senders, actor_id="test", stamp_clock=self.sim.now)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _locked(self, fn, *args):
        with self.lock:
            fn(*args)

    def _publish(self, state) -> None:
        stamp = self.sim.now()  # the sim node's stamps: simulated time, as the reset answers' (one clock)
        robot, task = self.parts.robot, self.parts.task
        robot.on_twist(state.tcp_twist)
        robot.on_wrench(state.tcp_wrench)
        robot.on_joints([f"joint{i}" for i in range(1, 8)] + ["gripper"], np.append(state.q, state.gripper),
                        np.zeros(8), np.zeros(8))
        robot.on_pose(state.tcp_pos, state.tcp_quat, stamp)
        values, _ = self.sim.ground_truth()
        task.on_ground_truth(self.names, values, stamp)

    def _run(self) -> None:
        while not self.stop.is_set():
            with self.lock:
                while self.requests:
                    answer = self.sim.reset(parse_reset_request(self.requests.pop(0)))
                    self._publish(self.sim.controller.state)
                    self.parts.task.on_reset_done(json.dumps(answer))
                state = self.sim.tick()
                if state is not None:
                    self._publish(state)
            if time.monotonic() >= self.next_resend:  # what the actor node's timer does at ros.target_hz
                self.parts.robot.resend()
                self.next_resend = time.monotonic() + 0.02
            time.sleep(0.008)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sim.close()


class CameraLoopback(LoopbackSim):
    """The loopback sim, also publishing every camera's image at about 20 Hz (rendered on its thread)."""

    next_image = 0.0

    def _publish(self, state) -> None:
        super()._publish(state)
        now = time.monotonic()
        if now >= self.next_image:
            for name, camera in self.parts.cameras.items():
                camera.on_image(self.sim.render(name), time.time())
            self.next_image = now + 0.05

    def _run(self) -> None:
        try:
            super()._run()
        finally:  # an EGL context is released by the thread it is current in
            self.sim.world.close()


class ScriptedPerson:
    """A synthetic person at the actor's /spacenav input (its TopicInput), on a thread.

    Subclasses write :meth:`script`; an error in it is kept in :attr:`error` and stops
    the session, so the test reports it instead of hanging.
    """

    def __init__(self, session: ActorSession) -> None:
        from robot_rl.nodes.intervention import ACTION_BUTTONS, JOY_BUTTONS

        self.session = session
        self.device = session.parts.input
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self._buttons, self._width = ACTION_BUTTONS, JOY_BUTTONS

    def tap(self, action: str) -> None:
        """Press and release the /spacenav/joy button of ``action``."""
        buttons = [0] * self._width
        buttons[self._buttons[action]] = 1
        self.device.on_joy(tuple(buttons))
        self.device.on_joy(tuple([0] * self._width))

    def wait(self, predicate, timeout: float = 30.0, while_waiting=lambda: None, poll: float = 0.02) -> None:
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                raise TimeoutError("the actor did not get there")
            while_waiting()
            time.sleep(poll)

    def script(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        try:
            self.script()
        except BaseException as err:  # noqa: BLE001 - reported by the test
            self.error = err
            self.session.stop()
