"""The learned reward: a success/failure image classifier, from frames to the env's reward.

* :mod:`dataset`: the on-disk frame format, written chunk by chunk as frames arrive;
* :mod:`labels`, :mod:`collect`, :mod:`scenarios`: recording labelled frames (sim ground
  truth or keys) while a driver (sim hard-case scenarios, a person) moves the arm;
* :mod:`frames`: the one resize from observation to classifier input;
* :mod:`model`, :mod:`train`, :mod:`metrics`: the network and its file, training, the
  false-positive-bounded threshold and the acceptance bar;
* :mod:`wrapper`: :class:`ClassifierReward`, the gymnasium wrapper that makes the
  classifier the env's reward (optionally after N positive frames in a row).

Importing this package does not import torch; the model, training and wrapper modules do.
"""

from __future__ import annotations
