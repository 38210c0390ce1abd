"""The CI pixel-learning test: PickCube from the robot's view, on a CPU, 0% -> >= 80% eval success.

The policy sees two 32x32 camera images and proprioception, never the cube's pose
(``configs/pick_cube_pixels.yaml``: a small conv encoder trained from scratch with DrQ
shifts, UTD 1, batch 128); ground truth only scores the deterministic evaluation. The
cube is placed over the task config's full range. Seeded, so the run is the same every
time on a given machine; it takes about 4-5 minutes of a 2-core CPU. The same config
over more seeds and the PegInsert variant are bench figures (bench/sample_efficiency.py).
"""

import pytest
from learning_runs import ci_learning_overrides

from robot_rl.tasks import load_config
from robot_rl.training.trainer import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")

pytest.importorskip("mujoco")

BUDGET_ENV_STEPS = 7000
CI_OVERRIDES = ci_learning_overrides(BUDGET_ENV_STEPS, eval_every=1000)


@pytest.mark.slow
def test_pick_cube_from_pixels_and_proprioception_rises_from_0_to_80_percent(tmp_path):
    cfg = load_config("configs/pick_cube_pixels.yaml", [*CI_OVERRIDES, f"train.run_dir={tmp_path / 'run'}"])
    assert cfg.env.obs_mode == "pixels" and cfg.env.policy_keys is None  # the policy's whole view
    result = train(cfg, tensorboard=False)
    curve = [(e["env_steps"], e["success_rate"]) for e in result.evals]
    print(f"eval success by env steps: {curve}; {result.wall_s:.0f} s")
    assert curve[0][1] == 0.0, f"the first evaluation already succeeded: {curve}"
    reached = result.first_step_reaching(0.8)
    assert reached is not None, f"no eval reached 80% within {BUDGET_ENV_STEPS} env steps: {curve}"
    assert result.evals[-1]["success_rate"] >= 0.8
