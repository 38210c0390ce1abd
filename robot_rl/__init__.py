"""robot_rl: learn precise manipulation skills on a real arm, with sim mode on MuJoCo.

Importing robot_rl is cheap and needs no ROS, DDS, gRPC, GPU or hardware library;
heavier parts are imported where they are used.
"""

__version__ = "0.1.0"
