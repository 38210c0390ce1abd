"""PickCube's scripted expert: the source of its demonstrations."""

from __future__ import annotations

import numpy as np

from robot_rl.sim.experts import ScriptedExpert


class PickCubeExpert(ScriptedExpert):
    """Above the cube → down → close → lift."""

    hover = 0.06

    def reset(self) -> None:
        self.phase = "approach"
        self.closed_steps = 0

    def goal_distance(self) -> float:
        return float(np.linalg.norm(self.task_state()[3:6]))  # cube relative to the TCP

    def plan(self) -> tuple[np.ndarray, float]:
        cube = self.task_state()[0:3]
        tcp = self.tcp()
        h = self.params.cube_half_size
        if self.phase == "approach":
            target = cube + [0.0, 0.0, self.hover]
            if np.linalg.norm((target - tcp)[:2]) < 0.006 and abs(target[2] - tcp[2]) < 0.02:
                self.phase = "descend"
        if self.phase == "descend":
            target = cube + [0.0, 0.0, 0.002]
            if abs(tcp[2] - target[2]) < 0.006 and np.linalg.norm((cube - tcp)[:2]) < 0.008:
                self.phase = "grasp"
            elif np.linalg.norm((cube - tcp)[:2]) > 0.02:
                self.phase = "approach"
                target = cube + [0.0, 0.0, self.hover]
            return target, -1.0
        if self.phase == "grasp":
            self.closed_steps += 1
            target = np.array([tcp[0], tcp[1], cube[2] + 0.002])
            if self.closed_steps >= 4:
                self.phase = "lift"
            return target, 1.0
        if self.phase == "lift":
            target = np.array([tcp[0], tcp[1], h + self.params.lift_height + 0.05])
            if cube[2] < h + 0.004 and tcp[2] > h + 0.03:  # dropped it: start again
                self.phase, self.closed_steps = "approach", 0
                return cube + [0.0, 0.0, self.hover], -1.0
            return target, 1.0
        return target, -1.0
