"""PegInsert's scripted expert: the source of its demonstrations."""

from __future__ import annotations

import numpy as np

from robot_rl.sim.experts import RimDetector, ScriptedExpert


class PegInsertExpert(ScriptedExpert):
    """Align the peg tip over the hole, then push down while correcting xy; a push stuck on the rim aligns again."""

    align_xy = 0.0008  # metres: tip over the hole this close before pushing down
    retry_on_rim = True  # the reward scenarios turn it off: they hold a push where the board stops it

    def reset(self) -> None:
        self.phase = "align"
        self.rim = RimDetector(enabled=self.retry_on_rim)

    def goal_distance(self) -> float:
        return float(np.linalg.norm(self.task_state()[3:6]))  # peg tip relative to the hole

    def plan(self) -> tuple[np.ndarray, float]:
        state = self.task_state()
        tip, hole = state[0:3], state[0:3] - state[3:6]
        tcp = self.tcp()
        offset = tcp - tip  # TCP relative to the tip
        xy_err = np.linalg.norm((hole - tip)[:2])
        if self.phase == "align":
            target_tip = np.array([hole[0], hole[1], hole[2] + 0.01])
            if xy_err < self.align_xy and tip[2] < hole[2] + 0.02:
                self.phase = "insert"
                self.rim.start_push()
        if self.phase == "insert":
            target_tip = np.array([hole[0], hole[1], hole[2] - self.params.insert_depth - 0.01])
            stuck = self.rim.stuck(tip[2], hole[2])
            if stuck or (xy_err > 0.003 and tip[2] > hole[2]):
                self.phase = "align"
        return target_tip + offset, 0.0
