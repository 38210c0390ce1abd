"""Typed config for watching a session: the ``viz:`` section of a session YAML.

``viz.rerun`` streams what an actor sees and does (camera images, TCP pose and target,
actions, reward, intervention, success) to a `rerun <https://rerun.io>`_ viewer, or saves
it to an ``.rrd`` file that ``rerun <file>`` opens later (see
:mod:`robot_rl.envs.live_view`). It is off by default and needs the optional rerun-sdk
(the ``viz`` extra: ``scripts/setup.sh viz``). It applies to practice envs (``robot-rl train``,
``robot-rl actor``, the actor node, human demo recording), never to evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from robot_rl.config.loader import param

#: The file ``viz.rerun: file`` writes when ``viz.rrd_path`` is null, inside ``train.run_dir``.
DEFAULT_RRD_NAME = "live_view.rrd"


@dataclass
class VizConfig:
    """Where the live view goes, and how much of it."""

    rerun: Literal["off", "spawn", "connect", "file", False] = param(
        "off", doc="off (YAML reads a bare off as false: both mean off); spawn: start a rerun viewer on this "
                   "machine (needs a display) and stream to it; connect: stream to a viewer already running at "
                   "viz.url (e.g. on a laptop); "
                   "file: save to viz.rrd_path (open it later with: rerun <file>)")
    rrd_path: Optional[str] = param(None, doc=f"rerun: file: the .rrd to write; null: <train.run_dir>/"
                                              f"{DEFAULT_RRD_NAME}")
    url: str = param("rerun+http://127.0.0.1:9876/proxy",
                     doc="rerun: connect: the viewer's address (a viewer started with plain 'rerun' listens here)")
    port: int = param(9876, min=1, max=65535, doc="rerun: spawn: the port of the viewer it starts")
    image_every: int = param(1, min=1, max=10**6,
                             doc="log camera images every N env steps (everything else every step): less bandwidth")
    jpeg_quality: int = param(0, min=0, max=100,
                              doc="0: raw frames; 1-100: JPEG-compress each frame at this quality (smaller files)")

    def __post_init__(self) -> None:
        if not isinstance(self.rerun, str):  # YAML 1.1 reads ``rerun: off`` as false
            self.rerun = "off"
