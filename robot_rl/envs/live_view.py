"""A live view of a session in rerun: what the actor sees and does, step by step.

:class:`LiveView` is the outermost wrapper of a practice env when ``viz.rerun`` is on
(:func:`robot_rl.assemble.make_actor_env` puts it there), so it sees what the learner
gets: the observation the policy sees, the action executed (the person's while they
intervene), the reward after the classifier and the person's labels, the intervention
flag and success. Each step it logs, on the ``env_step`` timeline (steps of this env)
and the ``episode`` timeline:

==================== ====================================================================
entity               what
==================== ====================================================================
``camera/<name>``    every image in the observation (every ``viz.image_every`` steps)
``world/tcp``        the measured TCP pose (base frame; rotation as a quaternion)
``world/target``     the target pose last sent to the robot (after the safety box)
``action``           the executed action, one series per action dimension
``reward``           the step's reward
``intervention``     1 while a person drives the arm, else 0
``success``          1 on a successful step, else 0
``events``           one text line per episode end
==================== ====================================================================

At reset it logs the images, TCP and target of the first observation. The viewer is
read-only: it never changes what the env returns, and a value it cannot log (NaN,
inf, a malformed action) is logged as NaN or skipped, never raised. A viewer that
fails (the rerun process went away) is switched off with one warning; practice goes on.

rerun-sdk is optional (the ``viz`` extra: ``scripts/setup.sh viz``) and imported only here, when a
viewer is built.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from robot_rl.config.viz import DEFAULT_RRD_NAME, VizConfig
from robot_rl.envs.robot_env import ACTION_DIMS
from robot_rl.envs.wrappers import ActiveDims
from robot_rl.errors import ConfigError, install_extra

log = logging.getLogger(__name__)

APPLICATION_ID = "robot_rl"
#: At the end of a session, how long to wait for a viewer that is away to take what is left.
CLOSE_TIMEOUT_S = 2.0


def import_rerun() -> Any:
    """The rerun module, or a one-line ConfigError naming the extra to install."""
    try:
        import rerun
    except ImportError:
        raise ConfigError(f"viz.rerun is on but rerun-sdk is not installed: {install_extra('viz')}") from None
    return rerun


def rrd_path(viz: VizConfig, run_dir: str) -> Path:
    """The file ``viz.rerun: file`` writes: ``viz.rrd_path``, or ``<run_dir>/live_view.rrd``."""
    return Path(viz.rrd_path) if viz.rrd_path else Path(run_dir) / DEFAULT_RRD_NAME


def open_recording(viz: VizConfig, *, run_dir: str, name: str) -> Any:
    """A rerun recording stream sending where ``viz.rerun`` says (spawn, connect or file)."""
    rr = import_rerun()
    rec = rr.RecordingStream(APPLICATION_ID)
    if viz.rerun == "file":
        path = rrd_path(viz, run_dir)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ConfigError(f"viz.rrd_path: cannot create {path.parent} ({err.strerror or err})") from None
        rec.save(path)
        log.info("live view: saving to %s (open it with: rerun %s)", path, path)
    elif viz.rerun == "connect":
        rec.connect_grpc(viz.url)
        log.info("live view: streaming to the rerun viewer at %s", viz.url)
    elif viz.rerun == "spawn":
        rec.spawn(port=viz.port)
        log.info("live view: started a rerun viewer on port %d", viz.port)
    else:
        raise ConfigError(f"viz.rerun is '{viz.rerun}': no live view to open")
    rec.send_recording_name(name)
    return rec


def _finite(values: Any) -> np.ndarray | None:
    """``values`` as a flat float64 array with NaN for every non-finite entry; None if not numbers."""
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        return None
    return np.where(np.isfinite(arr), arr, np.nan)


def _xyzw(quat_wxyz: Any) -> np.ndarray | None:
    """A robot_rl quaternion (w x y z) as rerun's x y z w; None unless four finite numbers."""
    q = _finite(quat_wxyz)
    if q is None or q.shape != (4,) or not np.all(np.isfinite(q)):
        return None
    return np.array([q[1], q[2], q[3], q[0]])


def _action_names(env: gym.Env) -> list[str]:
    """The names of ``env``'s action dimensions (x y z ... gripper; ActiveDims keeps some)."""
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, ActiveDims):
            return list(layer.names)
        layer = layer.env
    n = int(np.prod(env.action_space.shape or (0,)))
    return list(ACTION_DIMS) if n == len(ACTION_DIMS) else [f"a{i}" for i in range(n)]


