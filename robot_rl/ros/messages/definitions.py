"""The ROS 2 message types robot_rl uses, declared with their Jazzy ``.msg`` text.

Field names, order and types are those of the upstream ``.msg`` files (comments and
constants left out; they do not change the wire format or the RIHS01 hash). The classes
are declared in dependency order: a nested type must exist before it is used.
"""

from __future__ import annotations

from robot_rl.ros.messages.base import Message

# builtin_interfaces ------------------------------------------------------------------


class Time(Message, type_name="builtin_interfaces/msg/Time", definition="""
int32 sec
uint32 nanosec
"""):
    pass


# std_msgs ----------------------------------------------------------------------------


class Header(Message, type_name="std_msgs/msg/Header", definition="""
builtin_interfaces/Time stamp
string frame_id
"""):
    pass


class Bool(Message, type_name="std_msgs/msg/Bool", definition="bool data"):
    pass


class Float64(Message, type_name="std_msgs/msg/Float64", definition="float64 data"):
    pass


class String(Message, type_name="std_msgs/msg/String", definition="string data"):
    pass


# std_msgs' arrays (robot_rl.ros.bag.demos: vectors of an exported demo)
class MultiArrayDimension(Message, type_name="std_msgs/msg/MultiArrayDimension", definition="""
string label
uint32 size
uint32 stride
"""):
    pass


class MultiArrayLayout(Message, type_name="std_msgs/msg/MultiArrayLayout", definition="""
MultiArrayDimension[] dim
uint32 data_offset
"""):
    pass


class Float64MultiArray(Message, type_name="std_msgs/msg/Float64MultiArray", definition="""
MultiArrayLayout layout
float64[] data
"""):
    pass


# geometry_msgs -----------------------------------------------------------------------


class Point(Message, type_name="geometry_msgs/msg/Point", definition="""
float64 x
float64 y
float64 z
"""):
    pass


class Quaternion(Message, type_name="geometry_msgs/msg/Quaternion", definition="""
float64 x 0
float64 y 0
float64 z 0
float64 w 1
"""):
    pass


class Vector3(Message, type_name="geometry_msgs/msg/Vector3", definition="""
float64 x
float64 y
float64 z
"""):
    pass


class Pose(Message, type_name="geometry_msgs/msg/Pose", definition="""
Point position
Quaternion orientation
"""):
    pass


class PoseStamped(Message, type_name="geometry_msgs/msg/PoseStamped", definition="""
std_msgs/Header header
Pose pose
"""):
    pass


class Twist(Message, type_name="geometry_msgs/msg/Twist", definition="""
Vector3 linear
Vector3 angular
"""):
    pass


class TwistStamped(Message, type_name="geometry_msgs/msg/TwistStamped", definition="""
std_msgs/Header header
Twist twist
"""):
    pass


class Wrench(Message, type_name="geometry_msgs/msg/Wrench", definition="""
Vector3 force
Vector3 torque
"""):
    pass


class WrenchStamped(Message, type_name="geometry_msgs/msg/WrenchStamped", definition="""
std_msgs/Header header
Wrench wrench
"""):
    pass


class Transform(Message, type_name="geometry_msgs/msg/Transform", definition="""
Vector3 translation
Quaternion rotation
"""):
    pass


class TransformStamped(Message, type_name="geometry_msgs/msg/TransformStamped", definition="""
std_msgs/Header header
string child_frame_id
Transform transform
"""):
    pass


# sensor_msgs -------------------------------------------------------------------------


class RegionOfInterest(Message, type_name="sensor_msgs/msg/RegionOfInterest", definition="""
uint32 x_offset
uint32 y_offset
uint32 height
uint32 width
bool do_rectify
"""):
    pass


class Image(Message, type_name="sensor_msgs/msg/Image", definition="""
std_msgs/Header header
uint32 height
uint32 width
string encoding
uint8 is_bigendian
uint32 step
uint8[] data
"""):
    pass


class CameraInfo(Message, type_name="sensor_msgs/msg/CameraInfo", definition="""
std_msgs/Header header
uint32 height
uint32 width
string distortion_model
float64[] d
float64[9] k
float64[9] r
float64[12] p
uint32 binning_x
uint32 binning_y
RegionOfInterest roi
"""):
    pass


class JointState(Message, type_name="sensor_msgs/msg/JointState", definition="""
std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
"""):
    pass


class Joy(Message, type_name="sensor_msgs/msg/Joy", definition="""
std_msgs/Header header
float32[] axes
int32[] buttons
"""):
    pass


class CompressedImage(Message, type_name="sensor_msgs/msg/CompressedImage", definition="""
std_msgs/Header header
string format
uint8[] data
"""):
    pass


# diagnostic_msgs -----------------------------------------------------------------------


class KeyValue(Message, type_name="diagnostic_msgs/msg/KeyValue", definition="""
string key
string value
"""):
    pass


class DiagnosticStatus(Message, type_name="diagnostic_msgs/msg/DiagnosticStatus", definition="""
byte level
string name
string message
string hardware_id
KeyValue[] values
"""):
    # the .msg constants (byte OK=0 ...), as rclpy's generated class has them
    OK = b"\x00"
    WARN = b"\x01"
    ERROR = b"\x02"
    STALE = b"\x03"


class DiagnosticArray(Message, type_name="diagnostic_msgs/msg/DiagnosticArray", definition="""
std_msgs/Header header
DiagnosticStatus[] status
"""):
    pass


# tf2_msgs ----------------------------------------------------------------------------


class TFMessage(Message, type_name="tf2_msgs/msg/TFMessage", definition="""
geometry_msgs/TransformStamped[] transforms
"""):
    pass


# rosgraph_msgs -----------------------------------------------------------------------


class Clock(Message, type_name="rosgraph_msgs/msg/Clock", definition="""
builtin_interfaces/Time clock
"""):
    pass


ALL: tuple[type[Message], ...] = (
    Time, Header, Bool, Float64, String, MultiArrayDimension, MultiArrayLayout, Float64MultiArray,
    Point, Quaternion, Vector3, Pose, PoseStamped, Twist, TwistStamped, Wrench, WrenchStamped,
    Transform, TransformStamped, TFMessage, Clock,
    RegionOfInterest, Image, CameraInfo, JointState, Joy, CompressedImage,
    KeyValue, DiagnosticStatus, DiagnosticArray,
)
