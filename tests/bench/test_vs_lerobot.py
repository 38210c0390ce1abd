"""``bench/vs_lerobot.py``: its argument checks and JSON summary (pure Python, always), and a
tiny side-by-side run where both virtualenvs exist (ROBOT_RL_LEROBOT_PYTHON or LEROBOT_PYTHON, and
ROBOT_RL_GYMHIL_PYTHON; LEROBOT_PYTHONPATH for grpcio and gym-hil beside LeRobot), else skipped
in one line."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def vs(monkeypatch):
    """bench/vs_lerobot.py as a module (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_vs_lerobot", ROOT / "bench" / "vs_lerobot.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_vs_lerobot", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def pythons(tmp_path, monkeypatch):
    """Two files standing in for the pythons (the checks only need them to exist)."""
    lr, rr = tmp_path / "lerobot_python", tmp_path / "robot_rl_python"
    lr.write_text("")
    rr.write_text("")
    monkeypatch.delenv("LEROBOT_PYTHON", raising=False)
    monkeypatch.delenv("ROBOT_RL_LEROBOT_PYTHON", raising=False)
    monkeypatch.delenv("ROBOT_RL_GYMHIL_PYTHON", raising=False)
    return ["--lerobot-python", str(lr), "--robot-rl-python", str(rr)]


def test_defaults_are_the_issue_protocol(vs, pythons):
    args = vs.parse_args(pythons)
    assert (args.eval_episodes, args.seeds, args.obs, args.block) == (20, [0, 1, 2], ["state"], ["fixed"])
    assert args.image_size == 128  # gym-hil's own render size


@pytest.mark.parametrize("bad, word", [
    (["--obs", "depth"], "--obs"), (["--obs", "state", "state"], "--obs"), (["--block", "moving"], "--block"),
    (["--learners", "sb3"], "--learners"), (["--seeds", "1", "1"], "--seeds"), (["--seeds", "-1"], "--seeds"),
    (["--env-steps", "0"], "--env-steps"), (["--eval-every", "0"], "--eval-every"),
    (["--eval-episodes", "0"], "--eval-episodes"), (["--demos", "0"], "--demos"), (["--utd", "0"], "--utd"),
    (["--batch-size", "1"], "--batch-size"), (["--env-steps", "100", "--eval-every", "200"], "--eval-every"),
    (["--discount", "nan"], "--discount"), (["--discount", "inf"], "--discount"), (["--discount", "1"], "--discount"),
    (["--discount", "-0.5"], "--discount"), (["--learning-starts", "-3"], "--learning-starts"),
    (["--batch-size", "33"], "--batch-size"), (["--update-speed", "-1"], "--update-speed"),
    (["--init-temperature", "0"], "--init-temperature"), (["--init-temperature", "nan"], "--init-temperature"),
    (["--init-temperature", "inf"], "--init-temperature"), (["--init-temperature", "-1"], "--init-temperature"),
    (["--image-size", "32"], "--image-size"), (["--image-size", "-64"], "--image-size"),
    (["--image-size", "4096"], "--image-size"), (["--lerobot-fps", "0"], "--lerobot-fps"),
    (["--lerobot-fps", "-2"], "--lerobot-fps"), (["--lerobot-fps", "1001"], "--lerobot-fps"),
])
def test_a_bad_flag_is_one_line_naming_it_and_exit_2(vs, pythons, capsys, bad, word):
    assert vs.main([*pythons, *bad]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"vs_lerobot: {word}")


def test_a_missing_python_is_named(vs, pythons, tmp_path, capsys):
    assert vs.main(["--robot-rl-python", pythons[3]]) == 2
    assert "--lerobot-python: not given" in capsys.readouterr().err
    assert vs.main(["--lerobot-python", str(tmp_path / "nope"), "--robot-rl-python", pythons[3]]) == 2
    assert "is not a file" in capsys.readouterr().err
    # robot_rl's python is needed only when robot_rl runs; LeRobot's always (it writes the shared demos)
    assert vs.parse_args(["--lerobot-python", pythons[1], "--learners", "lerobot"]).robot_rl_python is None


def test_huge_and_non_numeric_values_are_refused_by_argparse(vs, pythons, capsys):
    with pytest.raises(SystemExit) as exit_:
        vs.main([*pythons, "--env-steps", "1e9"])
    assert exit_.value.code == 2
    assert "--env-steps" in capsys.readouterr().err


def test_steps_to_and_the_median_over_seeds(vs):
    curve = [(500, 0.5), (1000, 0.85), (1500, 0.7), (2000, 0.95)]
    assert vs.steps_to(curve, 0.8) == 1000
    assert vs.steps_to(curve, 0.95) == 2000
    assert vs.steps_to(list(reversed(curve)), 0.8) == 1000  # order of the records does not matter
    assert vs.steps_to(curve, 0.99) is None
    assert vs.median_steps([1000, None, 2000], budget=3000) == 2000
    assert vs.median_steps([1000, None, None], budget=3000) is None  # most seeds never got there
    assert vs.median_steps([2205, None], budget=4000) is None  # half never did: not (2205 + 4001) / 2
    assert vs.median_steps([1000, 3000, None, 2000], budget=4000) == 2500
    assert vs.median_steps([], budget=3000) is None


def _run(learner, seed, curve, wall=100.0, steps=1000, updates=2000, rb=200.0, error=None):
    row = {"learner": learner, "obs": "state", "block": "fixed", "seed": seed, "curve": curve, "wall_s": wall,
           "env_steps": steps, "updates": updates, "replay_bytes_per_transition": rb}
    if error:
        row["error"] = error
    return row


def test_the_summary_has_every_figure_for_both_learners(vs):
    runs = [_run("robot_rl", s, [[500, 0.5], [1000, 0.9 + 0.05 * s]], wall=100.0 + s) for s in range(3)]
    runs += [_run("lerobot", s, [[400, 0.2], [900, 0.85]], wall=200.0, updates=500, rb=600.0) for s in range(3)]
    out = vs.summarize(runs, budget=1000)
    rr, lr = out["state_fixed"]["robot_rl"], out["state_fixed"]["lerobot"]
    assert rr["steps_to_80"] == 1000 and rr["steps_to_95"] == 1000  # seeds 1 and 2 reach 0.95 at 1000
    assert rr["steps_to_95_per_seed"] == [None, 1000, 1000]
    assert rr["wall_s_per_1000_env_steps"] == 101.0 and rr["updates_per_s"] == pytest.approx(2000 / 101, abs=0.01)
    assert rr["updates_per_env_step"] == 2.0 and rr["replay_bytes_per_transition"] == 200
    assert lr["steps_to_80"] == 900 and lr["steps_to_95"] is None
    assert lr["updates_per_s"] == 2.5 and lr["replay_bytes_per_transition"] == 600
    json.dumps(out, allow_nan=False)  # the JSON line is strict JSON


def test_failed_and_malformed_runs_do_not_make_figures(vs):
    runs = [_run("lerobot", 0, [], error="LeRobot's actor failed (exit 1, log x)"),
            _run("lerobot", 1, [[500, float("nan")], [1000, 0.9]], wall=float("inf"), rb=float("nan")),
            _run("robot_rl", 0, [[1000, 1.0]], wall=0.0, steps=0)]
    out = vs.summarize(runs, budget=1000)
    lr, rr = out["state_fixed"]["lerobot"], out["state_fixed"]["robot_rl"]
    assert lr["errors"] == ["seed 0: LeRobot's actor failed (exit 1, log x)"]
    assert lr["steps_to_80_per_seed"] == [1000]  # the NaN point is skipped, the failed seed is not a seed
    assert lr["wall_s_per_1000_env_steps"] is None and lr["replay_bytes_per_transition"] is None
    assert rr["wall_s_per_1000_env_steps"] is None and rr["updates_per_s"] is None  # no steps: no rate
    json.dumps(out, allow_nan=False)


def test_both_sides_get_the_same_settings(vs):
    spec = {"obs": "pixels", "block": "random", "seed": 1, "env_steps": 2000, "eval_every": 500, "eval_episodes": 20,
            "eval_seed": 10_000, "demos": 10, "batch_size": 256, "utd": 2, "discount": 0.97, "learning_starts": 100,
            "dataset": "d", "demo_dir": "demos", "run_dir": "run", "port": 5555, "image_size": 64, "lerobot_fps": 2}
    cfg = vs.lerobot_config(spec)
    sets = vs.robot_rl_overrides(spec)
    assert cfg["env"]["task"] == "BenchPickCubeRandomPixels-v0"
    assert "env.gym_id=gym_hil/BenchPickCubeRandomPixels-v0" in sets
    pol = cfg["policy"]
    assert (pol["utd_ratio"], pol["discount"], pol["online_steps"], pol["online_step_before_learning"]) == \
        (2, 0.97, 2000, 100)
    assert {"train.utd_ratio=2", "agent.discount=0.97", "train.total_env_steps=2000", "train.learning_starts=100",
            "train.batch_size=256", "seed=1", "agent.gripper_critic=true", "train.eval_episodes=20"} <= set(sets)
    assert cfg["batch_size"] == 128 and pol["num_discrete_actions"] == 3 and cfg["seed"] == 1
    assert sorted(pol["input_features"]) == ["observation.images.front", "observation.images.wrist",
                                             "observation.state"]
    assert pol["input_features"]["observation.images.front"]["shape"] == [3, 64, 64]  # what the env renders
    assert cfg["env"]["fps"] == 2 and "env.control_hz=10" in sets  # LeRobot's actor's pace; the env's own rate
    # LeRobot's learner decodes the demos' videos with PyAV: its default, torchcodec, needs a system FFmpeg
    assert cfg["dataset"]["video_backend"] == "pyav"
    assert vs.gym_obs("pixels") == {"state": ["agent_pos"], "front": ["pixels/front"], "wrist": ["pixels/wrist"]}
    assert vs.gym_obs("state") == {"state": ["agent_pos"]}


def test_both_sides_share_the_initial_temperature_and_the_rows_per_update(vs):
    """0.01 on both by default (LeRobot's own gym-hil example configs', robot_rl's); LeRobot's learner
    concatenates a batch from each of its two buffers, so it is given half the batch size."""
    spec = {"obs": "state", "block": "fixed", "seed": 0, "env_steps": 2000, "eval_every": 500, "eval_episodes": 20,
            "eval_seed": 10_000, "demos": 10, "batch_size": 256, "utd": 2, "discount": 0.97, "learning_starts": 100,
            "dataset": "d", "demo_dir": "demos", "run_dir": "run", "port": 5555}
    assert vs.parse_args(["--lerobot-python", sys.executable, "--robot-rl-python", sys.executable]).init_temperature \
        == 0.01
    spec["init_temperature"] = 0.05
    assert vs.lerobot_config(spec)["policy"]["temperature_init"] == 0.05
    assert "agent.init_temperature=0.05" in vs.robot_rl_overrides(spec)
    assert vs.lerobot_config(spec)["batch_size"] == 128
    assert "train.batch_size=256" in vs.robot_rl_overrides(spec)


def test_robot_rl_s_update_is_timed_alone(vs):
    """The equal-work update speed's robot_rl side (LeRobot's needs its own python: the tiny run)."""
    timed = vs.child_robot_rl_update_speed({"batch_size": 32, "discount": 0.97, "init_temperature": 0.01,
                                            "updates": 5, "compile": False})
    assert timed["updates_per_s"] > 0 and math.isfinite(timed["updates_per_s"]) and timed["compiled"] is False


def _tiny_run(*args: str) -> dict:
    """``bench/vs_lerobot.py`` with ``args`` where both virtualenvs are named (else the test skips):
    its exit status 0 and its last line, the JSON summary."""
    lr = os.environ.get("ROBOT_RL_LEROBOT_PYTHON") or os.environ.get("LEROBOT_PYTHON")
    rr = os.environ.get("ROBOT_RL_GYMHIL_PYTHON")
    if not (lr and rr and Path(lr).is_file() and Path(rr).is_file()):
        pytest.skip("LEROBOT_PYTHON / ROBOT_RL_GYMHIL_PYTHON not set to LeRobot's and robot_rl+gym-hil's pythons")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "vs_lerobot.py"), *args], capture_output=True,
                          text=True, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_tiny_side_by_side_run(tmp_path):
    """Both learners, state, fixed block, a few hundred env steps: the JSON line has both."""
    record = _tiny_run("--seeds", "0", "--env-steps", "200", "--eval-every", "100", "--eval-episodes", "2",
                       "--demos", "2", "--batch-size", "32", "--update-speed", "3", "--out", str(tmp_path))
    both = record["results"]["state_fixed"]
    assert set(both) == {"robot_rl", "lerobot"}
    for entry in both.values():
        assert "errors" not in entry, entry
        assert entry["updates_per_s"] > 0 and math.isfinite(entry["wall_s_per_1000_env_steps"])
        assert entry["replay_bytes_per_transition"] > 0
    assert all(Path(p).is_file() for p in record["png"])
    speed = record["update_speed"]["eager"]
    assert speed["robot_rl"]["median"] > 0 and speed["lerobot"]["median"] > 0 and speed["robot_rl_over_lerobot"] > 0


