"""Who held which actor id, kept on disk so that a restarted learner still knows.

The learner hands every actor id's holder a secret at Register (``server.py``). Kept only
in memory, a learner restart forgot them: right after it, any token holder could
register a live actor's id before that actor reconnected, and the actor's own
re-registration was then refused. The learner therefore writes, per held id, the
SHA-256 of its secret to ``<run_dir>/learner/holders.json`` whenever a holder comes or
goes, and a restarted learner reads it back: a Register that presents the secret whose
digest is on file gets its id back at once; one without it waits out
``learning.actor_lease_s`` from the restart, as for a holder gone silent.

Only digests are on disk (a secret is 32 random bytes, so its digest does not give it
away), written with :func:`~robot_rl.data.durable.durable_write_text`: a crash leaves the
old file or the new one, never a torn one. A file that does not parse is one line naming
it (the learner does not start); deleting it starts the learner without holders, as a
learner before this file did.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Mapping

from robot_rl.data.durable import READ_ERRORS, durable_write_text
from robot_rl.errors import RobotRLError

HOLDERS_FILE = "holders.json"
FORMAT = "robot_rl.holders/1"
MAX_HOLDERS = 10_000  # far above any learning.max_actors: a longer file is not one this learner wrote
MAX_BYTES = 4 << 20  # MAX_HOLDERS entries take about 1 MB


def digest(secret: bytes) -> bytes:
    """What is kept of a secret: its SHA-256."""
    return hashlib.sha256(secret).digest()


def save_holders(path: Path, digests: Mapping[str, bytes]) -> None:
    """Write the digests of the held ids' secrets to ``path`` (durably, atomically)."""
    body = {"format": FORMAT, "holders": {actor_id: d.hex() for actor_id, d in sorted(digests.items())}}
    durable_write_text(path, json.dumps(body, indent=1) + "\n")


def load_holders(path: Path, actor_id_pattern: re.Pattern[str]) -> dict[str, bytes]:
    """The digests ``path`` holds (none when there is no file), for ids that fully match
    ``actor_id_pattern``; RobotRLError naming the file when it is damaged."""
    if not path.exists():
        return {}
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise _damaged(path, f"{size} bytes (at most {MAX_BYTES})")
        body = json.loads(path.read_text(encoding="utf-8"))
    except (*READ_ERRORS, RecursionError) as err:  # RecursionError: JSON nested thousands deep
        raise _damaged(path, f"unreadable ({type(err).__name__}: {err})") from None
    holders = body.get("holders") if isinstance(body, dict) else None
    if not isinstance(body, dict) or body.get("format") != FORMAT or not isinstance(holders, dict):
        raise _damaged(path, f"not a '{FORMAT}' file")
    if len(holders) > MAX_HOLDERS:
        raise _damaged(path, f"{len(holders)} holders (at most {MAX_HOLDERS})")
    out: dict[str, bytes] = {}
    for actor_id, hexdigest in holders.items():
        if not isinstance(actor_id, str) or not actor_id_pattern.fullmatch(actor_id):
            raise _damaged(path, f"actor id {str(actor_id)[:80]!r} is not one the learner accepts")
        try:
            value = bytes.fromhex(hexdigest) if isinstance(hexdigest, str) else b""
        except ValueError:
            value = b""
        if len(value) != hashlib.sha256().digest_size:
            raise _damaged(path, f"the digest of actor id '{actor_id}' is not a SHA-256 in hex")
        out[actor_id] = value
    return out


def _damaged(path: Path, why: str) -> RobotRLError:
    return RobotRLError(f"{path}: {why}; delete it to start the learner without the actor ids' holders (each "
                        "actor then registers again, and until it does another client with the token may take "
                        "its id)")
