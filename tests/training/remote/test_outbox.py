"""The actor's bounded queue: batching, order, overflow accounting, retention; weight hand-over."""

import threading

import numpy as np

from robot_rl.training.remote import synthetic as syn
from robot_rl.training.remote.codec import WeightVersion
from robot_rl.training.remote.outbox import Outbox
from robot_rl.training.remote.weights import WeightBoard, WeightSlot

SPACES = syn.make_spaces(state_dim=3)


def _steps(episode_id, length, **kw):
    return list(syn.episode(SPACES, episode_id, length, np.random.default_rng(episode_id), **kw))


def _drain(box):
    out = []
    while (batch := box.next_batch(timeout=0)) is not None:
        out.append(batch)
        box.ack(batch.seq)
    return out


def test_batches_every_n_steps_and_at_episode_end():
    box = Outbox(batch_steps=4, capacity_steps=100, max_age_s=100)
    for s in _steps(0, 10) + _steps(1, 3):
        box.add(s)
    batches = _drain(box)
    assert [len(b.steps) for b in batches] == [4, 4, 2, 3]
    assert [b.seq for b in batches] == [1, 2, 3, 4]
    assert all(len({s.episode_id for s in b.steps}) == 1 for b in batches)
    assert box.queued_steps == 0 and box.acked_steps == 13


def test_old_partial_batch_is_sealed_after_max_age():
    now = [0.0]
    box = Outbox(batch_steps=8, capacity_steps=100, max_age_s=1.0, clock=lambda: now[0])
    for s in _steps(0, 20)[:3]:
        box.add(s)
    assert box.next_batch(timeout=0) is None
    now[0] = 1.5
    batch = box.next_batch(timeout=0)
    assert batch is not None and len(batch.steps) == 3


def test_overflow_is_counted_and_spares_interventions_and_the_batch_in_flight():
    box = Outbox(batch_steps=5, capacity_steps=15, max_age_s=100)
    human = _steps(0, 5, intervene_every=1)  # one batch, all interventions
    for s in human:
        box.add(s)
    in_flight = box.next_batch(timeout=0)  # the sender holds batch 1
    for s in _steps(1, 30):
        box.add(s)
    # 35 steps came in, 15 fit: whole non-intervention batches were evicted, oldest first.
    assert box.dropped_steps == 20 and box.dropped_intervention_steps == 0
    assert box.queued_steps == 15
    box.ack(in_flight.seq)
    left = _drain(box)
    assert [s.step for b in left for s in b.steps] == list(range(20, 30))  # the newest, in order
    assert box.added_steps == 35 == box.dropped_steps + box.acked_steps


def test_when_only_interventions_are_queued_new_steps_are_refused_and_counted():
    box = Outbox(batch_steps=5, capacity_steps=10, max_age_s=100)
    for s in _steps(0, 10, intervene_every=1):
        box.add(s)
    accepted = [box.add(s) for s in _steps(1, 4, intervene_every=2)]
    assert accepted == [False] * 4
    assert box.dropped_steps == 4 and box.dropped_intervention_steps == 2
    assert sum(b.interventions for b in _drain(box)) == 10


def test_acked_batches_of_the_unfinished_episode_are_retained_and_requeued_in_order():
    box = Outbox(batch_steps=4, capacity_steps=100, max_age_s=100)
    for s in _steps(0, 6) + _steps(1, 10)[:8]:
        box.add(s)
    sent = _drain(box)  # the learner acked everything, then crashed
    assert box.queued_steps == 0
    # episode 0 ended (its last batch was acked): only episode 1's batches come back
    assert box.requeue_retained() == 8
    again = _drain(box)
    assert [(s.episode_id, s.step) for b in again for s in b.steps] == [(1, t) for t in range(8)]
    assert [b.seq for b in again] == [b.seq for b in sent if b.steps[0].episode_id == 1][:2]
    assert box.requeue_retained() == 8  # still unfinished: retained again
    for s in _steps(1, 10)[8:]:
        box.add(s)
    _drain(box)
    assert box.requeue_retained() == 0  # episode 1 ended and was acked


def test_reject_removes_and_counts():
    box = Outbox(batch_steps=4, capacity_steps=100, max_age_s=100)
    for s in _steps(0, 8):
        box.add(s)
    batch = box.next_batch(timeout=0)
    assert box.reject(batch.seq) == 4 and box.rejected_steps == 4
    # the learner did not store batch 1, so it takes seq 1 next: the following batch gets it
    nxt = box.next_batch(timeout=0)
    assert nxt.seq == 1 and nxt.steps[0].step == 4


def test_batches_are_numbered_when_first_sent_so_evictions_leave_no_gap():
    box = Outbox(batch_steps=5, capacity_steps=15, max_age_s=100)
    for s in _steps(0, 30):  # 15 of them evicted before anything was sent
        box.add(s)
    assert box.dropped_steps == 15
    assert [b.seq for b in _drain(box)] == [1, 2, 3]


def test_renumber_follows_the_learner():
    box = Outbox(batch_steps=4, capacity_steps=100, max_age_s=100)
    for s in _steps(0, 12):
        box.add(s)
    first = box.next_batch(timeout=0)
    assert first.seq == 1
    box.renumber(7)  # e.g. a restarted learner holds up to 6
    assert [b.seq for b in _drain(box)] == [7, 8, 9]


def test_add_never_waits_for_the_sender():
    box = Outbox(batch_steps=4, capacity_steps=50, max_age_s=100)
    box.next_batch(timeout=0)
    steps = _steps(0, 400)
    done = threading.Event()

    def produce():
        for s in steps:
            box.add(s)
        done.set()

    threading.Thread(target=produce).start()
    assert done.wait(5.0), "Outbox.add blocked although nobody drained the queue"
    assert box.queued_steps == 48 and box.dropped_steps == 352


def test_weight_slot_hands_out_only_newer_complete_versions():
    slot = WeightSlot()
    assert slot.take() is None
    slot.put(WeightVersion(2, {"w": np.ones(2)}))
    slot.put(WeightVersion(1, {"w": np.zeros(2)}))  # older: ignored
    slot.put(WeightVersion(3, {"w": np.full(2, 3.0)}))
    got = slot.take()
    assert got.version == 3 and got.tensors["w"][0] == 3.0
    assert slot.take() is None


def test_weight_board_skips_to_newest_and_wakes_waiters():
    board = WeightBoard(start_version=10)
    assert board.wait_newer(10, timeout=0.01) is None
    result = []
    waiter = threading.Thread(target=lambda: result.append(board.wait_newer(10, timeout=5)))
    waiter.start()
    board.publish(11, "a")
    waiter.join(5)
    assert result == [(11, "a")]
    board.publish(12, "b")
    board.publish(13, "c")
    assert board.wait_newer(11, timeout=0) == (13, "c")
