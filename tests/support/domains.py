"""``private_domain``: a ROS_DOMAIN_ID for one test, never one a test on another pytest-xdist worker can draw.

The suite runs on several workers at once (``pytest -n auto``), and DDS tests on two workers must not
meet in one domain. Each worker draws only the domains of its own residue class (domain mod the
worker count), so two workers never share one; the draw uses the system's randomness, since tests
that seed Python's ``random`` (a trainer does) would otherwise give every worker the same sequence.
"""

from __future__ import annotations

import os
import random

_RNG = random.SystemRandom()


def worker_slot() -> tuple[int, int]:
    """``(this worker's index, the number of workers)``; ``(0, 1)`` outside pytest-xdist."""
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(name[2:]) if name[2:].isdigit() else 0
    return index % max(count, 1), max(count, 1)


def private_domain(low: int, high: int) -> int:
    """A domain in ``[low, high]`` that only this worker draws."""
    index, count = worker_slot()
    choices = [d for d in range(low, high + 1) if d % count == index]
    return _RNG.choice(choices or list(range(low, high + 1)))