class LiveView(gym.Wrapper):
    """Log every step of ``env`` to a rerun recording stream (see the module docstring).

    ``recording`` is a ``rerun.RecordingStream`` (:func:`open_recording` makes one from the
    config); it is flushed and disconnected when the env closes.
    """

    def __init__(self, env: gym.Env, recording: Any, *, image_every: int = 1, jpeg_quality: int = 0) -> None:
        super().__init__(env)
        self.rr = import_rerun()
        self.rec = recording
        self.image_every = max(1, int(image_every))
        self.jpeg_quality = int(jpeg_quality)
        self.env_step = 0
        self.episode = -1
        self.episode_steps = 0
        self.failed = False
        self.action_dim = int(np.prod(env.action_space.shape or (0,)))
        self._guarded(self._log_static)

    # --- gymnasium API ----------------------------------------------------------------
    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self.episode += 1
        self.episode_steps = 0
        self._guarded(self._log_state, obs, True)
        return obs, info

    def step(self, action: Any):
        result = self.env.step(action)
        obs, reward, terminated, truncated, info = result
        self.env_step += 1
        self.episode_steps += 1
        self._guarded(self._log_step, action, obs, reward, terminated, truncated, info)
        return result

    def close(self) -> None:
        try:
            super().close()
        finally:
            try:
                self.rec.flush(timeout_sec=CLOSE_TIMEOUT_S)
                self.rec.disconnect()
            except Exception as err:  # noqa: BLE001 - closing a viewer must not hide the env's own close
                log.warning("live view: could not close the rerun stream: %s", err)

    # --- logging ----------------------------------------------------------------------
    def _guarded(self, fn: Any, *args: Any) -> None:
        """Run one logging call; a failure switches the viewer off (once) and never reaches the caller."""
        if self.failed:
            return
        try:
            fn(*args)
        except Exception as err:  # noqa: BLE001 - the viewer is an observer: practice must go on
            self.failed = True
            log.warning("live view: rerun failed (%s: %s); the session goes on without it",
                        type(err).__name__, err)

    def _log_static(self) -> None:
        rr = self.rr
        names = _action_names(self.env)
        self.action_dim = len(names)
        self.rec.log("action", rr.SeriesLines(names=names), static=True)
        for entity in ("reward", "intervention", "success"):
            self.rec.log(entity, rr.SeriesLines(names=[entity]), static=True)

    def _set_time(self) -> None:
        self.rec.set_time("env_step", sequence=self.env_step)
        self.rec.set_time("episode", sequence=max(0, self.episode))

    def _log_state(self, obs: Any, images: bool) -> None:
        rr = self.rr
        self._set_time()
        if images and isinstance(obs, dict):
            for key, value in obs.items():
                if isinstance(value, np.ndarray) and value.dtype == np.uint8 and value.ndim == 3 \
                        and value.shape[2] in (1, 3, 4):
                    image = rr.Image(value)
                    self.rec.log(f"camera/{key}", image.compress(self.jpeg_quality) if self.jpeg_quality else image)
        base = self.env.unwrapped
        state = getattr(base, "robot_state", None)
        if state is not None:
            self._log_pose("world/tcp", getattr(state, "tcp_pos", None), getattr(state, "tcp_quat", None))
        target = getattr(base, "target_pose", None)
        if target is not None:
            self._log_pose("world/target", *target)

    def _log_pose(self, entity: str, pos: Any, quat_wxyz: Any) -> None:
        p, q = _finite(pos), _xyzw(quat_wxyz)
        if p is None or p.shape != (3,) or not np.all(np.isfinite(p)):
            return
        rr = self.rr
        self.rec.log(entity, rr.Transform3D(translation=p, quaternion=rr.Quaternion(xyzw=q) if q is not None else None))

    def _log_step(self, action: Any, obs: Any, reward: Any, terminated: bool, truncated: bool,
                  info: dict[str, Any]) -> None:
        rr = self.rr
        self._log_state(obs, self.env_step % self.image_every == 0)
        info = info if isinstance(info, dict) else {}
        executed = _finite(info.get("intervene_action", action))
        if executed is not None and executed.size == self.action_dim:
            self.rec.log("action", rr.Scalars(executed))
        r = _finite(reward)
        self.rec.log("reward", rr.Scalars(r[0] if r is not None and r.size == 1 else np.nan))
        intervened, success = bool(info.get("intervened", False)), bool(info.get("success", False))
        self.rec.log("intervention", rr.Scalars(float(intervened)))
        self.rec.log("success", rr.Scalars(float(success)))
        if terminated or truncated:
            self.rec.log("events", rr.TextLog(f"episode {self.episode}: {'success' if success else 'no success'} "
                                              f"in {self.episode_steps} steps"))


def with_live_view(env: gym.Env, viz: VizConfig, *, run_dir: str, name: str) -> gym.Env:
    """``env`` inside :class:`LiveView` when ``viz.rerun`` is on; ``env`` itself when off."""
    if viz.rerun == "off":
        return env
    rec = open_recording(viz, run_dir=run_dir, name=name)
    return LiveView(env, rec, image_every=viz.image_every, jpeg_quality=viz.jpeg_quality)
