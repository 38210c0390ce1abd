"""``robot-rl bag``: check a rosbag2 MCAP bag, or repair one a crash cut short or a bad disk damaged.

    robot-rl bag check bags/session_20250101_120000
    robot-rl bag repair bags/session_20250101_120000

``check`` reads the whole file, chunk by chunk (no summary needed), and prints whether it
is complete, every damaged part it skipped (chunk index, byte offset, the messages its
index says it held), then the messages per topic and type; it exits 1 when the file is
cut short (a recorder killed, a full disk) or damaged (a chunk that fails its CRC). A
chunk in the middle that fails is skipped, not taken for the end of the file: every
chunk after it is read. ``repair`` rewrites such a bag whole, keeping every message of
every intact chunk (dropping only the damaged chunks and an unfinished tail), with the
summary and indexes every MCAP reader expects (``rosbags`` and the ``mcap`` package
refuse a file without them; ``ros2 bag play`` reads the whole chunks either way):
:func:`robot_rl.ros.bag.reader.repair_bag`. It keeps the original file first, beside it,
as ``<name>.orig`` (and ``metadata.yaml.orig``). A whole bag is left alone.

A bag is not trusted: a ``metadata.yaml`` that names a file outside the bag folder, an
alias-bomb or deeply nested ``metadata.yaml``, a chunk claiming more than
``--max-chunk-mib`` uncompressed: one line, exit 2, nothing opened outside the folder,
nothing written.
"""

from __future__ import annotations

import argparse

from robot_rl.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check", "repair"], help="what to do")
    parser.add_argument("bag", help="the bag folder (metadata.yaml + .mcap), or one .mcap file")
    parser.add_argument("--max-chunk-mib", type=int, default=256,
                        help="the most MiB one chunk may hold uncompressed (default 256); larger is refused")


def run(args: argparse.Namespace) -> int:
    from robot_rl.ros.bag.reader import open_bag, repair_bag

    if not 1 <= args.max_chunk_mib <= 1 << 16:
        raise ConfigError(f"bag {args.action}: --max-chunk-mib must be 1 to 65536, not {args.max_chunk_mib}")
    limit = args.max_chunk_mib << 20
    if args.action == "repair":
        print(repair_bag(args.bag, max_chunk_bytes=limit).line())
        return 0
    bag = open_bag(args.bag, keep_messages=False, max_chunk_bytes=limit)
    print(bag.summary())
    for damage in bag.damaged:
        print(f"  skipped {damage.line()}")
    width = max((len(name) for name in bag.topics), default=0)
    for name, topic in sorted(bag.topics.items()):
        print(f"  {name:<{width}}  {topic.count:>8}  {topic.type_name}")
    if bag.metadata_yaml is not None:
        listed = bag.metadata_yaml.get("message_count")
        if listed != bag.message_count:
            print(f"  metadata.yaml counts {listed} messages (written at the last flush)")
    if not bag.whole:
        print(f"repair it with: robot-rl bag repair {bag.path} (it keeps every intact chunk, and the original "
              f"file as {bag.file.name}.orig)")
        return 1
    return 0
