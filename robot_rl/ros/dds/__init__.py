"""The DDS backend: rclpy's node API over Eclipse Cyclone DDS, speaking ROS 2's wire conventions.

Used where rclpy cannot be imported (CI, pip-only installs). Nothing here imports
cyclonedds until a node is created.
"""
