#!/usr/bin/env bash
# Set up robot_rl in a virtualenv: the PyTorch CPU pin first, then the package and its extras, each at the
# version scripts/constraints.txt holds (the versions the tests were run with).
#
#   scripts/setup.sh [EXTRAS]      EXTRAS: sim (default), dev (sim + test tools), real, or a list: sim,real
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
echo "setup: installing $(grep '^torch==' "$constraints") into $venv"
"$venv/bin/pip" install -q -c "$constraints" torch
echo "setup: installing robot_rl[$extras] at the versions in $constraints"
"$venv/bin/pip" install -q -c "$constraints" -e ".[$extras]"
echo "setup: done ($("$venv/bin/python" -c 'import robot_rl; print("robot_rl", robot_rl.__version__)'))"
