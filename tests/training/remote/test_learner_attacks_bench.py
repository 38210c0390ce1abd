"""bench/learner_attacks.py at CI size (``--small``): it runs every attack, prints one line per
phase, and ends with one JSON line whose figures say the legitimate actor kept its pace, lost
nothing, and no takeover of its id went through."""

from __future__ import annotations

from bench_runs import run_bench


def test_learner_attacks_small_ends_with_one_json_line_of_sound_figures():
    figures, lines = run_bench("learner_attacks.py", "--small", timeout=300)
    assert figures["bench"] == "learner_attacks" and figures["small"] is True
    assert len(lines) == 5 + 1  # one line per phase, then the JSON line
    assert set(figures["rate_ratio"]) == {"flood", "flood_more", "flood_streams", "takeover"}
    # Short phases on a loaded machine: a wider margin than the dedicated flood test's 90%.
    assert figures["min_flood_ratio"] >= 0.75, figures["rate_ratio"]
    assert figures["submitted"] == figures["stored"] > 0
    assert figures["steps_lost"] == figures["foreign_steps_stored"] == figures["lost_open_steps"] == 0
    assert figures["takeovers_tried"] >= 3
    assert figures["takeovers_refused"] == figures["takeovers_tried"] == figures["takeovers_refused_in_stats"]
    assert figures["takeovers_accepted"] == 0
    assert figures["refused"]["id_held"] == figures["takeovers_tried"] and figures["refused"]["body_timeout"] > 0
    for name in ("flood", "flood_more", "flood_streams"):
        assert figures["phases"][name]["late_actor_registered_s"] is not None  # a new actor got in
