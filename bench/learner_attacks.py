"""What a client holding the learner's token can still do to a legitimate actor.

    python bench/learner_attacks.py [--small] [--seconds 6] [--takeover-seconds 12]

One learner (this process, a real LearnerServer with the EpisodeAssembler) on 127.0.0.1
and one legitimate actor (the real ActorClient) streaming whole synthetic episodes at a
fixed pace (``--hz`` steps/s, as a robot at its control rate), so a lower rate means the
actor was starved, not that the attack used CPU. Phases, each ``--seconds`` long:

1. calm: the actor alone (the baseline);
2. flood: ``--stalled`` calls with the token that send headers and never a body (Register,
   one connection each), reopened as soon as the learner ends them; a second actor
   registers in the middle and must get in;
3. flood-more: the same with ``--stalled-more`` calls (beyond learning.max_waiting_calls);
4. flood-streams: stalled StreamWeights calls;
5. takeover: for ``--takeover-seconds`` another client registers the actor's id with a
   new incarnation and pushes an episode under it, as fast as it can.

It prints one line per phase and ends with one JSON line: the actor's rate under each
attack against the calm one, steps lost (submitted minus stored), takeovers tried and
refused, steps stored under the actor's name that it did not send, and the learner's
refusals by cause. ``--small`` runs every phase short and with fewer calls (CI).
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time

from robot_rl.config.learning import LearningConfig
from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.assembler import EpisodeAssembler
from robot_rl.training.remote.attacks import REGISTER, WEIGHTS, StalledCalls, paced_rate, try_takeover
from robot_rl.training.remote.client import ActorClient
from robot_rl.training.remote.server import LearnerServer

TOKEN = "bench-attacks-token"
LENGTH = 20
THIEF_EPISODE = 10**9  # episode id the thief pushes under the actor's name


def config(**kw) -> LearningConfig:
    base = dict(port=0, batch_steps=8, batch_max_age_s=0.1, reconnect_min_s=0.05, reconnect_max_s=0.5,
                rpc_deadline_s=5.0)
    base.update(kw)
    return LearningConfig(**base)


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.spaces = syn.make_spaces(cameras=("front",), image_size=32)
        self.asm = EpisodeAssembler(None, max_open_steps=4 * LENGTH)
        self.server = LearnerServer(config(body_timeout_s=args.body_timeout_s), self.spaces, self.asm, TOKEN)
        self.server.start(host="127.0.0.1")
        self.target = f"127.0.0.1:{self.server.port}"
        self.actor = ActorClient(config(), self.spaces, TOKEN, target=self.target, actor_id="legit").start()
        self.episode = 0
        self.submitted = 0
        self.rows: dict[str, dict] = {}

    def paced(self, seconds: float) -> float:
        rate, n, self.episode = paced_rate(self.actor, self.spaces, seconds, self.args.hz, self.episode, LENGTH)
        self.submitted += n
        return rate

    def phase(self, name: str, flood: StalledCalls | None, seconds: float) -> None:
        late = None
        late_s = None
        if flood is not None:
            flood.start()
            time.sleep(min(1.0, seconds / 4))  # the flood is in place
            late = ActorClient(config(), self.spaces, TOKEN, target=self.target, actor_id=f"late-{name}").start()
            t0 = time.monotonic()
            late_s = round(time.monotonic() - t0, 2) if late.wait_connected(30) else None
        rate = self.paced(seconds)
        waiting = self.server.calls().get("waiting", 0)
        flushed = self.actor.flush(30)
        if flood is not None:
            flood.stop()
        if late is not None:
            late.close()
        row = {"rate": round(rate, 1), "flushed": flushed, "waiting_at_end": waiting}
        if flood is not None:
            row.update(stalled=flood.count, connections=len(flood.channels), calls_opened=flood.opened,
                       codes=dict(flood.codes), late_actor_registered_s=late_s)
        self.rows[name] = row
        print(f"{name:14s} {rate:6.1f} steps/s" + (f"  {flood.count} stalled over {len(flood.channels)} "
              f"connections, {flood.opened} opened {dict(flood.codes)}; a second actor registered in "
              f"{late_s} s" if flood is not None else ""), flush=True)

    def takeover(self, seconds: float) -> dict:
        tried, outcomes = 0, {}
        t0 = time.monotonic()
        rate_box: list[float] = []
        thread = threading.Thread(target=lambda: rate_box.append(self.paced(seconds)))
        thread.start()
        while time.monotonic() - t0 < seconds:
            code, _ = try_takeover(self.target, TOKEN, self.spaces, "legit", episode_id=THIEF_EPISODE + tried)
            outcomes[code] = outcomes.get(code, 0) + 1
            tried += 1
        thread.join()
        self.actor.flush(30)
        rate = rate_box[0]
        self.rows["takeover"] = {"rate": round(rate, 1), "tried": tried, "outcomes": outcomes}
        print(f"{'takeover':14s} {rate:6.1f} steps/s  {tried} takeovers in {seconds:g} s: {outcomes}", flush=True)
        return outcomes

    def run(self) -> dict:
        a = self.args
        assert self.actor.wait_connected(30), self.actor.last_error
        self.phase("calm", None, a.seconds)
        self.phase("flood", StalledCalls(self.target, TOKEN, count=a.stalled, method=REGISTER), a.seconds)
        self.phase("flood_more", StalledCalls(self.target, TOKEN, count=a.stalled_more, method=REGISTER),
                   a.seconds)
        self.phase("flood_streams", StalledCalls(self.target, TOKEN, count=a.stalled, method=WEIGHTS), a.seconds)
        outcomes = self.takeover(a.takeover_seconds)
        self.actor.close()
        episodes = self.asm.take()
        stored = sum(len(e.steps) for e in episodes if e.actor_id == "legit")
        foreign = sum(len(e.steps) for e in episodes if e.actor_id == "legit" and e.meta["episode_id"] >= THIEF_EPISODE)
        self.server.stop(0)
        calm = self.rows["calm"]["rate"]
        ratio = {k: round(v["rate"] / calm, 3) for k, v in self.rows.items() if k != "calm"}
        stats = self.server.actor_stats()["legit"]
        return {"bench": "learner_attacks", "small": a.small, "hz": a.hz, "seconds": a.seconds,
                "calm_steps_per_s": calm, "rate_ratio": ratio,
                "min_flood_ratio": min(ratio[k] for k in ("flood", "flood_more", "flood_streams")),
                "submitted": self.submitted, "stored": stored, "steps_lost": self.submitted - (stored - foreign),
                "lost_open_steps": self.asm.lost_steps, "foreign_steps_stored": foreign,
                "takeovers_tried": sum(outcomes.values()), "takeovers_refused": outcomes.get("ALREADY_EXISTS", 0),
                "takeovers_accepted": outcomes.get("OK", 0), "takeovers_refused_in_stats": stats.takeovers_refused,
                "refused": self.server.refusals(), "phases": self.rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="short phases, fewer calls (CI)")
    parser.add_argument("--seconds", type=float, default=None, help="length of each phase (default 6; small 2)")
    parser.add_argument("--takeover-seconds", type=float, default=None, help="default 12; small 3")
    parser.add_argument("--stalled", type=int, default=None, help="stalled calls (default 60; small 20)")
    parser.add_argument("--stalled-more", type=int, default=None, help="default 200; small 40")
    parser.add_argument("--hz", type=float, default=100.0, help="the legitimate actor's pace, steps/s")
    parser.add_argument("--body-timeout-s", type=float, default=2.0, help="the learner's learning.body_timeout_s")
    args = parser.parse_args()
    small = args.small
    args.seconds = args.seconds or (2.0 if small else 6.0)
    args.takeover_seconds = args.takeover_seconds or (3.0 if small else 12.0)
    args.stalled = args.stalled or (20 if small else 60)
    args.stalled_more = args.stalled_more or (40 if small else 200)
    if min(args.seconds, args.takeover_seconds, args.hz) <= 0 or min(args.stalled, args.stalled_more) < 1:
        parser.error("--seconds, --takeover-seconds, --hz must be positive and --stalled* at least 1")
    logging.basicConfig(level=logging.ERROR)  # refusals are counted in the JSON line, not logged here
    print(json.dumps(Bench(args).run()))


if __name__ == "__main__":
    main()
