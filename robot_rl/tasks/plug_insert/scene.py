"""PlugInsert's scene: a board with a keyed slot, and the keyed plug on the hand.

The slot is cut from six boxes: the four walls of a rectangle ``clearance`` wider than
the plug, with the wall at its +x end split to leave a notch for the key. The plug is a
box held by the hand (a geom on it, as in a fixed grasp) with a tab, the key, on its +x
end: it enters only turned the right way round, and only within a few degrees of the
slot's yaw (about ``clearance / 2`` over the key's reach).
"""

from __future__ import annotations

from robot_rl.sim.model import TCP_OFFSET, SceneParts
from robot_rl.tasks.plug_insert.params import PlugInsertParams

_SURFACE = 'friction="0.4 0.005 0.0001" solref="0.004 1" solimp="0.95 0.99 0.0005"'


def _box(x0: float, x1: float, y0: float, y1: float, top: float) -> str:
    """A board box spanning [x0, x1] x [y0, y1] from the table to ``top``."""
    return (f'<geom class="socket" type="box" pos="{(x0 + x1) / 2} {(y0 + y1) / 2} {top / 2}" '
            f'size="{(x1 - x0) / 2} {(y1 - y0) / 2} {top / 2}"/>')


def scene_parts(p: PlugInsertParams) -> SceneParts:
    """MJCF for the board (a ``socket`` site at the slot's top centre) and the plug held by the hand."""
    c = p.clearance / 2.0
    sx, sy = p.slot_half_size
    ny, nx = p.key_half_width + c, sx + p.key_depth + c  # the notch: half width, and where it ends in x
    b, top = p.board_half_size, p.board_thickness
    walls = [
        (-b, -sx, -b, b),  # -x end
        (nx, b, -b, b),  # behind the notch
        (sx, nx, -b, -ny), (sx, nx, ny, b),  # beside the notch
        (-sx, sx, -b, -sy), (-sx, sx, sy, b),  # the long sides
    ]
    hx, hy = p.socket_xy
    board = "\n".join(_box(x0, x1, y0, y1, top) for x0, x1, y0, y1 in walls)
    plug_z = TCP_OFFSET + p.plug_protrusion - p.plug_length / 2.0
    key_x = p.plug_half_length + p.key_depth / 2.0
    half_z = p.plug_length / 2.0
    return SceneParts(
        defaults=f"""<default class="socket">
  <geom contype="1" conaffinity="1" rgba="0.3 0.3 0.35 1" {_SURFACE}/>
</default>
<default class="plug">
  <geom contype="1" conaffinity="1" mass="0.03" rgba="0.95 0.95 0.9 1" {_SURFACE}/>
</default>""",
        worldbody=f'<body name="socket_board" pos="{hx} {hy} 0">\n{board}\n'
                  f'<site name="socket" pos="0 0 {top}" size="0.003" rgba="0 1 0 1" group="4"/>\n</body>',
        hand=f'<geom name="plug" class="plug" type="box" pos="0 0 {plug_z}" '
             f'size="{p.plug_half_length} {p.plug_half_width} {half_z}"/>\n'
             f'<geom name="plug_key" class="plug" type="box" pos="{key_x} 0 {plug_z}" '
             f'size="{p.key_depth / 2.0} {p.key_half_width} {half_z}"/>',
    )
