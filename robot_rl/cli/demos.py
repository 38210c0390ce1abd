"""``robot-rl demos``: demo directories to and from rosbag2 MCAP bags.

    robot-rl demos export demos/pick_cube bags/pick_cube_demos
    robot-rl demos import bags/pick_cube_demos demos/pick_cube_again

``export`` writes a demo directory (``robot-rl record-demos``, ``ros.demos_dir``) as a new
bag folder of standard messages that ``ros2 bag info``, ``ros2 bag play`` and Foxglove
open; ``import`` writes such a bag back into a demo directory, array for array, episode
by episode. The topic layout is in :mod:`robot_rl.ros.bag.demos`. A bag that is not a
demo bag, or one cut short, is refused in one line. A bag some of whose episodes cannot be
imported (damaged chunks skipped, episodes cut or missing, an earlier ``bag repair`` that
dropped some) is refused too, in one line that says how many episodes and messages would be
lost and where, with nothing written; ``--allow-loss`` imports its whole episodes anyway and
the output line still names what was left out.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["export", "import"],
                        help="export: DEMO_DIR -> BAG; import: BAG -> DEMO_DIR")
    parser.add_argument("source", help="export: the demo directory; import: the bag folder")
    parser.add_argument("dest", help="export: the new bag folder; import: the demo directory to write")
    parser.add_argument("--force", action="store_true", help="import: replace the demos DEMO_DIR already holds")
    parser.add_argument("--append", action="store_true",
                        help="import: add to the demos DEMO_DIR already holds (same spaces)")
    parser.add_argument("--allow-loss", action="store_true",
                        help="import: accept leaving out the episodes a damaged or cut bag cannot give whole")


def run(args: argparse.Namespace) -> int:
    from robot_rl.errors import ConfigError
    from robot_rl.ros.bag.demos import export_demos, import_demos

    if args.action == "export":
        if args.force or args.append or args.allow_loss:
            raise ConfigError("demos export writes a new bag folder: --force, --append and --allow-loss are for import")
        print(export_demos(args.source, args.dest).line())
        return 0
    if args.force and args.append:
        raise ConfigError("demos import: --force replaces the demos, --append adds to them; give one")
    print(import_demos(args.source, args.dest, force=args.force, append=args.append,
                       allow_loss=args.allow_loss).line())
    return 0
