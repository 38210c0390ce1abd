"""A recording ROS node: the create_* API of robot_rl.ros nodes, driven by the test.

Publishers record what they are given (``published[topic]``); subscriptions and timers
are kept and run only when the test says so: ``deliver(topic, msg)`` hands a message to
the topic's callbacks, ``tick()`` runs every timer once. That fixes the order of messages
and timer ticks exactly. Like robot_rl.ros nodes, a callback raising ``MessageError``
drops the message and counts it (``dropped``, one line per message).

Used by tests/drivers/robots/test_franka_ros2.py and the ``franka_ros2`` contract rig.
"""

from __future__ import annotations

from types import SimpleNamespace

from robot_rl.ros.errors import MessageError


class RecordingNode:
    """create_publisher / create_subscription / create_timer, recorded; the test delivers
    messages with ``deliver`` and runs timers with ``tick``."""

    def __init__(self) -> None:
        self.published: dict[str, list] = {}
        self.callbacks: dict[str, list] = {}
        self.timers: list = []
        self.dropped: list[str] = []

    def create_publisher(self, msg_type, topic, qos):
        sent = self.published.setdefault(topic, [])
        return SimpleNamespace(publish=sent.append, topic=topic)

    def create_subscription(self, msg_type, topic, callback, qos):
        self.callbacks.setdefault(topic, []).append(callback)
        return (topic, callback)

    def create_timer(self, period, callback):
        self.timers.append(callback)
        return callback

    def destroy_timer(self, timer):
        self.timers.remove(timer)

    def destroy_publisher(self, pub):
        pass

    def destroy_subscription(self, sub):
        self.callbacks[sub[0]].remove(sub[1])

    def deliver(self, topic, msg) -> None:
        for cb in list(self.callbacks.get(topic, [])):
            try:
                cb(msg)
            except MessageError as err:
                self.dropped.append(str(err))

    def tick(self) -> None:
        for cb in list(self.timers):
            cb()
