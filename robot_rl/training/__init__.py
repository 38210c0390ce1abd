"""Single-process training: the actor loop, the learner, evaluation, checkpoints."""
