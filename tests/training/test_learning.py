"""The CI learning test: PickCube from state, 20 scripted demos, a fixed seed, >= 80% eval success.

Everything is seeded (env resets, demos, network init, sampling), so on a given machine
the run is the same every time. The cube is placed in a narrow range here (the task
config's full range is the harder benchmark, see bench/sample_efficiency.py), so the
test fits in a few minutes of a 2-core CPU.
"""

import pytest
from learning_runs import ci_learning_overrides

from robot_rl.tasks import load_config
from robot_rl.training.trainer import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread

pytest.importorskip("mujoco")

BUDGET_ENV_STEPS = 8000
CI_OVERRIDES = ["task.params.cube_xy_range=[0.02, 0.02]", "task.params.cube_yaw_range=0.0",
                *ci_learning_overrides(BUDGET_ENV_STEPS, eval_every=500)]


@pytest.mark.slow
def test_pick_cube_from_state_with_20_demos_reaches_80_percent(tmp_path):
    cfg = load_config("configs/pick_cube.yaml", [*CI_OVERRIDES, f"train.run_dir={tmp_path / 'run'}"])
    result = train(cfg, tensorboard=False)
    curve = [(e["env_steps"], e["success_rate"]) for e in result.evals]
    reached = result.first_step_reaching(0.8)
    print(f"eval success by env steps: {curve}; {result.wall_s:.0f} s")
    assert reached is not None, f"no eval reached 80% within {BUDGET_ENV_STEPS} env steps: {curve}"
    assert result.evals[-1]["success_rate"] >= 0.8
