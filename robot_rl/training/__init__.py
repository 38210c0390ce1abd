"""The training wing: everything that turns experience into a policy.

* :mod:`~robot_rl.training.trainer`: ``robot-rl train``, one process: actor loop,
  learner, evaluation and checkpoints in turn;
* :mod:`~robot_rl.training.learner`: the update-to-data ratio and demo/online sampling,
  shared by the trainer and the learner process;
* :mod:`~robot_rl.training.evaluation`: deterministic seeded evaluation and its video;
* :mod:`~robot_rl.training.metrics` (with :mod:`~robot_rl.training.frames`,
  :mod:`~robot_rl.training.curves` and :mod:`~robot_rl.training.wandb_log`): what a run
  shows: TensorBoard scalars, config, hyperparameters and eval videos, the success PNG,
  and W&B when asked;
* :mod:`~robot_rl.training.checkpoint` and :mod:`~robot_rl.training.saved_policy`: the
  one checkpoint format (no pickle) every run writes, and the policy read back from it
  (``robot-rl eval``, ``ros.policy=checkpoint``);
* :mod:`~robot_rl.training.replay_log` and :mod:`~robot_rl.training.episode_log`: every
  finished episode on disk before any update uses it;
* :mod:`~robot_rl.training.reset_free`: forward-backward practice without resets;
* :mod:`~robot_rl.training.remote`: the learning plane, the same learner and actors as
  separate processes over gRPC.

Data, reset, tasks and the rest of the core never import this package; it builds its
envs through :mod:`robot_rl.assemble`.
"""
