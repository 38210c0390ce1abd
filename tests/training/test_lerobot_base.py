"""A LeRobot policy folder as a base policy: LeRobot's own classes in LeRobot's own process, asked for
actions over a pipe (robot_rl/training/lerobot_policy.py).

Without LeRobot, a stand-in child (tests/support/fake_lerobot_child.py) speaks the same frames and
misbehaves on request: every bad folder, python or child is one line at load (exit 2 from the CLI), and
a child that dies or answers garbage mid-episode gives held, counted steps while the episode goes on.

With LeRobot (``ROBOT_RL_LEROBOT_PYTHON`` naming a virtualenv's python where ``lerobot`` is installed),
a small ACT policy is trained by LeRobot's own ``lerobot-train`` on PickCube demos exported to v3, and
runs as the base of a robot_rl sim episode; skipped with one line otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from robot_rl.agents.base_policy import BasePolicyError
from robot_rl.training import lerobot_policy
from robot_rl.training.base_loader import load_base_policy
from robot_rl.training.lerobot_policy import LeRobotPolicy

SUPPORT = Path(__file__).resolve().parents[1] / "support"
OBS = gym.spaces.Dict({
    "front": gym.spaces.Box(0, 255, (8, 8, 3), np.uint8),
    "state": gym.spaces.Box(-np.inf, np.inf, (6,), np.float32),
})
ACTION = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)


def policy_folder(folder: Path, *, kind: str = "act", inputs: dict | None = None, action: int = 4,
                  weights: bool = True) -> Path:
    """A folder laid out as LeRobot's save_pretrained writes one (config.json with type and features)."""
    folder.mkdir(parents=True, exist_ok=True)
    inputs = inputs if inputs is not None else {"observation.state": {"type": "STATE", "shape": [6]},
                                                "observation.images.front": {"type": "VISUAL", "shape": [3, 8, 8]}}
    config = {"type": kind, "input_features": inputs,
              "output_features": {"action": {"type": "ACTION", "shape": [action]}}}
    (folder / "config.json").write_text(json.dumps(config))
    if weights:
        (folder / "model.safetensors").write_bytes(b"\x00" * 8)
    return folder


@pytest.fixture
def fake_python(tmp_path, monkeypatch) -> Path:
    """A 'python' that runs the stand-in child; its behaviour set through FAKE_LEROBOT."""
    wrapper = tmp_path / "fake-python"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {SUPPORT / 'fake_lerobot_child.py'} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.delenv(lerobot_policy.PYTHON_ENV, raising=False)
    monkeypatch.setenv("FAKE_LEROBOT", "ok")
    return wrapper


def observation(state) -> dict[str, np.ndarray]:
    return {"front": np.full((8, 8, 3), 7, np.uint8), "state": np.asarray(state, np.float32)}


def test_the_child_acts_on_mapped_features_and_its_latency_is_measured(tmp_path, fake_python):
    base = load_base_policy(policy_folder(tmp_path / "act"), OBS, ACTION, lerobot_python=str(fake_python))
    assert isinstance(base, LeRobotPolicy) and base.features == {"observation.state": "state",
                                                                  "observation.images.front": "front"}
    base.reset()
    got = base.act(observation([0.1, -0.2, 0.3, 0.05, 9, 9]))
    assert got.dtype == np.float32 and np.allclose(got, [0.2, -0.4, 0.6, 0.1])
    for _ in range(50):
        base.act(observation(np.linspace(-0.4, 0.4, 6)))
    status = base.status()
    assert status["failures"] == 0 and status["calls"] >= 51 and len(base.latencies) >= 51
    assert 0 < status["latency"]["p50_ms"] <= status["latency"]["p95_ms"] < 5000
    base.close()
    assert base.child is None


