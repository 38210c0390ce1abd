"""The W&B side of :class:`~robot_rl.training.metrics.MetricsLog` (``train.wandb``).

Optional and off by default: ``wandb`` is imported only when ``train.wandb.enabled`` is
true, and a missing package is a one-line :class:`~robot_rl.errors.ConfigError` naming
the extra. One :class:`WandbRun` per process; the trainer and the learner process both
get one through their ``MetricsLog``.

Every point is plotted against ``env_steps`` (a logged value W&B is told to use as the
x axis), not W&B's own step counter: W&B drops a row whose step goes backwards, and a
learner's evaluation may be booked at fewer env steps than the episodes that arrived
while it ran. Scalars of the same env-step count are gathered into one row.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

from robot_rl.config.agent import WandbConfig
from robot_rl.errors import ConfigError, install_extra, one_line

STEP_KEY = "env_steps"


def require_wandb() -> Any:
    """The ``wandb`` module, or a one-line ConfigError saying how to install it."""
    try:
        import wandb
    except ImportError:
        raise ConfigError("train.wandb.enabled is true but the wandb package is not installed: "
                          f"{install_extra('wandb')}") from None
    return wandb


class WandbRun:
    """One W&B run: rows of scalars keyed by env steps, GIF videos, the config."""

    def __init__(self, cfg: WandbConfig, run_dir: Path, config: dict[str, Any]) -> None:
        wandb = require_wandb()
        self._wandb = wandb
        directory = Path(cfg.dir) if cfg.dir else run_dir
        directory.mkdir(parents=True, exist_ok=True)
        try:
            # console off: W&B must not wrap stdout, where the CLI prints its one JSON line
            self.run = wandb.init(project=cfg.project, entity=cfg.entity, name=cfg.name or run_dir.resolve().name,
                                  mode=cfg.mode, dir=str(directory), config=config,
                                  settings=wandb.Settings(console="off", silent=True))
        except Exception as err:  # noqa: BLE001 - wandb raises its own kinds (no login, no network, bad entity)
            raise ConfigError(f"train.wandb: cannot start a W&B run in {cfg.mode} mode: {one_line(err)}") from None
        self.run.define_metric(STEP_KEY)
        self.run.define_metric("*", step_metric=STEP_KEY)
        self._row: dict[str, Any] = {}
        self._row_step: int | None = None
        self._lock = threading.Lock()  # the learner process logs from its serving and training threads

    @property
    def directory(self) -> Path:
        """The run's own folder (``.../wandb/<offline-run|run>-<time>-<id>``)."""
        return Path(self.run.dir).parent

    def scalar(self, tag: str, value: float, step: int) -> None:
        with self._lock:
            self._put(step, tag, float(value))

    def video(self, tag: str, gif: bytes, step: int, caption: str = "") -> None:
        """An animated GIF (:func:`robot_rl.training.frames.gif_bytes`), which W&B plays in the browser."""
        with self._lock:
            self._put(step, tag, self._wandb.Video(io.BytesIO(gif), caption=caption or None, format="gif"))
            self._commit()  # media goes out at once: no need to keep it in memory

    def flush(self) -> None:
        with self._lock:
            self._commit()

    def close(self) -> None:
        """Finish the run with everything on disk: ``finish()`` alone may return before W&B's
        service process has written an offline run's file, so the service is shut down too
        when no other W&B run of this process is active (a later run starts a new one)."""
        with self._lock:
            self._commit()
            self.run.finish()
            if self._wandb.run is None:
                self._wandb.teardown()

    def _put(self, step: int, key: str, value: Any) -> None:
        if self._row_step is not None and step != self._row_step:
            self._commit()
        self._row_step = int(step)
        self._row[key] = value

    def _commit(self) -> None:
        if self._row:
            self.run.log({**self._row, STEP_KEY: self._row_step})
        self._row, self._row_step = {}, None
