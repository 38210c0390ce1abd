"""PegInsert's scene: a board with a square hole built from four boxes, and the peg on the hand."""

from __future__ import annotations

from robot_rl.sim.model import TCP_OFFSET, SceneParts
from robot_rl.tasks.peg_insert.params import PegInsertParams


def scene_parts(p: PegInsertParams) -> SceneParts:
    """MJCF for the board (a ``hole`` site at the hole's top centre) and the peg held by the hand."""
    w = p.hole_half_width
    b, t = p.board_half_size, p.board_thickness / 2.0
    hx, hy = p.hole_xy
    side = (b - w) / 2.0
    off = (w + b) / 2.0
    walls = [
        (hx + off, hy, side, b), (hx - off, hy, side, b),
        (hx, hy + off, w, side), (hx, hy - off, w, side),
    ]
    board = "\n".join(
        f'<geom class="board" type="box" pos="{x} {y} {t}" size="{sx} {sy} {t}"/>' for x, y, sx, sy in walls)
    peg_center = TCP_OFFSET + p.peg_protrusion - p.peg_length / 2.0
    return SceneParts(
        defaults="""<default class="board">
  <geom contype="1" conaffinity="1" rgba="0.25 0.45 0.8 1" friction="0.4 0.005 0.0001" solref="0.004 1"
        solimp="0.95 0.99 0.0005"/>
</default>""",
        worldbody=f'<body name="board" pos="0 0 0">\n{board}\n'
                  f'<site name="hole" pos="{hx} {hy} {2 * t}" size="0.003" rgba="0 1 0 1" group="4"/>\n</body>',
        hand=f'<geom name="peg" type="box" pos="0 0 {peg_center}" size="{p.peg_half_width} {p.peg_half_width} '
             f'{p.peg_length / 2.0}" mass="0.05" rgba="0.9 0.75 0.2 1" friction="0.4 0.005 0.0001" '
             f'solref="0.004 1" solimp="0.95 0.99 0.0005" contype="1" conaffinity="1"/>',
    )