def test_its_latency_reaches_the_residual_actor_s_status_and_diagnostics(tmp_path, fake_python):
    """A residual actor on a LeRobot base reports the base's own figures under ``base_policy``, which the
    actor node puts in its ``~/status``; ``/diagnostics`` flattens them to dotted keys."""
    from robot_rl.agents.residual import ResidualActor
    from robot_rl.nodes.diagnostics import diagnostic_fields

    base = load_base_policy(policy_folder(tmp_path / "act"), OBS, ACTION, lerobot_python=str(fake_python))
    env = gym.make("Pendulum-v1")  # any env: only its action space (the hold and the bounds) is read
    env.action_space = ACTION
    actor = ResidualActor(base, env, np.full(4, 0.1))
    actor.reset()
    for _ in range(20):
        actor.base_action(observation(np.linspace(-0.4, 0.4, 6)))
    status = actor.status()
    own = status["base_policy"]
    assert own["calls"] >= 20 and own["failures"] == 0 and status["base_refused"] == 0
    assert 0 < own["latency"]["p50_ms"] <= own["latency"]["max_ms"] < 5000
    values = dict(diagnostic_fields(status, name="/actor_node").values)
    assert float(values["base_policy.latency.p50_ms"]) == own["latency"]["p50_ms"]
    assert values["base_policy.calls"] == str(own["calls"])
    base.close()


