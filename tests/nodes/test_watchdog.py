"""Killing the actor makes the controller hold: the sim node's controller, over DDS, across processes.

What is measured, precisely (wall clock, one machine):

* ``t_kill``: the test sends SIGKILL to actor_node while the arm moves under the
  scripted expert (the actor re-sends its latest target at ``ros.target_hz``, 50 Hz,
  until it dies);
* ``t_hold``: the moment sim_node's controller switched to holding, from the hold
  event on ``/sim_node/status`` (it also reports when the last target arrived);
* **hold latency** = ``t_hold - t_kill``; must be <= 200 ms. By design it is about
  ``ros.watchdog_s`` (0.1 s) after the last target, plus at most one state period;
* **drift after 1 s** = distance between the TCP position the controller held at
  ``t_hold`` and the TCP position published 1 s later; must be <= 5 mm. The largest
  distance within that second (the arm's stopping distance: it was moving when the
  targets stopped) is reported too.

A loaded shared machine can freeze processes for a few hundred ms, which would measure
the machine, not the watchdog; if the test sees such a stall during a measurement, it
kills a fresh actor and measures again (up to three tries).
"""

from __future__ import annotations

import signal
import time

import numpy as np
import pytest
from graph_harness import Probe, Session, StallWatch, private_env  # noqa: E402

from robot_rl.ros import convert  # noqa: E402
from robot_rl.ros import messages as m  # noqa: E402


@pytest.fixture
def graph(tmp_path, monkeypatch):
    env = private_env()
    session = Session(tmp_path, ["ros.policy=expert", "ros.state_timeout_s=2.0"], env)
    probe = Probe(monkeypatch, env)
    watch = StallWatch(limit_s=0.1)
    yield session, probe, watch
    watch.close()
    probe.close()
    session.stop()


def events(statuses: list[dict]) -> list[dict]:
    return [s["event"] for s in statuses if "event" in s]


def measure_once(session: Session, probe: Probe, watch: StallWatch, poses, statuses) -> dict:
    actor = session.start("actor_node")
    first = len(events(statuses))
    running = {"sim_node": session.procs["sim_node"], "actor_node": actor}
    # wait until the actor drives the arm (targets flowing) and the arm is moving
    assert probe.spin_until(lambda: any(e["event"] == "targets" for e in events(statuses)[first:]), 90, running), \
        session.log("actor_node")
    probe.spin(1.0)  # into the episode: the approach
    assert probe.spin_until(lambda: speed(poses) > 0.03, 30, running), "the arm never moved"
    watch.reset()
    t_kill = time.time()
    actor.send_signal(signal.SIGKILL)

    def holds() -> list[dict]:
        return [e for e in events(statuses)[first:] if e.get("reason") == "watchdog" and e["stamp"] > t_kill - 1]

    probe.spin_until(lambda: bool(holds()), 3.0)
    assert holds(), "the controller never held after the actor died"
    hold = holds()[0]
    probe.spin_until(lambda: poses[-1][0] > hold["stamp"] + 1.05, 5.0)
    actor.wait(5)
    held = np.array(hold["tcp_pos"])
    window = [p for t, p in poses if hold["stamp"] <= t <= hold["stamp"] + 1.0]
    at_1s = next(p for t, p in poses if t >= hold["stamp"] + 1.0)
    return {"stalled": watch.stalled, "worst_gap_ms": watch.worst * 1000,
            "hold_latency_ms": (hold["stamp"] - t_kill) * 1000,
            "since_last_target_ms": (hold["stamp"] - hold["last_target_wall"]) * 1000,
            "drift_1s_mm": float(np.linalg.norm(at_1s - held)) * 1000,
            "max_excursion_mm": max(float(np.linalg.norm(p - held)) for p in window) * 1000,
            "speed_at_kill_mps": speed(poses, before=t_kill)}


def speed(poses, before: float | None = None) -> float:
    """TCP speed over the last 0.1 s of poses (before ``before``)."""
    end = poses[-1][0] if before is None else before
    recent = [(t, p) for t, p in poses if end - 0.1 <= t <= end]
    if len(recent) < 2 or recent[-1][0] - recent[0][0] <= 0:
        return 0.0
    return float(np.linalg.norm(recent[-1][1] - recent[0][1]) / (recent[-1][0] - recent[0][0]))


def test_killing_the_actor_makes_the_controller_hold_within_200_ms(graph):
    session, probe, watch = graph
    poses = probe.collect(m.PoseStamped, "/robot/tcp_pose", lambda msg: convert.pose_from_msg(msg)[0], depth=200)
    statuses = probe.statuses("sim_node")
    session.start("sim_node")
    results = []
    for _ in range(3):
        results.append(measure_once(session, probe, watch, poses, statuses))
        if not results[-1]["stalled"]:
            break
    r = results[-1]
    print(f"\nwatchdog after the actor was killed (tries: {len(results)}, worst machine stall "
          f"{r['worst_gap_ms']:.0f} ms): hold {r['hold_latency_ms']:.0f} ms after the kill, "
          f"{r['since_last_target_ms']:.0f} ms after the last target (watchdog_s 100 ms); arm speed at the kill "
          f"{r['speed_at_kill_mps'] * 1000:.0f} mm/s; drift 1 s after the hold {r['drift_1s_mm']:.2f} mm, "
          f"largest excursion in that second {r['max_excursion_mm']:.2f} mm")
    assert not r["stalled"], f"the machine stalled in every try: {results}"
    assert 0 < r["hold_latency_ms"] <= 200
    assert 100 <= r["since_last_target_ms"] <= 100 + 60
    assert r["drift_1s_mm"] <= 5.0
    assert r["max_excursion_mm"] <= 15.0  # stopping from at most 0.2 m/s (2 cm per 10 Hz step)
    probe.spin(1.2)
    last = [s for s in statuses if "controller" in s][-1]
    assert last["controller"]["holding"] and last["controller"]["watchdog_holds"] >= 1
