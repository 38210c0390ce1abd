"""The warm start's advice: a BC policy whose own recorded eval success is weak gets one log line
pointing to RLPD from scratch; a missing or unreadable eval record is no advice, never an error."""

from __future__ import annotations

import json
import os
import time

import pytest

from robot_rl.training.base_loader import MAX_EVAL_FILE_BYTES, recorded_bc_success
from robot_rl.training.base_rl import WEAK_BC_SUCCESS, weak_bc_advice


def bc_run(tmp_path, record: object, raw: str | None = None):
    run = tmp_path / "bc_run"
    (run / "checkpoint").mkdir(parents=True)
    (run / "eval.json").write_text(raw if raw is not None else json.dumps(record))
    return run


@pytest.mark.parametrize("rate", [0.0, 0.25, WEAK_BC_SUCCESS - 0.01])
def test_a_weak_bc_policy_gets_one_line_naming_its_record(tmp_path, rate):
    run = bc_run(tmp_path, {"success_rate": rate, "episodes": 20})
    for source in (run, run / "checkpoint"):  # the run directory or its checkpoint folder
        advice = weak_bc_advice(str(source))
        assert advice is not None and "\n" not in advice
        assert f"{rate:.0%}" in advice and str(run / "eval.json") in advice and "agent.base.mode: none" in advice


@pytest.mark.parametrize("rate", [WEAK_BC_SUCCESS, 0.75, 1.0])
def test_a_useful_bc_policy_gets_none(tmp_path, rate):
    assert weak_bc_advice(str(bc_run(tmp_path, {"success_rate": rate}))) is None


@pytest.mark.parametrize("raw", ['{"success_rate": NaN}', '{"success_rate": Infinity}', '{"success_rate": -0.5}',
                                 '{"success_rate": 1e300}', '{"success_rate": "0.1"}', '{"success_rate": true}',
                                 '{"success_rate": null}', '{"rate": 0.1}', "[0.1]", '{"success_rate": 0.1',
                                 "", "\x00\xff" * 50])
def test_an_unreadable_record_is_no_advice(tmp_path, raw):
    run = bc_run(tmp_path, None, raw)
    assert recorded_bc_success(str(run)) is None and weak_bc_advice(str(run)) is None


def test_no_record_or_a_module_factory_source_is_no_advice(tmp_path):
    assert weak_bc_advice(str(tmp_path / "missing")) is None
    assert weak_bc_advice("some.module:factory") is None
    (tmp_path / "eval.json").mkdir()  # a folder where the file should be
    assert weak_bc_advice(str(tmp_path)) is None


def test_a_fifo_or_a_huge_record_is_no_advice_and_does_not_block(tmp_path):
    run = tmp_path / "bc_run"
    run.mkdir()
    os.mkfifo(run / "eval.json")  # open() on it would wait for a writer forever
    start = time.monotonic()
    assert weak_bc_advice(str(run)) is None and time.monotonic() - start < 60.0
    huge = tmp_path / "huge"
    huge.mkdir()
    (huge / "eval.json").write_text('{"success_rate": 0.1, "pad": "' + "x" * MAX_EVAL_FILE_BYTES + '"}')
    assert recorded_bc_success(str(huge)) is None
