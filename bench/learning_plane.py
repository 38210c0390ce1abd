"""Learning-plane throughput: transitions/s into the learner and weight-push latency.

    python bench/learning_plane.py [--seconds 10] [--actors 1 4] [--image-size 128]

One learner (this process) and 1, then 4, actor processes on 127.0.0.1. Each actor
streams Steps with a state vector and two ``image-size``² RGB cameras as fast as the
link takes them (it holds back when more than two batches wait, so nothing is dropped),
over the real client: bounded outbox, token, batching, acks. The learner decodes and
checks every batch against the spaces, and publishes policy-sized weights (those of
the default agent for these spaces) every ``--weights-every-s`` seconds.

Weight-push latency is from ``publish_weights`` on the learner to the complete, decoded
version sitting in the actor's weight slot (same host, same clock). Figures depend
heavily on how many cores are free: actors and learner share this machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import threading
import time

import numpy as np

from robot_rl.config.learning import LearningConfig
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.server import LearnerServer

TOKEN = "bench-token"


class CountingSink:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.steps = 0

    def receive(self, actor_id, incarnation, seq, steps) -> None:
        with self.lock:
            self.steps += len(steps)


def policy_weights(spaces) -> dict[str, np.ndarray]:
    """The weights an actor of the default agent receives for these spaces."""
    try:
        import gymnasium as gym

        from robot_rl.agents.policy import Policy
        from robot_rl.config.agent import AgentConfig

        obs = gym.spaces.Dict({k: gym.spaces.Box(s.low, s.high, s.shape, s.dtype)
                               for k, s in spaces.observation.items()})
        act = gym.spaces.Box(spaces.action.low, spaces.action.high, spaces.action.shape, spaces.action.dtype)
        return Policy(AgentConfig(), obs, act).weights()
    except ImportError:  # the agent is not installed: a same-sized stand-in
        return syn.policy_weights(np.random.default_rng(0), extra_params=3_000_000)


def actor_main(port: int, index: int, seconds: float, image_size: int, batch_steps: int, out: mp.Queue) -> None:
    from robot_rl.training.remote.client import ActorClient

    cfg = LearningConfig(port=port, batch_steps=batch_steps, queue_steps=max(4 * batch_steps, 64))
    spaces = syn.make_spaces(cameras=("front", "wrist"), image_size=image_size)
    rng = np.random.default_rng(index)
    frames = [syn.random_obs(spaces, rng) for _ in range(8)]  # reused: the bench measures the link
    client = ActorClient(cfg, spaces, TOKEN, target=f"127.0.0.1:{port}", actor_id=f"bench-{index}").start()
    client.wait_connected(30)
    latencies, steps, episode = [], 0, 0
    deadline = time.monotonic() + seconds
    action = np.zeros(spaces.action.shape, np.float32)
    from robot_rl.data.transition import Step

    while time.monotonic() < deadline:
        weights = client.take_weights()
        if weights is not None:
            latencies.append(weights.received_unix - weights.published_unix)
        if client.outbox.queued_steps > 2 * batch_steps:
            time.sleep(0.001)
            continue
        t = steps % 100
        last = t == 99
        client.submit(Step(episode, t, frames[steps % 8], action, 0.0, False, last,
                           frames[(steps + 1) % 8]))
        steps += 1
        episode += last
    client.flush(30)
    weights = client.take_weights()  # a version that arrived during the flush
    if weights is not None:
        latencies.append(weights.received_unix - weights.published_unix)
    stats = client.stats()
    client.close()
    out.put({"steps": steps, "dropped": stats["dropped_steps"], "latencies": latencies})


def run(n_actors: int, seconds: float, image_size: int, batch_steps: int, weights_every_s: float) -> dict:
    spaces = syn.make_spaces(cameras=("front", "wrist"), image_size=image_size)
    sink = CountingSink()
    server = LearnerServer(LearningConfig(port=0), spaces, sink, TOKEN)
    port = server.start()
    weights = policy_weights(spaces)
    weight_mb = sum(v.nbytes for v in weights.values()) / 2**20
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=actor_main, args=(port, i, seconds, image_size, batch_steps, out))
             for i in range(n_actors)]
    for p in procs:
        p.start()
    while len(server.actor_stats()) < n_actors:  # all registered: start the clock
        time.sleep(0.05)
    start_steps, start = sink.steps, time.perf_counter()
    next_push = time.perf_counter()
    while any(p.is_alive() for p in procs) and time.perf_counter() - start < seconds:
        if time.perf_counter() >= next_push:
            server.publish_weights(weights)
            next_push += weights_every_s
        time.sleep(0.005)
    window = time.perf_counter() - start
    window_steps = sink.steps - start_steps
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    server.stop(0)
    lat = np.array([x for r in results for x in r["latencies"]]) * 1000.0
    sent = sum(r["steps"] for r in results)
    return {
        "actors": n_actors,
        "transitions_per_s": round(window_steps / window, 1),
        "mb_per_s": round(window_steps / window * syn_step_bytes(spaces) / 2**20, 1),
        "weight_mb": round(weight_mb, 2),
        "weight_pushes": int(lat.size),
        "weight_latency_p50_ms": round(float(np.percentile(lat, 50)), 1) if lat.size else None,
        "weight_latency_p99_ms": round(float(np.percentile(lat, 99)), 1) if lat.size else None,
        "received_equals_sent": sink.steps == sent,
        "dropped": sum(r["dropped"] for r in results),
    }


def syn_step_bytes(spaces) -> int:
    return sum(int(np.prod(s.shape)) * np.dtype(s.dtype).itemsize for s in spaces.observation.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--image-size", type=int, default=128)
    parser.add_argument("--batch-steps", type=int, default=16)
    parser.add_argument("--weights-every-s", type=float, default=0.5)
    args = parser.parse_args()
    figures = {}
    for n in args.actors:
        f = run(n, args.seconds, args.image_size, args.batch_steps, args.weights_every_s)
        figures[f"actors_{n}"] = f
        print(f"{n} actor(s), 2x{args.image_size}x{args.image_size} cameras: {f['transitions_per_s']} transitions/s "
              f"({f['mb_per_s']} MiB/s); weight push ({f['weight_mb']} MiB) latency p50 "
              f"{f['weight_latency_p50_ms']} ms, p99 {f['weight_latency_p99_ms']} ms over {f['weight_pushes']} "
              f"receipts; received == sent: {f['received_equals_sent']}, dropped {f['dropped']}")
    print(json.dumps({"bench": "learning_plane", "image_size": args.image_size, "cameras": 2,
                      "batch_steps": args.batch_steps, "cpus": mp.cpu_count(), **figures}))


if __name__ == "__main__":
    main()
