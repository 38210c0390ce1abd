"""A camera rendered from the MuJoCo world: ``cameras.<name>.backend: sim``.

Its code stays in the core (:mod:`robot_rl.sim`), which needs the world: the sim
registers its factory with :func:`robot_rl_drivers.cameras.register_camera_backend` (or a
caller passes ``factories=``). Its ``hardware`` block is a free mapping (the scene says
the rest).
"""

from __future__ import annotations

from robot_rl_drivers.spec import CameraSpec

SPEC = CameraSpec(name="sim", folder="sim", simulated=True,
                  doc="the sim backend renders from a MuJoCo world; build it through robot_rl.sim, which registers "
                      "it with register_camera_backend('sim', ...)")