def test_attacked_observations_come_back_held_or_clipped_and_counted(tmp_path, fake_python):
    """NaN and inf states give non-finite actions (the guard holds them), huge ones are clipped (counted);
    alternating good and bad steps cost only the bad ones."""
    base = load_base_policy(policy_folder(tmp_path / "act"), OBS, ACTION, lerobot_python=str(fake_python))
    guard = base.guarded(gym.make("Pendulum-v1"))  # any env: the guard's hold is zeros there
    guard.action_space = ACTION
    held, clipped_before = 0, base.clipped
    for t in range(40):
        bad = [np.nan, np.inf, -np.inf, 1e30][(t // 2) % 4] if t % 2 else 0.25
        action = guard.act(observation([bad, 0.1, 0.1, 0.1, 0, 0]))
        assert np.isfinite(action).all() and ACTION.contains(action)
        held += int(guard.holding)
        if not t % 2:
            assert np.allclose(action, [0.5, 0.2, 0.2, 0.2])
    assert held == 5 * 3 and guard.refused == 15  # NaN, inf, -inf on the odd steps: 5 each
    assert base.clipped - clipped_before == 5  # 1e30 * 2 clipped to 1.0
    assert base.failures == 0  # the child answered every step
    base.close()


def test_a_child_that_dies_or_answers_garbage_mid_episode_is_held_and_counted(tmp_path, fake_python, monkeypatch):
    for mode in ("die_after:3", "garbage_after:3", "short_after:3"):
        monkeypatch.setenv("FAKE_LEROBOT", mode)
        # built without the load check (which asks for actions itself): the counts start at 0
        base = LeRobotPolicy(policy_folder(tmp_path / mode.replace(":", "_")), OBS, ACTION, python=str(fake_python))
        actions = [base.act(observation([0.1] * 6)) for _ in range(6)]
        assert all(np.allclose(a, 0.2) for a in actions[:3])
        assert all(np.isnan(a).all() for a in actions[3:]), mode
        assert base.failures == 3 and base.child is not None and not base.child.alive()
        words = {"die": "exited (exit status 4)", "garbage": "answered garbage (header is not JSON)",
                 "short": "answered an action of shape [3]"}[mode.split("_")[0]]
        assert words in base.last_failure and "\n" not in base.last_failure


def test_bad_folders_pythons_and_children_are_one_line_at_load(tmp_path, fake_python, monkeypatch):
    def refused(folder, python=str(fake_python)) -> str:
        with pytest.raises(BasePolicyError) as err:
            load_base_policy(folder, OBS, ACTION, lerobot_python=python)
        message = str(err.value)
        assert "\n" not in message, message
        return message

    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text('{"model_type": "resnet", "architectures": ["ResNetModel"]}')
    assert refused(hf) == (f"{hf / 'config.json'}: not a LeRobot policy folder (a Hugging Face 'model_type' "
                           "config; LeRobot's save_pretrained writes 'type': one of act, diffusion)")
    assert refused(policy_folder(tmp_path / "sac", kind="sac")) == (
        f"{tmp_path / 'sac/config.json'}: LeRobot policy type 'sac' is not one robot_rl runs as a base "
        "(act, diffusion)")
    assert "no model.safetensors beside config.json" in refused(policy_folder(tmp_path / "nw", weights=False))
    bad_json = policy_folder(tmp_path / "badjson")
    (bad_json / "config.json").write_text("{not json")
    assert refused(bad_json).startswith(f"{bad_json / 'config.json'}: not readable JSON")
    ok = policy_folder(tmp_path / "ok")
    assert refused(ok, python=str(tmp_path / "no/python")) == (
        f"agent.base.lerobot_python: {tmp_path / 'no/python'} is not an executable file (LeRobot's virtualenv python)")
    assert refused(ok, python=None).startswith("agent.base.lerobot_python is not set: a LeRobot policy runs in")
    monkeypatch.setenv(lerobot_policy.PYTHON_ENV, str(tmp_path / "nope"))
    assert refused(ok, python=None).startswith(f"${lerobot_policy.PYTHON_ENV}: {tmp_path / 'nope'} is not an")
    monkeypatch.setattr(lerobot_policy, "LOAD_TIMEOUT_S", 3.0)
    for mode, words in (("die", "exited (exit status 3): ModuleNotFoundError: No module named 'lerobot'"),
                        ("garbage", "answered garbage (header length"),
                        ("hang", "gave no answer in time (3 s); stopped it"),
                        ("wrong", "answered 'action' where 'ready' was due")):
        monkeypatch.setenv("FAKE_LEROBOT", mode)
        started = time.monotonic()
        message = refused(ok)
        assert message.startswith(f"LeRobot policy {ok} (python {fake_python}): ") and words in message, message
        assert time.monotonic() - started < 30
    monkeypatch.setenv("FAKE_LEROBOT", "ok")
    top = policy_folder(tmp_path / "top", inputs={"observation.images.top": {"type": "VISUAL", "shape": [3, 8, 8]}})
    assert refused(top) == (f"{top / 'config.json'}: input feature 'observation.images.top' is not an observation "
                            "of this task (it has observation.images.front, observation.state)")
    big = policy_folder(tmp_path / "big", inputs={"observation.images.front": {"type": "VISUAL", "shape": [3, 16, 16]}})
    assert refused(big) == (f"{big / 'config.json'}: input feature 'observation.images.front' has shape [16, 16, 3], "
                            "the task's 'front' [8, 8, 3]")
    assert "its action has shape [7], the task's [4]" in refused(policy_folder(tmp_path / "seven", action=7))


def test_the_cli_refuses_a_policy_folder_of_another_kind_with_exit_2(tmp_path, capsys):
    from robot_rl.cli import main

    pytest.importorskip("mujoco")
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text('{"architectures": ["Other"]}')
    code = main(["train", "--config", "pick_cube", "--run-dir", str(tmp_path / "run"), "--no-progress",
                 "--set", "agent.base.mode=residual", "--set", f"agent.base.source={hf}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and f"agent.base.source: {hf / 'config.json'}: not a " \
        "LeRobot policy folder (a Hugging Face 'architectures' config" in err, err
    assert not (tmp_path / "run" / "checkpoint").exists()


# --- LeRobot itself ------------------------------------------------------------------------


def _lerobot_python() -> str:
    python = os.environ.get(lerobot_policy.PYTHON_ENV)
    if not python or not Path(python).is_file():
        pytest.skip(f"LeRobot policies need lerobot's own virtualenv: set {lerobot_policy.PYTHON_ENV}")
    probe = subprocess.run([python, "-c", "import lerobot.policies.act.modeling_act, lerobot.scripts.lerobot_train"],
                           capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"{python} cannot import LeRobot's ACT and trainer: {last}")
    return python


def test_an_act_policy_lerobot_trained_on_exported_demos_drives_a_sim_episode(tmp_path, capsys):
    """LeRobot's own lerobot-train fits a tiny ACT to PickCube pixel demos exported to v3; saved with
    save_pretrained, it is the base of a residual robot_rl train run on the sim arm."""
    python = _lerobot_python()
    pytest.importorskip("mujoco")
    from robot_rl.cli import main

    assert main(["record-demos", "--config", "pick_cube_pixels", "--episodes", "2",
                 "--out", str(tmp_path / "demos")]) == 0
    assert main(["demos", "export", "--format", "lerobot", str(tmp_path / "demos"), str(tmp_path / "ds")]) == 0
    train = [python, "-m", "lerobot.scripts.lerobot_train", "--dataset.repo_id=local/robot_rl",
             f"--dataset.root={tmp_path / 'ds'}", "--dataset.video_backend=pyav", "--policy.type=act",
             "--policy.device=cpu", "--policy.push_to_hub=false", "--policy.pretrained_backbone_weights=null",
             "--policy.dim_model=64", "--policy.n_heads=2", "--policy.dim_feedforward=128",
             "--policy.n_encoder_layers=1", "--policy.n_decoder_layers=1", "--policy.chunk_size=5",
             "--policy.n_action_steps=5", "--policy.use_vae=false", "--steps=4", "--batch_size=2",
             "--num_workers=0", "--save_freq=4", "--log_freq=2", "--eval_freq=0", "--wandb.enable=false",
             f"--output_dir={tmp_path / 'act'}"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(train, capture_output=True, text=True, timeout=900, env={**env, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    folder = tmp_path / "act/checkpoints/last/pretrained_model"
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
    capsys.readouterr()
    code = main(["train", "--config", "pick_cube_pixels", "--run-dir", str(tmp_path / "run"), "--no-progress",
                 "--set", "agent.base.mode=residual", "--set", f"agent.base.source={folder}",
                 "--set", f"agent.base.lerobot_python={python}", "--set", "train.total_env_steps=20",
                 "--set", "train.eval_every=20", "--set", "train.eval_episodes=1", "--set", "train.learning_starts=10",
                 "--set", "train.batch_size=8", "--set", "agent.hidden_dims=[16,16]", "--set", "train.torch_threads=1",
                 "--set", "train.scripted_demos=0", "--set", f"train.demos={tmp_path / 'demos'}"])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0, out[-5:]
    last = json.loads(out[-1])
    assert last["env_steps"] >= 20 and last["eval_success_rate"] is not None
    # the same folder, loaded directly: actions from the child, finite and in the space, latency measured
    from robot_rl.assemble import make_env
    from robot_rl.paths import resolve_config
    from robot_rl.tasks import load_config
    from robot_rl.training.base_rl import base_fingerprint
    from robot_rl.training.checkpoint import load_checkpoint

    sim = make_env(load_config(resolve_config("pick_cube_pixels")))
    base = load_base_policy(folder, sim.observation_space, sim.action_space, lerobot_python=python)
    guard = base.guarded(sim)
    obs, _ = sim.reset(seed=0)
    guard.reset()
    for _ in range(12):
        action = guard.act(obs)
        assert np.isfinite(action).all() and sim.action_space.contains(action)
        obs, _, terminated, truncated, _ = sim.step(action)
        if terminated or truncated:
            break
    status = base.status()
    assert status["failures"] == 0 and guard.refused == 0 and status["calls"] >= 12
    # the run recorded this base, and a second child acts as the run's did (what eval and resume check)
    state, _ = load_checkpoint(tmp_path / "run", buffer_names=())
    assert state["base"]["mode"] == "residual" and state["base"]["source"] == str(folder)
    recorded = np.asarray(state["base"]["fingerprint"])
    assert np.isfinite(recorded).all() and np.abs(recorded).max() > 0
    np.testing.assert_allclose(base_fingerprint(base, sim.observation_space), recorded, atol=1e-5)
    print("lerobot base:", json.dumps(status))
    base.close()
    sim.close()