def test_a_tiny_side_by_side_run_from_pixels(tmp_path):
    """Both learners from two 48 x 48 cameras, a few hundred env steps: each side reads the shared
    dataset's videos, learns, is evaluated, and the JSON line has both (LeRobot's learner decodes
    the demos' videos, which the state run never does). LeRobot's actor at 2 Hz gives its learner
    about 100 s after the first episode to reach its first checkpoint at 50 optimisation steps,
    so a loaded machine still gets there: at 10 Hz it had 20 s, and under load it did not."""
    record = _tiny_run("--obs", "pixels", "--image-size", "48", "--seeds", "0", "--env-steps", "300",
                       "--learning-starts", "20", "--eval-every", "50", "--eval-episodes", "1", "--demos", "2",
                       "--batch-size", "16", "--update-speed", "0", "--update-speed-pixels", "0", "--lerobot-fps", "2",
                       "--out", str(tmp_path))
    both = record["results"]["pixels_fixed"]
    assert set(both) == {"robot_rl", "lerobot"} and record["image_size"] == 48
    for name, entry in both.items():
        assert "errors" not in entry, (name, entry)
        assert entry["updates_per_s"] > 0 and entry["replay_bytes_per_transition"] > 0, (name, entry)
    runs = json.loads((tmp_path / "runs.json").read_text())
    assert all(run["curve"] for run in runs), runs  # each side was evaluated at least once


