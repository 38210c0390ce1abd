#!/usr/bin/env bash
# Set up robot_rl in a virtualenv: the PyTorch CPU pin first, then the package and its extras, each at the
# version scripts/constraints.txt holds (the versions the tests were run with).
#
#   scripts/setup.sh [EXTRAS]      EXTRAS: one extra or a list, e.g. sim,real (default: sim)
#
# The extras (setup.py's extras_require; tests/test_newcomer_docs.py keeps this list whole):
#   sim     MuJoCo: sim mode (the default)
#   real    the hardware libraries: RealSense cameras, SpaceMouse (hidapi), keyboard (pynput), libfranka
#   ur      a UR e-series arm (ur-rtde; robot.backend: ur)
#   wandb   logging to Weights & Biases (train.wandb.enabled)
#   viz     the rerun live view of a session (viz.rerun)
#   docs    mkdocs, to build and serve docs/
#   lerobot LeRobotDataset v3 in and out (robot-rl demos --format lerobot): pyarrow, and PyAV for AV1 videos
#   dev     everything the test suite needs: sim, real, wandb, viz, docs, lerobot and the test tools (pytest, ruff, ...);
#           not ur (the tests drive the UR backend through a fake)
# Run it again with another extra to add it to the same virtualenv (scripts/setup.sh ur): what is installed stays.
# Afterwards the commands are in .venv/bin: call .venv/bin/robot-rl, or `source .venv/bin/activate` first.
#
# ROBOT_RL_VENV chooses the virtualenv folder (default: .venv in the repository), ROBOT_RL_PYTHON the
# interpreter it is made from (default: python3). With a ROS 2 sourced (ROS_DISTRO set), the virtualenv is made
# from the Python ROS 2 runs on (default: /usr/bin/python3) and sees its packages (rclpy, the message
# packages), and it holds a COLCON_IGNORE so that colcon never takes it for part of a workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-sim}"
venv="${ROBOT_RL_VENV:-.venv}"
constraints="scripts/constraints.txt"  # the tested versions, torch's CPU pin among them
python="${ROBOT_RL_PYTHON:-python3}"
venv_flags=()
if [[ -n "${ROS_DISTRO:-}" ]]; then
    python="${ROBOT_RL_PYTHON:-/usr/bin/python3}"
    venv_flags=(--system-site-packages)
fi

# Headless MuJoCo rendering needs Mesa's EGL; pyrealsense2 needs libusb.
missing=()
ldconfig -p | grep -q 'libEGL_mesa.so.0' || missing+=(libegl1 libegl-mesa0 libgl1-mesa-dri)
if [[ "$extras" == *real* || "$extras" == *dev* ]]; then
    ldconfig -p | grep -q 'libusb-1.0.so.0' || missing+=(libusb-1.0-0)
fi
if [[ "$extras" == *dev* ]]; then
    # The keyboard test types real keys into pynput on a virtual X display.
    command -v Xvfb >/dev/null || missing+=(xvfb)
    command -v xdotool >/dev/null || missing+=(xdotool)
fi
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        echo "setup: installing system libraries: ${missing[*]}"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "setup: please install these system libraries first: ${missing[*]}" >&2
    fi
fi

[[ -x "$venv/bin/python" ]] || "$python" -m venv "${venv_flags[@]}" "$venv"
[[ -z "${ROS_DISTRO:-}" ]] || touch "$venv/COLCON_IGNORE"
# pip's own news, one line per package it fetches and one as it installs, so that minutes of downloading and
# unpacking are seen to move; its warnings and errors (stderr) pass as they are.
progress() {
    sed -u -n -e 's/^Collecting \([^ ;]*\).*/setup:   fetching \1/p' \
        -e 's/^Installing collected packages: .*/setup:   installing (unpacking takes a minute or two)/p'
}
echo "setup: installing $(grep '^torch==' "$constraints") into $venv (a download of several hundred MB: minutes)"
"$venv/bin/pip" install -c "$constraints" torch | progress
echo "setup: installing robot_rl[$extras] and its requirements at the versions in $constraints (a few minutes)"
"$venv/bin/pip" install -c "$constraints" -e ".[$extras]" | progress
echo "setup: done ($("$venv/bin/python" -c 'import robot_rl; print("robot_rl", robot_rl.__version__)')); the commands" \
     "are in $venv/bin: call $venv/bin/robot-rl, or run 'source $venv/bin/activate' to put them on PATH"
