"""``robot-rl bag``: check a rosbag2 MCAP bag, or repair one a crash cut short.

    robot-rl bag check bags/session_20250101_120000
    robot-rl bag repair bags/session_20250101_120000

``check`` reads the whole file (no summary needed) and prints whether it is complete,
then the messages per topic and type; it exits 1 when the file is cut short (a recorder
killed, a full disk). ``repair`` rewrites a cut-short bag whole, keeping every readable
message and dropping the unfinished tail, with the summary and indexes every MCAP reader
expects (``rosbags`` and the ``mcap`` package refuse a file without them; ``ros2 bag
play`` reads the whole chunks either way): :func:`robot_rl.ros.bag.reader.repair_bag`. A
complete bag is left alone.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check", "repair"], help="what to do")
    parser.add_argument("bag", help="the bag folder (metadata.yaml + .mcap), or one .mcap file")


def run(args: argparse.Namespace) -> int:
    from robot_rl.ros.bag.reader import open_bag, repair_bag

    if args.action == "repair":
        print(repair_bag(args.bag).line())
        return 0
    bag = open_bag(args.bag, keep_messages=False)
    print(bag.summary())
    width = max((len(name) for name in bag.topics), default=0)
    for name, topic in sorted(bag.topics.items()):
        print(f"  {name:<{width}}  {topic.count:>8}  {topic.type_name}")
    if bag.metadata_yaml is not None:
        listed = bag.metadata_yaml.get("message_count")
        if listed != bag.message_count:
            print(f"  metadata.yaml counts {listed} messages (written at the last flush)")
    if not bag.complete:
        print(f"repair it with: robot-rl bag repair {bag.path}")
        return 1
    return 0
