"""robot_rl: an installable Python package and a valid ament_python ROS 2 package."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robot_rl"

NODES = ["camera_node", "controller_node", "intervention_node", "actor_node", "sim_node"]

setup(
    name=PACKAGE,
    version="0.1.0",
    description="Learn precise manipulation skills on a real robot arm, with a person in the loop",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"])
    + ["robot_rl_drivers"] + [f"robot_rl_drivers.{p}" for p in ("cameras", "input", "robots")],
    # Hardware drivers live in drivers/ but import as robot_rl_drivers, so they never
    # collide with another distribution's top-level "drivers" module.
    package_dir={"robot_rl_drivers": "drivers"},
    package_data={PACKAGE: ["learning/proto/*.proto"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/configs", glob("configs/*.yaml")),
    ],
    install_requires=[
        "numpy>=1.24",
        "pyyaml>=6",
        "tqdm>=4.60",
        "gymnasium>=1.0",
        "torch>=2.2",  # scripts/setup.sh installs the CPU pin first, so this adds nothing
        "tensorboard>=2.14",
        "opencv-python-headless>=4.8",
        "cyclonedds>=0.10.5",
        "grpcio>=1.60",
        "protobuf>=4.25",
    ],
    extras_require={
        "sim": ["mujoco>=3.2"],
        "real": ["pyrealsense2>=2.55", "pynput>=1.7", "hidapi>=0.14", "pyspacemouse>=1.1", "pylibfranka>=0.15"],
        "dev": ["pytest>=7", "rosbags>=0.10", "catkin_pkg>=1.0", "grpcio-tools>=1.60", "mujoco>=3.2"],
    },
    entry_points={
        "console_scripts": [f"robot-rl = {PACKAGE}.cli:main"]
        + [f"{node} = {PACKAGE}.nodes.{node}:main" for node in NODES],
    },
    zip_safe=False,
)
