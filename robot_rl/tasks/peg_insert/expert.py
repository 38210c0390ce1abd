"""PegInsert's scripted expert: the source of its demonstrations."""

from __future__ import annotations

from robot_rl.sim.experts import InsertionExpert


class PegInsertExpert(InsertionExpert):
    """Align the peg tip over the hole, then push down while correcting xy; a push stuck on the rim aligns again.

    A square peg held square to the hole has nothing to line up but its position, so the
    shared insertion strategy is all of it.
    """
