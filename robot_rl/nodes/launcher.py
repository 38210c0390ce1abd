"""``robot-rl launch``: a session's nodes as processes, without ROS 2 installed.

:class:`Launcher` does for a :class:`~robot_rl.nodes.description.GraphDescription` what
``ros2 launch`` does for the launch file wrapping it:

* writes the params file, starts one process per node
  (``python -m robot_rl.nodes.<executable> --ros-args -r __node:=<name> --params-file
  <file>``, plus ``-r __ns:=/<ns>`` and the ``/clock`` remap in a namespaced session:
  :meth:`~robot_rl.nodes.description.GraphDescription.command`), each in its own process
  group, and prints their output line by line, prefixed with ``[<node name>]``;
* Ctrl-C (SIGINT) or SIGTERM: sends SIGINT to every node, waits up to
  ``stop_timeout_s`` for them to shut down cleanly, then SIGTERM, then SIGKILL. A
  second Ctrl-C skips the wait;
* when any node exits on its own, it is reported (``node sim_node died (exit code -9:
  SIGKILL)``, or ``finished`` for exit code 0, e.g. an actor that ran its
  ``ros.episodes``) and the other nodes are stopped as above, as ``ros2 launch`` does
  for nodes launched with ``on_exit=Shutdown()``.

Progress goes to stderr (a bar on a terminal, else a status line every
``progress_every_s``): which nodes are up, and the episodes the actor nodes finished, read
from their ``episode N: success in ...`` lines (:class:`robot_rl.nodes.actor.EpisodeBook`).

The exit status is 0 when every node exited with 0, else 1.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Optional

from robot_rl.nodes.description import GraphDescription
from robot_rl.training.progress import Progress

#: The line an actor node logs at each episode end (robot_rl.nodes.actor.EpisodeBook).
EPISODE_LINE = re.compile(r"\bepisode \d+: (success|no success) in \d+ steps")


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"exit code {code}: {signal.Signals(-code).name}"
        except ValueError:
            return f"exit code {code}"
    return f"exit code {code}"


class Launcher:
    def __init__(self, graph: GraphDescription, run_dir: str | Path, *, python: str = sys.executable,
                 env: Optional[dict[str, str]] = None, out: Optional[IO[str]] = None,
                 stop_timeout_s: float = 10.0, episodes: int = 0, progress: bool = True,
                 progress_every_s: float = 10.0, status: Optional[IO[str]] = None) -> None:
        self.graph = graph
        self.run_dir = Path(run_dir)
        self.python = python
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.out = out or sys.stdout
        self.stop_timeout_s = stop_timeout_s
        self.procs: dict[str, subprocess.Popen] = {}
        self.exit_codes: dict[str, int] = {}
        self._pumps: list[threading.Thread] = []
        self._out_lock = threading.Lock()
        self._signals = 0
        self.params_file: Optional[Path] = None
        self.episodes = self.successes = 0
        self.progress = Progress("launch", total=episodes or None, unit="episode", enabled=progress,
                                 every_s=progress_every_s, stream=status)

    # --- output ----------------------------------------------------------------------

    def say(self, line: str) -> None:
        with self._out_lock:
            self.out.write(f"[launch] {line}\n")
            self.out.flush()

    def _pump(self, name: str, stream: IO[str]) -> None:
        for line in stream:
            ended = EPISODE_LINE.search(line)
            with self._out_lock:
                if ended:
                    self.episodes += 1
                    self.successes += ended.group(1) == "success"
                self.out.write(f"[{name}] {line if line.endswith(chr(10)) else line + chr(10)}")
                self.out.flush()
        stream.close()

    # --- processes -------------------------------------------------------------------

    def start(self) -> None:
        self.params_file = self.graph.write_params_file(self.run_dir)
        self.say(f"{len(self.graph.nodes)} nodes, config {self.graph.config}, params {self.params_file}")
        for spec in self.graph.nodes:
            cmd = self.graph.command(spec, self.params_file, self.python)
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    text=True, env=self.env, start_new_session=True)
            self.procs[spec.name] = proc
            pump = threading.Thread(target=self._pump, args=(spec.name, proc.stdout), daemon=True,
                                    name=f"out-{spec.name}")
            pump.start()
            self._pumps.append(pump)
            self.say(f"started {spec.name} (pid {proc.pid})")

    def progress_fields(self) -> dict[str, str]:
        """The figures of the progress display: the nodes up, and the successes so far."""
        up = self.running()
        return {"successes": str(self.successes), "nodes up": f"{len(up)}/{len(self.graph.nodes)}",
                "up": " ".join(up) or "none"}

    def running(self) -> list[str]:
        return [name for name, proc in self.procs.items() if proc.poll() is None]

    def _collect(self) -> list[str]:
        """Names of nodes that exited since the last call (their codes recorded)."""
        ended = []
        for name, proc in self.procs.items():
            if name not in self.exit_codes and proc.poll() is not None:
                self.exit_codes[name] = proc.returncode
                ended.append(name)
        return ended

    def stop(self) -> None:
        """SIGINT every node still running, then SIGTERM, then SIGKILL (see the module docstring)."""
        for sig, wait in ((signal.SIGINT, self.stop_timeout_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            alive = self.running()
            if not alive:
                break
            if sig != signal.SIGINT:
                self.say(f"{', '.join(alive)} still running: sending {sig.name}")
            for name in alive:
                try:
                    os.kill(self.procs[name].pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            signals_before = self._signals
            while self.running() and time.monotonic() < deadline:
                if sig == signal.SIGINT and self._signals > signals_before:
                    break  # a second Ctrl-C: do not wait
                time.sleep(0.05)
        self._collect()

    # --- the whole run ---------------------------------------------------------------

    def run(self) -> int:
        """Start the graph, wait for Ctrl-C or a node's exit, stop everything; the exit status."""
        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, self._on_signal)
        try:
            self.start()
            while True:
                ended = self._collect()
                if ended:
                    for name in ended:
                        code = self.exit_codes[name]
                        self.say(f"node {name} finished" if code == 0 else
                                 f"node {name} died ({describe_exit(code)})")
                    self.say("stopping the other nodes")
                    break
                if self._signals:
                    self.say("stopping every node (SIGINT)")
                    break
                if self.progress.due():
                    self.progress.show(self.episodes, self.progress_fields())
                time.sleep(0.05)
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for pump in self._pumps:
                pump.join(timeout=2.0)
            self.progress.close(self.episodes, self.progress_fields())
        self.say("exit codes: " + ", ".join(f"{n} {describe_exit(c)}" for n, c in self.exit_codes.items()))
        return 0 if all(code == 0 for code in self.exit_codes.values()) else 1

    def _on_signal(self, signum: int, frame: object) -> None:
        self._signals += 1
