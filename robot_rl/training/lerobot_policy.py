"""A LeRobot policy (ACT, diffusion) as a base policy, run in LeRobot's own process and virtualenv.

``agent.base.source`` names the folder LeRobot's ``save_pretrained`` wrote (``config.json``
with a ``type``, ``model.safetensors``, the processors' files; e.g. a ``lerobot-train`` run's
``checkpoints/last/pretrained_model``) and ``agent.base.lerobot_python`` the python of a
virtualenv where ``lerobot`` is installed (or the environment variable
``ROBOT_RL_LEROBOT_PYTHON``). LeRobot's release pins an older torch than robot_rl, so the
policy is loaded by LeRobot's own classes in a child process
(:mod:`robot_rl.training.lerobot_child`) and asked for each action over its stdin/stdout
(length-prefixed frames, arrays as raw bytes, nothing pickled).

Observations map by the policy's own config: ``observation.state`` is the task's ``state``,
``observation.images.<cam>`` its camera ``<cam>`` (the names ``robot-rl demos export --format
lerobot`` writes); shapes must agree. A policy needing anything else, a folder of another
kind, a missing python, a child that dies, hangs or answers garbage while loading: one
:class:`~robot_rl.agents.base_policy.BasePolicyError` line naming the folder or the key. While
acting, a child that fails, hangs past :data:`ACT_TIMEOUT_S` or answers garbage gives a NaN
action, which the actor's guard holds and counts; the child is then stopped (its stream is out
of step) and every later step is held and counted the same way.

LeRobot's policies have no bounded output: a finite action outside the action space is clipped
to it, and :meth:`LeRobotPolicy.status` counts the clipped ones.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
import weakref
from collections import deque
from pathlib import Path
from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from robot_rl.agents.base_policy import BasePolicy, BasePolicyError, check_base
from robot_rl.data.lerobot_layout import IMAGE_PREFIX, obs_features
from robot_rl.errors import one_line
from robot_rl.training import lerobot_child
from robot_rl.training.checkpoint import CHECKPOINT_DIR, STATE_FILE
from robot_rl.training.lerobot_child import Closed, FrameError, decode, encode

#: The environment variable naming LeRobot's python when ``agent.base.lerobot_python`` is not set.
PYTHON_ENV = "ROBOT_RL_LEROBOT_PYTHON"
#: Seconds the child may take to import LeRobot and load the policy, and to answer one request.
LOAD_TIMEOUT_S = 300.0
ACT_TIMEOUT_S = 30.0
#: acts the latency figures of :meth:`LeRobotPolicy.status` are taken over (the most recent)
LATENCY_WINDOW = 20_000
CHILD_SCRIPT = Path(lerobot_child.__file__).resolve()

Obs = Mapping[str, np.ndarray]


class ChildError(Exception):
    """The child did not answer as it must (dead, late, garbage, or an error it reported)."""


def is_lerobot_policy_dir(path: str | Path) -> bool:
    """Whether ``path`` is a folder as LeRobot's ``save_pretrained`` writes one (config.json with a
    policy ``type``, model.safetensors); a folder of another kind is refused by :func:`check_policy_dir`."""
    folder = Path(path)
    return folder.is_dir() and (folder / "config.json").is_file() and not (folder / CHECKPOINT_DIR).exists() \
        and not (folder / STATE_FILE).exists()  # a robot_rl run or checkpoint folder is read as one


def check_policy_dir(folder: Path) -> dict[str, Any]:
    """``folder/config.json`` of a LeRobot policy robot_rl runs, or one BasePolicyError line naming the file."""
    config = folder / "config.json"
    try:
        data = json.loads(config.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise BasePolicyError(f"{config}: not readable JSON ({one_line(err)})") from None
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str):
        other = next((k for k in ("model_type", "architectures") if isinstance(data, dict) and k in data), None)
        what = f"a Hugging Face '{other}' config" if other else "no policy 'type'"
        raise BasePolicyError(f"{config}: not a LeRobot policy folder ({what}; LeRobot's save_pretrained writes "
                              f"'type': one of {', '.join(lerobot_child.POLICY_TYPES)})")
    if kind not in lerobot_child.POLICY_TYPES:
        raise BasePolicyError(f"{config}: LeRobot policy type '{kind}' is not one robot_rl runs as a base "
                              f"({', '.join(lerobot_child.POLICY_TYPES)})")
    if not (folder / "model.safetensors").is_file():
        raise BasePolicyError(f"{folder}: no model.safetensors beside config.json (not a save_pretrained folder)")
    return data


def resolve_python(python: str | None) -> Path:
    """LeRobot's python: ``agent.base.lerobot_python``, else $ROBOT_RL_LEROBOT_PYTHON; one line if neither works."""
    where = "agent.base.lerobot_python"
    if not python:
        python, where = os.environ.get(PYTHON_ENV), f"${PYTHON_ENV}"
    if not python:
        raise BasePolicyError(f"agent.base.lerobot_python is not set: a LeRobot policy runs in LeRobot's own "
                              f"virtualenv; set it (or ${PYTHON_ENV}) to that virtualenv's python")
    path = Path(python).expanduser()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BasePolicyError(f"{where}: {path} is not an executable file (LeRobot's virtualenv python)")
    return path


