"""The learning plane: actors and a learner as separate processes, over gRPC.

Actors (one per robot, or sim envs) stream their Steps to one learner; the learner
streams policy weights back. The pieces, from the wire up:

* ``proto/learning.proto``: the messages and the ``Learner`` service (Register,
  PushTransitions, StreamWeights), with its contract; generated modules are committed.
* :mod:`~robot_rl.training.remote.codec`: arrays, spaces, Steps and weights to and from messages
  (raw bytes + dtype + shape; never pickle), refusing malformed payloads.
* :mod:`~robot_rl.training.remote.spaces`: observation/action spaces as data, and the check that
  names the first differing key.
* :mod:`~robot_rl.training.remote.security`: the shared-token interceptor (the learner's
  capacity goes only to callers with the token), TLS credentials, message limits and
  keepalive; :mod:`~robot_rl.training.remote.intake` bounds authenticated calls per
  connection and cancels those whose body never comes;
  :mod:`~robot_rl.training.remote.refusals` counts what was refused;
  :mod:`~robot_rl.training.remote.attacks` holds the token holder's attacks the tests and
  ``bench/learner_attacks.py`` run.
* :mod:`~robot_rl.training.remote.server` / :mod:`~robot_rl.training.remote.client`: the learner's
  server and the actor's client (bounded :mod:`~robot_rl.training.remote.outbox`, reconnects
  with backoff, weights handed over through :mod:`~robot_rl.training.remote.weights`).
* :mod:`~robot_rl.training.remote.assembler`, :mod:`~robot_rl.training.replay_log`,
  :mod:`~robot_rl.training.checkpoint`: batches back into episodes, episodes durably on disk,
  checkpoints in the one format the trainer writes too (no pickle).
* :mod:`~robot_rl.training.remote.learner_process` / :mod:`~robot_rl.training.remote.actor_process`:
  ``robot-rl learner`` and ``robot-rl actor``.

Only the modules that talk gRPC (server, client, security, attacks) import ``grpc``; codec and
everything below it need just numpy and protobuf.
"""
