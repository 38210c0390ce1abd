"""Human in the loop, end to end in sim: learned reward + simulated intervener + SAC.

PickCube with the cameras on: a reward classifier trained on ground-truth-labelled
frames decides success (the policy never sees ground truth), the simulated intervener
takes over with the scripted expert when the policy stalls or drifts, and the agent
learns from proprioception (``env.policy_keys: [state]``) so the run fits a CPU.
Checked: the reward is the classifier's, intervened transitions are in both buffers,
and ground-truth eval success rises over the run. Figures with and without
interventions at full budget: bench/hil_sim.py.

The run stops at the first evaluation that reaches the 0.6 the test asks
(``train.stop_at_success``). The budget has a margin: with 20 scripted demos the
ground-truth eval curve (10 episodes at 1k..4k env steps, run to the end) was
[0, .9, 1, 1], [0, 0, .9, .9] and [0, 0, .5, .9] for seeds 0, 1 and 2, and [0, .5, .7, .8]
for seed 0 later; with 10 demos the last eval of a seed was 0.9 at best and the first good
eval came only at 3k (a curve that a changed dependency could push under the bar).
"""

import numpy as np
import pytest

from robot_rl.assemble import reward_recording_env
from robot_rl.envs.intervention import HumanIntervention
from robot_rl.paths import resolve_config
from robot_rl.reward.collect import record_sim
from robot_rl.reward.dataset import load_frames
from robot_rl.reward.train import save_result, train_classifier
from robot_rl.reward.wrapper import ClassifierReward
from robot_rl.tasks import load_config
from robot_rl.training.trainer import Trainer

pytest.importorskip("mujoco")

REWARD = ["reward.image_size=[48,48]", "reward.train_steps=800", "reward.batch_size=32", "reward.eval_every=100",
          "reward.learning_rate=0.001", "reward.torch_threads=1", "reward.min_accuracy=0.95", "reward.max_fpr=0.04",
          "reward.min_recall=0.8", "reward.target_fpr=0.02"]
RUN = ["seed=0", "task.params.cube_xy_range=[0.02, 0.02]", "task.params.cube_yaw_range=0.0",
       "env.obs_mode=both", "env.policy_keys=[state]", "intervention.device=simulated",
       "train.scripted_demos=20", "train.demos=null", "train.total_env_steps=4000", "train.eval_every=1000",
       "train.eval_episodes=10", "train.stop_at_success=0.6", "train.checkpoint_every=0", "train.torch_threads=1",
       "train.progress=false"]


def _wrappers(env):
    while env is not None:
        yield env
        env = getattr(env, "env", None)


def _intervened_transitions(buffer) -> int:
    n = min(buffer.frames_written, buffer.capacity)
    return int((buffer.fields["intervened"][:n] & buffer.valid[:n]).sum())


@pytest.mark.slow
def test_classifier_reward_and_simulated_interventions_train_pick_cube(tmp_path):
    base = load_config(resolve_config("pick_cube"), ["env.obs_mode=pixels", *REWARD])
    record_sim(base, tmp_path / "frames", reward_recording_env(base), frames=2000, seed=7)
    result = train_classifier(load_frames(tmp_path / "frames"), base.reward, seed=0)
    assert result.accepted, result.failures
    classifier_figures = {k: result.report[k] for k in ("held_out", "threshold")}  # said if learning fails
    model = tmp_path / "reward.pt"
    save_result(model, result, base.reward, task="PickCube")

    cfg = load_config(resolve_config("pick_cube"),
                      [*REWARD, *RUN, f"reward.classifier_path={model}", f"train.run_dir={tmp_path / 'run'}"])
    trainer = Trainer(cfg, tensorboard=False)
    try:
        chain = list(_wrappers(trainer.env))
        assert isinstance(chain[0], HumanIntervention), "the intervention wrapper is the outermost"
        assert any(isinstance(w, ClassifierReward) for w in chain), "the reward comes from the classifier"
        assert list(trainer.env.observation_space.spaces) == ["state"]
        rewards_by_classifier = []
        original_step = trainer.actor.env.step

        def step(action):
            obs, reward, terminated, truncated, info = original_step(action)
            rewards_by_classifier.append((reward, info["reward_streak"] >= cfg.reward.consecutive,
                                          info["gt_success"]))
            return obs, reward, terminated, truncated, info

        trainer.actor.env.step = step
        result = trainer.run()
    finally:
        trainer.close()

    # every reward the agent saw is the classifier's verdict, not the ground truth's
    rewards = np.array([r for r, _, _ in rewards_by_classifier])
    decided = np.array([d for _, d, _ in rewards_by_classifier])
    assert np.array_equal(rewards == 1.0, decided) and rewards.sum() > 0

    online_intervened = _intervened_transitions(trainer.learner.online)
    demo_intervened = _intervened_transitions(trainer.learner.demo)
    assert online_intervened > 0, "the simulated intervener never took over"
    assert demo_intervened == online_intervened, "intervened transitions go into both buffers"

    curve = [(e["env_steps"], e["success_rate"]) for e in result.evals]
    print(f"ground-truth eval success by env steps: {curve}; {online_intervened} intervened steps; "
          f"{result.wall_s:.0f} s")
    assert curve[-1][1] >= 0.6 and curve[-1][1] > curve[0][1], (
        f"success did not rise: {curve}; the classifier: {classifier_figures}; reward 1 on {int(rewards.sum())} "
        f"of {len(rewards)} steps, ground-truth success on {sum(int(g) for _, _, g in rewards_by_classifier)}")