class LeRobotChild:
    """The child process and its pipe: framed requests, answers read with a deadline."""

    def __init__(self, python: Path, folder: Path, load_timeout_s: float) -> None:
        self.stderr = tempfile.TemporaryFile()
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "PYTHONUNBUFFERED": "1"}
        env.pop("PYTHONPATH", None)  # robot_rl's paths must not shadow LeRobot's packages
        self.process = subprocess.Popen([str(python), str(CHILD_SCRIPT), str(folder)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr, env=env, cwd=str(folder))
        self._finalizer = weakref.finalize(self, _stop, self.process)
        self.ready = self.answer(load_timeout_s, "ready")

    def alive(self) -> bool:
        return self.process.poll() is None

    def request(self, header: dict[str, Any], arrays: dict[str, np.ndarray] | None, want: str,
                timeout_s: float) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(encode(header, arrays))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as err:
            raise ChildError(self._dead(f"cannot be written to ({one_line(err)})")) from None
        return self.answer(timeout_s, want), self._arrays

    def answer(self, timeout_s: float, want: str) -> dict[str, Any]:
        """The next frame, which must be ``want`` (arrays kept in ``_arrays``); ChildError otherwise."""
        deadline, self.timeout_s = time.monotonic() + timeout_s, timeout_s
        try:
            header, self._arrays = decode(lambda n: self._read(n, deadline))
        except Closed:
            raise ChildError(self._dead("exited")) from None
        except FrameError as err:
            self.stop()
            raise ChildError(f"answered garbage ({err})") from None
        if header["op"] == "error":
            raise ChildError(f"LeRobot raised: {header.get('message', '?')}")
        if header["op"] != want:
            self.stop()
            raise ChildError(f"answered '{header['op']}' where '{want}' was due")
        return header

    def _read(self, n: int, deadline: float) -> bytes:
        assert self.process.stdout is not None
        fd, data = self.process.stdout.fileno(), b""
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.stop()
                raise ChildError(f"gave no answer in time ({self.timeout_s:g} s); stopped it")
            chunk = os.read(fd, n - len(data))
            if not chunk:
                raise Closed()
            data += chunk
        return data

    def _dead(self, what: str) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.stop()
            code = self.process.returncode
        self.stderr.seek(0)
        lines = [line for line in self.stderr.read().decode(errors="replace").splitlines() if line.strip()]
        tail = f": {' '.join(lines[-1].split())[:300]}" if lines else ""
        return f"{what} (exit status {code}){tail}"

    def stop(self) -> None:
        self._finalizer()


def _stop(process: subprocess.Popen) -> None:
    """End the child: close its input (it exits), then terminate and kill if it does not."""
    if process.poll() is None:
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            process.terminate()
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class LeRobotPolicy(BasePolicy):
    """A LeRobot policy folder as a :class:`~robot_rl.agents.base_policy.BasePolicy`, plus
    :meth:`status` (the round trip's latency, failures, clipped actions)."""

    def __init__(self, folder: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                 python: str | None = None, load_timeout_s: float | None = None,
                 act_timeout_s: float | None = None) -> None:
        super().__init__(str(folder), obs_space, action_space)
        self.folder = Path(folder)
        self.act_timeout_s = ACT_TIMEOUT_S if act_timeout_s is None else act_timeout_s
        load_timeout_s = LOAD_TIMEOUT_S if load_timeout_s is None else load_timeout_s
        check_policy_dir(self.folder)
        python_path = resolve_python(python)
        try:
            self.child: LeRobotChild | None = LeRobotChild(python_path, self.folder, load_timeout_s)
        except ChildError as err:
            raise BasePolicyError(f"LeRobot policy {self.folder} (python {python_path}): {err}") from None
        except OSError as err:
            raise BasePolicyError(f"LeRobot policy {self.folder}: cannot start {python_path} "
                                  f"({one_line(err)})") from None
        self.info = self.child.ready
        try:
            self.features = self._map(self.info)
        except BasePolicyError:
            self.child.stop()
            raise
        self.calls = self.failures = self.clipped = 0
        # each act's round trip in seconds, and the part of it not spent in the child's policy call, over
        # the last LATENCY_WINDOW acts: status() runs at the node's status rate for as long as the cell does
        self.latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self.pipe_costs: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self.last_failure: str | None = None

    def _map(self, info: Mapping[str, Any]) -> dict[str, str]:
        """LeRobot input feature -> the task's observation key, checked by shape (one line naming the feature)."""
        config = self.folder / "config.json"
        ours = {name: key for key, name in obs_features(self.observation_space).items()}
        out = {}
        for name, feature in dict(info.get("inputs") or {}).items():
            key = ours.get(name)
            if key is None:
                raise BasePolicyError(f"{config}: input feature '{name}' is not an observation of this task "
                                      f"(it has {', '.join(sorted(ours))})")
            shape = tuple(self.observation_space[key].shape)
            want = tuple(feature.get("shape") or ())
            if name.startswith(IMAGE_PREFIX):
                want = want[1:] + want[:1]  # LeRobot's CxHxW, robot_rl's HxWxC
            if want != shape:
                raise BasePolicyError(f"{config}: input feature '{name}' has shape {list(want)}, the task's "
                                      f"'{key}' {list(shape)}")
            out[name] = key
        if not out:
            raise BasePolicyError(f"{config}: the policy declares no input features")
        action = tuple(info.get("action_shape") or ())
        if action != tuple(self.action_space.shape):
            raise BasePolicyError(f"{config}: its action has shape {list(action)}, the task's "
                                  f"{list(self.action_space.shape)}")
        return out

    def act(self, obs: Obs, deterministic: bool = True) -> np.ndarray:
        """The child's action for ``obs``; NaN (held and counted by the actor's guard) when it cannot give one."""
        self.calls += 1
        nan = np.full(self.action_space.shape, np.nan, np.float32)
        if self.child is None or not self.child.alive():
            return self._fail(nan, self.last_failure or "the LeRobot child is not running")
        arrays = {name: np.asarray(obs[key], np.uint8 if name.startswith(IMAGE_PREFIX) else np.float32)
                  for name, key in self.features.items()}
        started = time.perf_counter()
        try:
            header, out = self.child.request({"op": "act"}, arrays, "action", self.act_timeout_s)
        except ChildError as err:
            return self._fail(nan, str(err))
        self.latencies.append(time.perf_counter() - started)
        compute = header.get("compute_s")
        if isinstance(compute, (int, float)) and 0 <= compute <= self.latencies[-1]:
            self.pipe_costs.append(self.latencies[-1] - compute)
        action = out.get("action")
        if action is None or action.shape != self.action_space.shape:
            self.child.stop()
            return self._fail(nan, f"answered an action of shape {None if action is None else list(action.shape)}")
        action = np.asarray(action, np.float32)
        if np.isfinite(action).all():
            clipped = np.clip(action, self.action_space.low, self.action_space.high)
            self.clipped += int(not np.array_equal(clipped, action))
            action = clipped
        return action

    def _fail(self, nan: np.ndarray, why: str) -> np.ndarray:
        self.failures += 1
        self.last_failure = why
        return nan

    def reset(self) -> None:
        if self.child is None or not self.child.alive():
            return
        try:
            self.child.request({"op": "reset"}, None, "ok", self.act_timeout_s)
        except ChildError as err:
            self.last_failure = str(err)

    def status(self) -> dict[str, Any]:
        """Calls, failures (held steps), clipped actions, and the round trip's latency in ms over the last
        :data:`LATENCY_WINDOW` acts (``pipe_p50_ms``: its median part outside the child's policy call,
        i.e. what the process boundary costs)."""
        lat = np.asarray(self.latencies) * 1e3
        figures = {"p50_ms": float(np.median(lat)), "p95_ms": float(np.percentile(lat, 95)),
                   "max_ms": float(lat.max()), "mean_ms": float(lat.mean())} if len(lat) else {}
        if self.pipe_costs:
            figures["pipe_p50_ms"] = float(np.median(self.pipe_costs) * 1e3)
        return {"calls": self.calls, "failures": self.failures, "clipped": self.clipped,
                "last_failure": self.last_failure, "latency": figures, "load_s": self.info.get("load_s"),
                "versions": self.info.get("versions")}

    def close(self) -> None:
        if self.child is not None:
            self.child.stop()
            self.child = None


def load_lerobot_policy(folder: str | Path, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box, *,
                        python: str | None = None, recorded: Any = (),
                        load_timeout_s: float | None = None) -> LeRobotPolicy:
    """The LeRobot policy in ``folder`` for these spaces, started and checked like every base
    (:func:`~robot_rl.agents.base_policy.check_base`: finite actions in the space on sampled and
    recorded observations); one BasePolicyError line otherwise, and no child left running."""
    policy = LeRobotPolicy(folder, obs_space, action_space, python=python, load_timeout_s=load_timeout_s)
    try:
        check_base(policy, obs_space, action_space, recorded)
        if policy.failures:
            raise BasePolicyError(f"base policy {folder}: the LeRobot child failed while checked: "
                                  f"{policy.last_failure}")
    except BasePolicyError:
        policy.close()
        raise
    return policy
