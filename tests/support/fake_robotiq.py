"""A fake Robotiq URCap socket (the gripper server a UR runs on port 63352), on localhost.

Speaks the URCap's text protocol: ``SET <VAR> <v> ...`` answered ``ack``, ``GET <VAR>``
answered ``<VAR> <v>``. Activation (``SET ACT 1``) takes ``activation_s``; the fingers
move toward the requested position at ``speed_per_s`` register units per second while
``GTO`` is 1 and stop at ``object_at`` (a part between the fingers) when closing past it.
``behaviour``: ``"ok"``, ``"silent"`` (accepts connections, never answers), ``"garbage"``
(answers nonsense), ``"never_active"`` (activation never ends). Every request is kept in
``requests``.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Optional


class FakeRobotiq:
    def __init__(self, behaviour: str = "ok", activation_s: float = 0.05, speed_per_s: float = 2000.0,
                 object_at: Optional[int] = None, active: bool = False) -> None:
        self.behaviour = behaviour
        self.activation_s = activation_s
        self.speed_per_s = speed_per_s
        self.object_at = object_at
        self.regs = {"ACT": int(active), "GTO": 0, "POS": 0, "SPE": 255, "FOR": 150, "STA": 3 if active else 0,
                     "OBJ": 3, "PRE": 0, "FLT": 0}
        self.position = 0.0
        self.activated_at: Optional[float] = None
        self.requests: list[str] = []
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(4)
        self.port = self.server.getsockname()[1]
        self._running = True
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while self._running:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._client, args=(client,), daemon=True).start()

    def _client(self, client: socket.socket) -> None:
        buffer = b""
        with client:
            while self._running:
                try:
                    data = client.recv(1024)
                except OSError:
                    return
                if not data:
                    return
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    reply = self.answer(line.decode("ascii", "replace").strip())
                    if reply is not None:
                        try:
                            client.sendall(reply.encode("ascii"))
                        except OSError:
                            return

    def _advance(self) -> None:
        now = time.monotonic()
        dt, self._last = now - self._last, now
        r = self.regs
        if self.activated_at is not None and r["STA"] != 3:
            done = now - self.activated_at >= self.activation_s and self.behaviour != "never_active"
            r["STA"] = 3 if done else 1
        if r["STA"] == 3 and r["GTO"] == 1:
            goal = float(r["PRE"])
            if self.object_at is not None and goal > self.object_at and self.position <= self.object_at:
                goal = float(self.object_at)
            step = self.speed_per_s * dt
            self.position += max(-step, min(step, goal - self.position))
            at_goal = abs(self.position - goal) < 1e-6
            r["OBJ"] = (2 if goal != r["PRE"] else 3) if at_goal else 0
        r["POS"] = int(round(self.position))

    def answer(self, line: str) -> Optional[str]:
        with self._lock:
            self.requests.append(line)
            if self.behaviour == "silent":
                return None
            if self.behaviour == "garbage":
                return "?!"
            self._advance()
            parts = line.split()
            if parts[:1] == ["GET"] and len(parts) == 2 and parts[1] in self.regs:
                return f"{parts[1]} {self.regs[parts[1]]}\n"
            if parts[:1] == ["SET"] and len(parts) >= 3 and len(parts) % 2 == 1:
                for name, value in zip(parts[1::2], parts[2::2]):
                    number = int(value)
                    if name == "ACT":
                        self.regs["ACT"] = number
                        self.regs["STA"] = 0
                        self.activated_at = time.monotonic() if number == 1 else None
                    elif name == "POS":
                        self.regs["PRE"] = number
                    else:
                        self.regs[name] = number
                return "ack"
            return "?"

    def close(self) -> None:
        self._running = False
        self.server.close()
