"""rosbag2 bags with MCAP storage, written and read without ROS 2.

* :mod:`~robot_rl.ros.bag.writer`: :class:`BagWriter`, the bag folder ``ros2 bag record
  -s mcap`` writes (``metadata.yaml`` + one ``.mcap``), flushed in chunks so that a
  crash loses at most the chunk in progress;
* :mod:`~robot_rl.ros.bag.reader`: :func:`open_bag` reads a bag, also one cut short or
  with damaged chunks (skipped and named), and says how much of it is whole;
  :func:`repair_bag` rewrites such a bag whole, keeping the original beside it;
* :mod:`~robot_rl.ros.bag.guard`: what a bag may make the reader do (files inside its
  folder only, guarded YAML, bounded chunk sizes);
* :mod:`~robot_rl.ros.bag.hostile`: damaged and hostile bags built on purpose, for the
  adversarial tests and ``bench/bag_attacks.py``;
* :mod:`~robot_rl.ros.bag.schema`: the ``ros2msg`` schemas and offered-QoS text the file
  carries per topic;
* :mod:`~robot_rl.ros.bag.demos`: demo directories to and from bags, array for array.

The session recorder (``ros.record``) is :mod:`robot_rl.nodes.recorder_node`; the
commands are ``robot-rl bag`` and ``robot-rl demos``. Messages are stored as the
encapsulated CDR bytes robot_rl's codec, rclpy and DDS produce, with robot_rl's message
definitions (ROS 2 Jazzy's) as schemas, so ``rosbags``, Foxglove and ``ros2 bag`` decode
them. Importing this package imports no ROS, DDS or MCAP library; writing needs the
``mcap`` package (>= 1.6).
"""

from robot_rl.ros.bag.reader import Bag, open_bag, repair_bag
from robot_rl.ros.bag.writer import BagError, BagWriter

__all__ = ["Bag", "BagError", "BagWriter", "open_bag", "repair_bag"]
