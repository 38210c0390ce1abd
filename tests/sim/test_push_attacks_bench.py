"""bench/push_attacks.py at CI size (``--small``): it runs, prints a table, and ends with one
JSON line whose figures say every push past the margin faulted, held and recovered."""

from __future__ import annotations

from bench_runs import run_bench


def test_push_attacks_small_ends_with_one_json_line_of_sound_figures():
    figures, lines = run_bench("push_attacks.py", "--small", timeout=600)
    assert figures["bench"] == "push_attacks" and figures["small"] is True
    assert figures["cases"] == 4 and len(figures["rows"]) == 4 and len(lines) == 1 + 4 + 1
    assert figures["faulted"] == figures["recovered"] == 4  # 135 N takes both arms out past the margin
    assert figures["missed"] == figures["false_alarms"] == figures["not_back_in_box"] == 0
    assert figures["accepted_in_fault"] == figures["target_moves_in_fault"] == 0
    assert figures["max_outside_at_fault_m"] < figures["margin_m"] + 0.01
    assert min(figures["max_outside_m"].values()) > figures["margin_m"]
