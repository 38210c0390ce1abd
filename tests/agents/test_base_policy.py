"""The base-policy interface: ACT's temporal ensembling by hand, the ``module:factory`` loader and
every refusal it makes at load, and the actor's guard holding and counting at run time."""

from __future__ import annotations

import math
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest
from point_reach import make_point_env

from robot_rl.agents.base_policy import (
    BasePolicyError,
    CallablePolicy,
    ChunkedPolicy,
    TemporalEnsemble,
    check_base,
    is_entry_point,
    load_entry_point,
)
from robot_rl.data.rollout import ActorLoop

OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (5,), np.float32)})
ACT = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)


# --- temporal ensembling ---------------------------------------------------------------------


def hand_chunks() -> list[np.ndarray]:
    """Chunks of length 3 for 1-D actions, predicted at steps 0..3: row k of chunk s is for step s + k."""
    return [np.array([[0.1], [0.2], [0.3]]), np.array([[-0.4], [0.5], [0.6]]),
            np.array([[0.7], [-0.8], [0.9]]), np.array([[0.0], [0.25], [-0.5]])]


@pytest.mark.parametrize("m", [0.0, 0.01, 0.5, 3.0])
def test_ensemble_weights_the_oldest_prediction_most_as_act_does(m):
    c = hand_chunks()
    w = [math.exp(-m * i) for i in range(3)]  # w[0]: the oldest live prediction
    want = [
        c[0][0, 0],
        (w[0] * c[0][1, 0] + w[1] * c[1][0, 0]) / (w[0] + w[1]),
        (w[0] * c[0][2, 0] + w[1] * c[1][1, 0] + w[2] * c[2][0, 0]) / sum(w),
        # chunk 0 has run out at step 3: chunks 1, 2, 3 remain, chunk 1 the oldest
        (w[0] * c[1][2, 0] + w[1] * c[2][1, 0] + w[2] * c[3][0, 0]) / sum(w),
    ]
    ensemble = TemporalEnsemble(m)
    got = [float(ensemble.step(chunk)[0]) for chunk in c]
    assert got == pytest.approx(want, abs=1e-6)
    assert len(ensemble) == 2  # chunks 2 and 3 still hold actions for later steps


def test_a_large_decay_follows_the_oldest_plan_and_reset_forgets_it():
    ensemble = TemporalEnsemble(50.0)
    c = hand_chunks()
    assert [float(ensemble.step(chunk)[0]) for chunk in c[:3]] == pytest.approx([0.1, 0.2, 0.3], abs=1e-6)
    ensemble.reset()
    assert len(ensemble) == 0
    assert float(ensemble.step(c[3])[0]) == pytest.approx(0.0)  # a fresh episode: only the new chunk


def test_a_chunk_of_one_is_its_own_action():
    ensemble = TemporalEnsemble(0.01)
    for value in (0.3, -0.7, 0.9):
        assert ensemble.step(np.array([[value, -value]]))[0] == pytest.approx(value)
        assert len(ensemble) == 0


def test_a_nan_chunk_poisons_its_own_step_only():
    ensemble = TemporalEnsemble(0.0)
    ensemble.step(np.array([[0.1], [0.2], [0.3]]))
    bad = ensemble.step(np.array([[np.nan], [np.nan], [np.nan]]))
    assert np.isnan(bad).all()
    after = ensemble.step(np.array([[0.5], [0.5], [0.5]]))
    assert after[0] == pytest.approx((0.3 + 0.5) / 2)  # the NaN chunk was dropped after its step


@pytest.mark.parametrize("decay", [-1.0, float("nan"), float("inf")])
def test_ensemble_refuses_a_bad_decay(decay):
    with pytest.raises(ValueError):
        TemporalEnsemble(decay)


def test_chunked_policy_resets_its_ensemble_at_each_episode():
    calls = []

    def predict(obs):
        calls.append(obs["state"][0])
        return np.tile(np.array([0.1, 0.2, 0.3], np.float32), (4, 1)) * (len(calls))

    base = ChunkedPolicy(predict, "test", OBS, ACT, decay=0.0)
    first = base.act({"state": np.zeros(5, np.float32)})
    second = base.act({"state": np.zeros(5, np.float32)})
    assert first == pytest.approx([0.1, 0.2, 0.3]) and second == pytest.approx([0.15, 0.3, 0.45])
    base.reset()
    assert base.act({"state": np.zeros(5, np.float32)}) == pytest.approx([0.3, 0.6, 0.9])


