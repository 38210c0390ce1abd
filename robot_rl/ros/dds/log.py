"""A node logger with rclpy's interface, over Python's ``logging``, for the DDS backend.

``node.get_logger().warn("...", throttle_duration_sec=1.0)`` works as in rclpy
(``debug/info/warning/warn/error/fatal`` with ``throttle_duration_sec``, ``once`` and
``skip_first``; each returns whether the message was emitted). Lines look like ROS 2
console output: ``[WARN] [1712345678.123456789] [camera_node]: ...``.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

_LEVEL_NAMES = {logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARN",
                logging.ERROR: "ERROR", logging.CRITICAL: "FATAL"}
_LEVELS_BY_NAME = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
                   "WARNING": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}
ROOT = "robot_rl.ros.node"


class _RosFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = f"{record.created:.9f}"
        name = record.name[len(ROOT) + 1:] if record.name.startswith(ROOT + ".") else record.name
        return f"[{_LEVEL_NAMES.get(record.levelno, record.levelname)}] [{stamp}] [{name}]: {record.getMessage()}"


def install_console_handler(level: int = logging.INFO) -> None:
    """Print node log lines on stderr unless the application configured a handler already."""
    logger = logging.getLogger(ROOT)
    if logger.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_RosFormatter())
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False


class Logger:
    def __init__(self, name: str) -> None:
        self.name = name
        self._logger = logging.getLogger(f"{ROOT}.{name}")
        self._last_emit: dict[tuple[str, int], float] = {}
        self._seen: set[tuple[str, int]] = set()
        self._skipped: set[tuple[str, int]] = set()

    def get_child(self, name: str) -> "Logger":
        return Logger(f"{self.name}.{name}")

    def set_level(self, level: int | str) -> None:
        if isinstance(level, str):
            level = _LEVELS_BY_NAME[level.upper()]
        self._logger.setLevel(level)

    def log(self, message: str, level: int, *, throttle_duration_sec: float | None = None,
            once: bool = False, skip_first: bool = False, **_ignored: Any) -> bool:
        # the call site identifies "this message" for once/throttle/skip_first, as in rcutils
        frame = sys._getframe(2)
        key = (frame.f_code.co_filename, frame.f_lineno)
        if once:
            if key in self._seen:
                return False
            self._seen.add(key)
        if skip_first and key not in self._skipped:
            self._skipped.add(key)
            return False
        if throttle_duration_sec:
            now = time.monotonic()
            last = self._last_emit.get(key)
            if last is not None and now - last < throttle_duration_sec:
                return False
            self._last_emit[key] = now
        if not self._logger.isEnabledFor(level):
            return False
        self._logger.log(level, message)
        return True

    def debug(self, message: str, **kwargs: Any) -> bool:
        return self.log(message, logging.DEBUG, **kwargs)

    def info(self, message: str, **kwargs: Any) -> bool:
        return self.log(message, logging.INFO, **kwargs)

    def warning(self, message: str, **kwargs: Any) -> bool:
        return self.log(message, logging.WARNING, **kwargs)

    def warn(self, message: str, **kwargs: Any) -> bool:
        return self.log(message, logging.WARNING, **kwargs)

    def error(self, message: str, **kwargs: Any) -> bool:
        return self.log(message, logging.ERROR, **kwargs)

    def fatal(self, message: str, **kwargs: Any) -> bool:
        return self.log(message, logging.CRITICAL, **kwargs)