def test_the_state_env_appends_the_block_s_position_to_agent_pos(tmp_path):
    """In gym-hil's python: the state setting's ``agent_pos`` is 21 numbers, its last three the block's
    position in the simulator (random: another place per seed), the pixel setting's 18."""
    rr = os.environ.get("ROBOT_RL_GYMHIL_PYTHON")
    if not (rr and Path(rr).is_file()):
        pytest.skip("ROBOT_RL_GYMHIL_PYTHON not set to robot_rl+gym-hil's python")
    script = f"""
import importlib.util, json, sys
import gymnasium as gym
import numpy as np
spec = importlib.util.spec_from_file_location("vs", {str(ROOT / "bench" / "vs_lerobot.py")!r})
vs = importlib.util.module_from_spec(spec); sys.modules["vs"] = vs; spec.loader.exec_module(vs)
vs.register_bench_envs(None, 48)
out = {{}}
for obs in ("state", "pixels"):
    env = gym.make(vs.bench_env_id("random", obs), image_obs=True)
    rows = []
    for seed in (0, 1):
        o, _ = env.reset(seed=seed)
        base = env.unwrapped
        rows.append([o["agent_pos"].tolist(), base._data.xpos[base._model.body("block").id].tolist()])
    out[obs] = rows
    env.close()
print(json.dumps(out))
"""
    proc = subprocess.run([rr, "-c", script], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for agent_pos, block in out["state"]:
        assert len(agent_pos) == 21 and agent_pos[18:] == pytest.approx(block, abs=1e-6)
    assert out["state"][0][1] != out["state"][1][1]  # a random block: another place per seed
    assert all(len(agent_pos) == 18 for agent_pos, _ in out["pixels"])


def test_lerobot_update_rate_comes_from_its_learner_log(vs):
    marker = "INFO 2026-11-27 14:16:56 /learner.py:571 [LEARNER] Optimization frequency loop [Hz]: "
    log = "\n".join([marker + "16.0", marker + "12.0", marker + "nan", marker + "inf", marker, marker + "-3",
                     marker + "x", "INFO other line", marker + "20.0"])
    assert vs.lerobot_update_hz(log, utd=2) == 32.0  # median of 12, 16, 20 loops/s, 2 updates each
    assert vs.lerobot_update_hz("no such lines", utd=2) is None


def test_update_only_rate_is_summarized(vs):
    runs = [_run("robot_rl", 0, [[1000, 1.0]]) | {"update_only_per_s": 40.0},
            _run("robot_rl", 1, [[1000, 1.0]]) | {"update_only_per_s": float("nan")},
            _run("lerobot", 0, [[1000, 1.0]]) | {"update_only_per_s": None}]
    out = vs.summarize(runs, budget=1000)["state_fixed"]
    assert out["robot_rl"]["update_only_per_s"] == 40.0 and out["lerobot"]["update_only_per_s"] is None


def test_one_lerobot_checkpoint_per_eval_mark(vs):
    # LeRobot's checkpoints in update order, each with the env step its learner had seen
    at = {"000150": 99, "000300": 99, "000450": 199, "000600": 199, "000750": 299, "000900": 299, "001050": 310}
    assert vs.pick_checkpoints(at, every=150, budget=300) == ["000300", "000900"]
    assert vs.pick_checkpoints(at, every=100, budget=300) == ["000300", "000600", "000900"]
    assert vs.pick_checkpoints({"000150": 400}, every=100, budget=300) == []  # none before the first mark
    assert vs.pick_checkpoints({}, every=100, budget=300) == []


def test_lerobot_env_steps_come_from_its_actor_log(vs):
    log = ("WARNING 2026-11-27 14:09:28 rl/actor.py:728 [ACTOR] Policy FPS 549.1 below required 1000 at step 7\n"
           "garbage line at step 99999\n"
           "INFO 2026-11-27 14:09:40 rl/actor.py:352 [ACTOR] Global step 99: Episode reward: 0.0\n"
           "WARNING 2026-11-27 14:09:41 rl/actor.py:728 [ACTOR] Policy FPS 600.0 below required 1000 at step 100\n")
    steps = vs.actor_steps(log)
    assert [n for _, n in steps] == [7, 99, 100]  # the unstamped line is not a step
    t0 = steps[0][0]
    assert vs.env_step_at(steps, t0 - 1) == 0 and vs.env_step_at(steps, t0) == 7
    assert vs.env_step_at(steps, t0 + 12.5) == 99 and vs.env_step_at(steps, t0 + 1e6) == 100
    assert vs.env_step_at(steps, t0 + 6) == 53  # half-way from step 7 (t0) to step 99 (t0 + 12)
    assert vs.actor_steps("") == []


def _demo_states(vs, n=40):
    """States like the fixed-block demos': some features sweep, some stay put, the gripper 0 or 255."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = np.zeros((n, vs.state_dim("pixels")))  # agent_pos
    x[:, 1] = np.linspace(0.17, 0.41, n)          # a joint that moves 0.24 rad
    x[:, 3] = -2.43 + rng.uniform(0, 1e-4, n)     # one that stays within 0.1 mrad
    x[:, 14] = np.where(np.arange(n) < n // 2, 0.0, 255.0)  # the gripper's control value
    x[:, 15] = np.linspace(0.490, 0.509, n)       # TCP x: 2 cm
    x[:, 17] = np.linspace(0.007, 0.157, n)       # TCP z: 15 cm
    return x


def test_the_state_scaling_maps_the_demo_range_onto_minus_one_to_one(vs):
    import numpy as np

    x = _demo_states(vs)
    scale = vs.state_scale_of(x, 18)
    y = np.stack([vs.scale_state(row, scale) for row in x])
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_allclose(y[:, [1, 14, 17]].min(0), -1.0, atol=1e-5)  # ranges above the floor: [-1, 1]
    np.testing.assert_allclose(y[:, [1, 14, 17]].max(0), 1.0, atol=1e-5)
    assert set(np.round(y[:, 14], 5)) == {-1.0, 1.0}  # the gripper's 0/255 no longer swamps the rest
    # a range under the floor is widened to it: 1 cm of TCP x (2 cm range) is 0.2, not 1.0
    assert np.ptp(y[:, 15]) == pytest.approx(2 * 0.019 / vs.STATE_RANGE_FLOOR, rel=1e-4)
    assert np.abs(y[:, 3]).max() < 0.01  # the near-constant joint stays near 0, not blown up by 1e-4
    assert scale["half_range"][3] == vs.STATE_RANGE_FLOOR / 2
    # online states far outside the demos stay finite and proportionate (the scaling is affine)
    far = x[0].copy()
    far[15] += 0.2
    assert vs.scale_state(far, scale)[15] == pytest.approx(vs.scale_state(x[0], scale)[15] + 4.0, rel=1e-4)
    np.testing.assert_array_equal(vs.scale_state(x[0], None), x[0].astype(np.float32))  # None: as it is


@pytest.mark.parametrize("bad", ["nan", "inf", "shape", "empty", "huge"])
def test_demo_states_that_cannot_make_a_scaling_are_refused(vs, bad):
    import numpy as np

    x = _demo_states(vs)
    if bad == "nan":
        x[3, 15] = np.nan
    elif bad == "inf":
        x[5, 14] = -np.inf
    elif bad == "shape":
        x = x[:, :17]  # 17 numbers where 18 are asked
    elif bad == "empty":
        x = x[:0]
    else:
        x[7, 2] = 1e308 * 10  # overflows to inf
    with pytest.raises(vs.BenchError, match="demo states"):
        vs.state_scale_of(x, 18)


def test_a_huge_but_finite_demo_range_gives_a_finite_scaling(vs):
    import numpy as np

    x = _demo_states(vs)
    x[0, 2], x[1, 2] = -1e30, 1e30
    scale = vs.state_scale_of(x, 18)
    y = vs.scale_state(x[2], scale)
    assert np.isfinite(y).all() and abs(float(y[2])) < 1e-20


@pytest.mark.parametrize("text, word", [
    ("not json", "JSONDecodeError"), ('{"center": [0]}', "KeyError"), ("[1, 2]", "TypeError"),
    ('{"center": [0], "half_range": [1]}', "18 finite"),
    ('{"center": [NaN, %s], "half_range": [%s]}' % (", ".join(["0"] * 17), ", ".join(["1"] * 18)), "18 finite"),
    ('{"center": [%s], "half_range": [%s, 0.0]}' % (", ".join(["0"] * 18), ", ".join(["1"] * 17)), "at least"),
    ('{"center": [%s], "half_range": [%s, -1]}' % (", ".join(["0"] * 18), ", ".join(["1"] * 17)), "at least"),
    ('{"center": [%s], "half_range": [%s, "x"]}' % (", ".join(["0"] * 18), ", ".join(["1"] * 17)), "ValueError"),
])
def test_a_bad_state_scale_file_is_one_line_naming_it(vs, tmp_path, text, word):
    path = tmp_path / "state_scale.json"
    path.write_text(text)
    with pytest.raises(vs.BenchError, match=word) as err:
        vs.read_state_scale(path, 18)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_state_scale_file_round_trips(vs, tmp_path):
    scale = vs.state_scale_of(_demo_states(vs), 18)
    path = tmp_path / "state_scale.json"
    path.write_text(json.dumps(scale))
    assert vs.read_state_scale(path, 18) == scale and vs.recorded_dim(path) == 18
    with pytest.raises(vs.BenchError, match="must be 21 finite"):  # a scaling of another setting's state
        vs.read_state_scale(path, 21)
    with pytest.raises(vs.BenchError, match="missing.json"):
        vs.read_state_scale(tmp_path / "missing.json", 18)
    assert vs.recorded_dim(tmp_path / "missing.json") is None


def test_lerobot_s_state_stats_are_the_identity_on_the_scaled_state(vs):
    spec = {"obs": "state", "block": "fixed", "seed": 0, "env_steps": 2000, "eval_every": 500, "eval_episodes": 20,
            "eval_seed": 10_000, "demos": 10, "batch_size": 256, "utd": 2, "discount": 0.97, "learning_starts": 100,
            "dataset": "d", "demo_dir": "demos", "run_dir": "run", "port": 5555}
    stats = vs.lerobot_config(spec)["policy"]["dataset_stats"]["observation.state"]
    assert stats == {"min": [-1.0] * 21, "max": [1.0] * 21}


def test_the_state_setting_observes_the_block_and_the_pixel_setting_shows_it_in_images(vs):
    """From state both learners see agent_pos and the block's position (21 numbers), so a random
    block is observed; from pixels agent_pos (18) and the cameras: the same length on both sides."""
    assert (vs.state_dim("state"), vs.state_dim("pixels")) == (21, 18)
    spec = {"obs": "state", "block": "random", "seed": 0, "env_steps": 2000, "eval_every": 500, "eval_episodes": 20,
            "eval_seed": 10_000, "demos": 10, "batch_size": 256, "utd": 2, "discount": 0.97, "learning_starts": 100,
            "dataset": "d", "demo_dir": "demos", "run_dir": "run", "port": 5555, "image_size": 64}
    for obs, dim in (("state", 21), ("pixels", 18)):
        policy = vs.lerobot_config({**spec, "obs": obs})["policy"]
        assert policy["input_features"]["observation.state"]["shape"] == [dim]
        assert len(policy["dataset_stats"]["observation.state"]["min"]) == dim


def test_no_runs_times_the_state_and_the_pixel_updates_of_both_sides(vs, pythons, tmp_path, monkeypatch, capsys):
    """``--no-runs``: no demos, no learning runs; each side's update timed in its own python, 3 rounds
    each, from state and, with ``--obs pixels``, from the two cameras at ``--image-size``."""
    calls = []

    def fake_child(python, child, spec, log, pythonpath="", wait=True):
        calls.append((child, spec.get("image_size"), spec["updates"], spec.get("warmup", 20)))
        rate = 40.0 if child.startswith("robot_rl") else 20.0
        return {"updates_per_s": rate / (8.0 if spec.get("image_size") else 1.0)}

    monkeypatch.setattr(vs, "run_child", fake_child)
    assert vs.main([*pythons, "--no-runs", "--obs", "state", "pixels", "--image-size", "64", "--update-speed", "5",
                    "--update-speed-pixels", "2", "--out", str(tmp_path / "out")]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["results"] == {} and record["image_size"] == 64
    speed = record["update_speed"]
    assert speed["eager"]["robot_rl_over_lerobot"] == 2.0 and speed["eager"]["lerobot"]["per_round"] == [20.0] * 3
    pixels = speed["pixels"]
    assert (pixels["image_size"], pixels["updates_timed"]) == (64, 2)
    assert pixels["eager"]["robot_rl"]["median"] == 5.0 and pixels["eager"]["robot_rl_over_lerobot"] == 2.0
    assert set(calls) == {("lerobot_update_speed", 64, 2, 3), ("lerobot_update_speed", None, 5, 20),
                          ("robot_rl_update_speed", 64, 2, 3), ("robot_rl_update_speed", None, 5, 20)}
    assert len(calls) == 12  # 3 rounds x 2 sides x (state, pixels): nothing else ran


# --merge: learners or seeds run as separate bench processes, summarized together

_PROTOCOL = {"env_steps": 4000, "eval_every": 1000, "eval_episodes": 20, "eval_seed": 10_000, "demos": 10,
             "batch_size": 256, "utd": 2, "discount": 0.97, "learning_starts": 100, "init_temperature": 0.01,
             "image_size": 64, "lerobot_fps": 1, "state_scale": {"center": [0.0] * 18, "half_range": [1.0] * 18}}


def _out_folder(root, name, rows, **spec_changes):
    """An ``--out`` folder as a bench process leaves it: ``runs.json`` and each run's spec file."""
    folder = root / name
    for row in rows:
        setting = f"{row['obs']}_{row['block']}" + ("_64px" if row["obs"] == "pixels" else "")
        run = folder / setting / f"{row['learner']}_seed{row['seed']}"
        run.mkdir(parents=True)
        spec = {**_PROTOCOL, "obs": row["obs"], "block": row["block"], "seed": row["seed"], **spec_changes}
        (run / ("train.spec.json" if row["learner"] == "robot_rl" else "eval.spec.json")).write_text(json.dumps(spec))
    (folder / "runs.json").write_text(json.dumps(rows))
    return folder


def _pixel_run(learner, seed, curve, **kw):
    return {**_run(learner, seed, curve, wall=4000.0, steps=4000, updates=7800, **kw), "obs": "pixels"}


def test_merge_summarizes_runs_of_separate_processes_as_one(vs, tmp_path, capsys):
    a = _out_folder(tmp_path, "A", [_pixel_run("robot_rl", 0, [[1000, 0.0], [2000, 1.0]])])
    b = _out_folder(tmp_path, "B", [_pixel_run("lerobot", 0, [[1144, 0.0], [3223, 0.0]])])
    c = _out_folder(tmp_path, "C", [_pixel_run("robot_rl", 1, [[1000, 1.0]]), _pixel_run("lerobot", 1, [[2180, 0.9]])])
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert vs.main(["--merge", str(a), str(b), str(c), "--out", str(tmp_path / "M")]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rr, lr = line["results"]["pixels_fixed"]["robot_rl"], line["results"]["pixels_fixed"]["lerobot"]
    assert rr["steps_to_80_per_seed"] == [2000, 1000] and lr["steps_to_80_per_seed"] == [None, 2180]
    assert (line["budget"], line["seeds"], line["image_size"], line["lerobot_fps"]) == (4000, [0, 1], 64, 1)
    assert len(json.loads((tmp_path / "M" / "runs.json").read_text())) == 4
    assert {p: p.read_bytes() for p in before} == before  # the merged folders are only read


@pytest.mark.parametrize("change, word", [
    ({"eval_episodes": 10}, "eval_episodes 10 (not 20) differs"), ({"env_steps": 6000}, "env_steps"),
    ({"image_size": 48}, "image_size 48"), ({"lerobot_fps": 10}, "lerobot_fps 10"),
    ({"init_temperature": 1.0}, "init_temperature"), ({"utd": 4}, "utd"),
    ({"state_scale": {"center": [0.5] * 18, "half_range": [1.0] * 18}}, "state_scale of pixels fixed differs"),
    ({"seed": 7}, "seed 7 is not the run's 0"), ({"discount": float("nan")}, "discount nan is not a finite"),
    ({"env_steps": "4000"}, "env_steps '4000' is not"), ({"env_steps": 0}, "env_steps 0 is not"),
])
def test_merge_refuses_runs_of_another_protocol_naming_both(vs, tmp_path, capsys, change, word):
    a = _out_folder(tmp_path, "A", [_pixel_run("robot_rl", 0, [[1000, 1.0]])])
    b = _out_folder(tmp_path, "B", [_pixel_run("lerobot", 0, [[1000, 1.0]])], **change)
    c = _out_folder(tmp_path, "C", [_pixel_run("lerobot", 1, [[1000, 1.0]])])
    assert vs.main(["--merge", str(a), str(c), str(b), "--out", str(tmp_path / "M")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and word in err and str(b) in err
    assert "differs" not in word or f"from {a / 'runs.json'} run 0's" in err  # the first run it differs from
    assert not (tmp_path / "M").exists()  # nothing written from a refused merge


@pytest.mark.parametrize("row_change, word", [
    ({"curve": [[1000, float("nan")]]}, "curve point"), ({"curve": [[1000, float("inf")]]}, "curve point"),
    ({"curve": [[1000, 1.5]]}, "curve point"), ({"curve": [[-5, 0.5]]}, "curve point"),
    ({"curve": [[1000.5, 0.5]]}, "curve point"), ({"curve": [["1000", 0.5]]}, "curve point"),
    ({"curve": [[1000, True]]}, "curve point"), ({"curve": [[1000]]}, "curve point"),
    ({"curve": [[9000, 1.0]]}, "past the budget 4000"), ({"curve": "up"}, "curve is not a list"),
    ({"learner": "sb3"}, "learner 'sb3'"), ({"obs": "depth"}, "obs 'depth'"), ({"seed": -1}, "seed -1"),
    ({"seed": "0"}, "seed '0'"), ({"seed": 1e300}, "seed"), ({"updates": -3}, "updates -3"),
    ({"eval_env_steps_in_wall": "many"}, "eval_env_steps_in_wall"), ({"image_size": "../x"}, "image_size"),
])
def test_merge_refuses_a_malformed_run_naming_its_file_and_field(vs, tmp_path, capsys, row_change, word):
    good = _pixel_run("robot_rl", 0, [[1000, 1.0]])
    folder = _out_folder(tmp_path, "A", [good])
    (folder / "runs.json").write_text(json.dumps([{**good, **row_change}]))
    assert vs.main(["--merge", str(folder), "--out", str(tmp_path / "M")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and word in err and f"{folder / 'runs.json'} run 0" in err


def test_merge_refuses_missing_broken_and_clashing_folders(vs, tmp_path, capsys):
    a = _out_folder(tmp_path, "A", [_pixel_run("robot_rl", 0, [[1000, 1.0]])])
    twin = _out_folder(tmp_path, "Twin", [_pixel_run("robot_rl", 0, [[1000, 0.0]])])
    broken = tmp_path / "Broken"
    broken.mkdir()
    (broken / "runs.json").write_text('[{"learner": "robot_rl", "obs"')  # cut off mid-write
    no_spec = _out_folder(tmp_path, "NoSpec", [_pixel_run("lerobot", 0, [[1000, 1.0]])])
    (no_spec / "pixels_fixed_64px" / "lerobot_seed0" / "eval.spec.json").unlink()
    empty = tmp_path / "Empty"
    empty.mkdir()
    (empty / "runs.json").write_text("[]")
    for folders, out, word in (([a, twin], tmp_path / "M", "robot_rl pixels fixed 0 is also in"),
                               ([a, broken], tmp_path / "M", f"{broken / 'runs.json'}: unreadable"),
                               ([a, tmp_path / "Nope"], tmp_path / "M", "Nope/runs.json: unreadable"),
                               ([a, no_spec], tmp_path / "M", "0 spec files (eval.spec.json)"),
                               ([empty], tmp_path / "M", "--merge: no run with a spec"),
                               ([a, twin], twin, "--out:")):
        assert vs.main(["--merge", *map(str, folders), "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and word in err, err
    assert json.loads((twin / "runs.json").read_text())[0]["curve"] == [[1000, 0.0]]  # the --out clash kept it
    # a LeRobot run that failed before its evaluation has no full spec: its error is carried, no figures
    failed = {**_pixel_run("lerobot", 0, []), "error": "LeRobot's actor failed (exit 1, log x)"}
    (no_spec / "runs.json").write_text(json.dumps([failed]))
    assert vs.main(["--merge", str(a), str(no_spec), "--out", str(tmp_path / "M")]) == 0
    lerobot = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["results"]["pixels_fixed"]["lerobot"]
    assert lerobot["errors"] == ["seed 0: LeRobot's actor failed (exit 1, log x)"] and lerobot["steps_to_80"] is None
    assert vs.main(["--merge", str(no_spec), "--out", str(tmp_path / "M")]) == 2  # no protocol to report
    assert "no run with a spec" in capsys.readouterr().err


def test_merge_needs_no_virtualenvs(vs, tmp_path, monkeypatch):
    monkeypatch.delenv("ROBOT_RL_LEROBOT_PYTHON", raising=False)
    monkeypatch.delenv("LEROBOT_PYTHON", raising=False)
    assert vs.parse_args(["--merge", str(tmp_path)]).lerobot_python is None  # not checked: nothing runs


def test_a_bench_process_s_pixel_runs_merge_at_their_image_size(vs, pythons, tmp_path, monkeypatch, capsys):
    """The runs a bench process leaves (rows and spec files, the children faked) are what --merge reads;
    two image sizes in one --out stay apart because each row says its own."""
    def fake_child(python, child, spec, log, pythonpath="", wait=True):
        log.with_suffix(".spec.json").write_text(json.dumps(spec))  # as run_child writes it
        if child == "record":
            return {"episodes": 10, "expert_successes": 10,
                    "state_scale": {"center": [0.0] * 18, "half_range": [1.0] * 18}}
        if child == "robot_rl_train":
            return {"curve": [[500, spec["image_size"] / 100]], "wall_s": 10.0, "env_steps": 500, "updates": 975}
        return {}

    monkeypatch.setattr(vs, "run_child", fake_child)
    out = tmp_path / "A"
    for size in ("48", "64"):
        assert vs.main([*pythons, "--obs", "pixels", "--seeds", "0", "--learners", "robot_rl", "--image-size", size,
                        "--env-steps", "500", "--eval-every", "500", "--update-speed", "0",
                        "--update-speed-pixels", "0", "--out", str(out)]) == 0
        assert json.loads((out / "runs.json").read_text())[0]["image_size"] == int(size)
    capsys.readouterr()
    assert vs.main(["--merge", str(out), "--out", str(tmp_path / "M")]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["image_size"] == 64 and line["results"]["pixels_fixed"]["robot_rl"]["final_success"] == [0.64]