# --- the module:factory loader ---------------------------------------------------------------


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    """A folder on sys.path for modules a test writes; they are unloaded after it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("bp_"):
            del sys.modules[name]


def write(directory, name: str, source: str) -> str:
    (directory / f"{name}.py").write_text(textwrap.dedent(source))
    return name


def test_entry_point_factory_gets_the_spaces_and_its_policy_acts(module_dir):
    write(module_dir, "bp_good", """
        import numpy as np

        class Toward:
            def __init__(self, obs_space, action_space):
                self.obs_space, self.action_space_seen = obs_space, action_space
                self.resets = 0
            def act(self, obs):
                s = obs["state"]
                grip = 1.0 if np.hypot(s[2] - s[0], s[3] - s[1]) < 0.2 else -1.0
                return np.array([*np.clip((s[2:4] - s[0:2]) / 0.15, -1, 1), grip], np.float32)
            def reset(self):
                self.resets += 1

        def make(obs_space, action_space):
            make.made = Toward(obs_space, action_space)
            return make.made
        """)
    base = load_entry_point("bp_good:make", OBS, ACT)
    import bp_good

    made = bp_good.make.made
    assert made.obs_space is OBS and made.action_space_seen is ACT
    action = base.act({"state": np.array([0.0, 0.0, 0.03, -0.6, 0.0], np.float32)})
    assert action == pytest.approx([0.2, -1.0, -1.0])
    env = make_point_env()
    loop = ActorLoop(env, base.guarded(env), seed=3)
    resets = made.resets
    steps = loop.run_episode()
    assert made.resets == resets + 1  # reset() at the episode's start
    assert steps[-1].success  # the hand-written policy solves the point task
    assert base.source == "bp_good:make"


def test_entry_point_with_chunks_is_temporally_ensembled(module_dir):
    write(module_dir, "bp_chunks", """
        import numpy as np

        class Plan:
            def __init__(self):
                self.t = 0
            def act_chunk(self, obs):
                self.t += 1
                return np.full((4, 3), 0.1 * self.t, np.float32)
            def reset(self):
                self.t = 0

        def make(obs_space, action_space):
            return Plan()
        """)
    base = load_entry_point("bp_chunks:make", OBS, ACT, ensemble_decay=0.0)
    assert isinstance(base, ChunkedPolicy)
    obs = {"state": np.zeros(5, np.float32)}
    assert base.act(obs) == pytest.approx([0.1] * 3)
    assert base.act(obs) == pytest.approx([0.15] * 3)  # mean of 0.1 and 0.2
    assert base.act(obs) == pytest.approx([0.2] * 3)


REFUSALS = {
    "import_error": ("bp_missing_dep", "import not_a_module_anywhere\ndef make(o, a):\n    return None\n",
                     "bp_missing_dep:make", "cannot import bp_missing_dep (ModuleNotFoundError: No module named "
                                            "'not_a_module_anywhere')"),
    "syntax_error": ("bp_syntax", "def make(o, a)\n    return 1\n", "bp_syntax:make", "cannot import bp_syntax "
                                                                                       "(SyntaxError:"),
    "no_factory": ("bp_nofactory", "x = 1\n", "bp_nofactory:make", "bp_nofactory has no 'make'"),
    "not_callable": ("bp_notcallable", "make = 3\n", "bp_notcallable:make", "'make' is not callable"),
    "factory_raises": ("bp_raises", "def make(o, a):\n    raise RuntimeError('no GPU here')\n", "bp_raises:make",
                       "its factory raised RuntimeError: no GPU here"),
    "no_act": ("bp_noact", "def make(o, a):\n    return object()\n", "bp_noact:make",
               "its factory returned a object, which has no act(obs) or act_chunk(obs)"),
    "nan": ("bp_nan", "import numpy as np\nclass P:\n    def act(self, obs):\n        return np.full(3, np.nan)\n"
                      "def make(o, a):\n    return P()\n", "bp_nan:make",
            "the policy gives non-finite actions ([nan, nan, nan]) on sampled observations"),
    "inf_in_a_later_chunk_row": (
        "bp_infrow", "import numpy as np\nclass P:\n    def act_chunk(self, obs):\n        c = np.zeros((3, 3))\n"
                     "        c[2, 1] = np.inf\n        return c\ndef make(o, a):\n    return P()\n",
        "bp_infrow:make", "the policy gives non-finite actions ([0, inf, 0]) on sampled observations"),
    "out_of_space": ("bp_big", "import numpy as np\nclass P:\n    def act(self, obs):\n"
                               "        return np.array([0, 2.0, 0])\ndef make(o, a):\n    return P()\n", "bp_big:make",
                     "an action outside the action space ([0, 2, 0]: dimension 1 is 2, the space is [-1, 1])"),
    "other_action_shape": ("bp_shape", "import numpy as np\nclass P:\n    def act(self, obs):\n"
                                       "        return np.zeros(7)\ndef make(o, a):\n    return P()\n", "bp_shape:make",
                           "an action of shape (7,) (the action space's is (3,))"),
    "raises_when_acting": ("bp_actraise", "class P:\n    def act(self, obs):\n        return obs['image']\n"
                                          "def make(o, a):\n    return P()\n", "bp_actraise:make",
                           "the policy fails on sampled observations (KeyError: 'image')"),
    "declares_other_spaces": (
        "bp_spaces", "import gymnasium as gym\nimport numpy as np\nclass P:\n"
                     "    observation_space = gym.spaces.Dict(\n"
                     "        {'state': gym.spaces.Box(-np.inf, np.inf, (9,), np.float32)})\n"
                     "    def act(self, obs):\n        return np.zeros(3)\ndef make(o, a):\n    return P()\n",
        "bp_spaces:make", "was built for other spaces: observation 'state' has shape (9,), the task's is (5,)"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_bad_entry_point_is_refused_at_load_in_one_line_naming_it(module_dir, case):
    name, source, spec, fragment = REFUSALS[case]
    (module_dir / f"{name}.py").write_text(source)
    with pytest.raises(BasePolicyError) as err:
        load_entry_point(spec, OBS, ACT)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"base policy {spec}"), message
    assert fragment in message, message
    assert err.value.exit_code == 2


@pytest.mark.parametrize("text,is_ep", [("pkg.mod:make", True), ("mod:Class.build", True), ("runs/bc", False),
                                        ("C:/runs", False), ("mod:", False), (":make", False), ("a b:c", False)])
def test_what_reads_as_an_entry_point(text, is_ep):
    assert is_entry_point(text) is is_ep


def test_an_existing_path_is_never_an_entry_point(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs:bc").mkdir()
    assert not is_entry_point("runs:bc")


# --- at run time -------------------------------------------------------------------------------


class Flaky:
    """Sound on every observation the load check samples; NaN, inf, huge or off-shape on cue."""

    def __init__(self) -> None:
        self.bad: object = None

    def act(self, obs):
        if self.bad is not None:
            return self.bad
        return np.array([0.5, -0.5, 1.0], np.float32)


@pytest.mark.parametrize("bad", [np.full(3, np.nan), np.array([0.0, np.inf, 0.0]), np.array([1e30, 0.0, 0.0]),
                                 np.zeros(4), "go", None])
def test_a_bad_action_at_run_time_holds_the_arm_and_is_counted(bad):
    flaky = Flaky()
    base = CallablePolicy(flaky.act, "flaky", OBS, ACT)
    check_base(base, OBS, ACT)  # passes at load
    env = make_point_env()
    guard = base.guarded(env)
    loop = ActorLoop(env, guard, seed=0)
    loop.reset()
    good = loop.step()
    assert good.action == pytest.approx([0.5, -0.5, 1.0]) and guard.refused == 0
    flaky.bad = bad if bad is not None else object()
    held = loop.step()
    assert held.action == pytest.approx([0.0, 0.0, 0.0])  # the hold action: zero motion (not a RobotEnv)
    assert guard.refused == 1 and guard.episode_refused == 1 and guard.holding
    assert guard.status()["refused_actions"] == 1


def test_fast_alternating_good_and_bad_actions_are_counted_exactly():
    rng = np.random.default_rng(0)
    flaky = Flaky()
    base = CallablePolicy(flaky.act, "flaky", OBS, ACT)
    env = make_point_env(max_steps=10_000)
    guard = base.guarded(env)
    loop = ActorLoop(env, guard, seed=0)
    poison = [np.full(3, np.nan), np.array([np.inf, 0, 0]), np.array([-np.inf, 0, 0]), np.array([0, 0, 1e300]),
              np.array([0, 1.01, 0])]
    expected = 0
    for i in range(2000):
        bad = rng.random() < 0.5
        flaky.bad = poison[i % len(poison)] if bad else None
        step = loop.step()
        expected += int(bad)
        assert np.isfinite(step.action).all() and np.all(np.abs(step.action) <= 1.0)
        assert step.action == pytest.approx([0, 0, 0] if bad else [0.5, -0.5, 1.0])
        assert guard.holding is bad
        if step.last:
            break
    assert guard.refused == expected > 0


def test_a_chunked_base_emitting_nan_holds_one_step_then_recovers():
    state = {"bad": False}

    def predict(obs):
        return np.full((4, 3), np.nan) if state["bad"] else np.full((4, 3), 0.4, np.float32)

    base = ChunkedPolicy(predict, "chunks", OBS, ACT, decay=0.01)
    check_base(base, OBS, ACT)
    env = make_point_env()
    guard = base.guarded(env)
    loop = ActorLoop(env, guard, seed=0)
    assert loop.step().action == pytest.approx([0.4] * 3)
    state["bad"] = True
    assert loop.step().action == pytest.approx([0.0] * 3) and guard.refused == 1
    state["bad"] = False
    assert loop.step().action == pytest.approx([0.4] * 3) and guard.refused == 1
