"""``robot-rl demos``: demo directories to and from rosbag2 MCAP bags and LeRobotDataset v3 folders.

    robot-rl demos export demos/pick_cube bags/pick_cube_demos
    robot-rl demos import bags/pick_cube_demos demos/pick_cube_again
    robot-rl demos export --format lerobot demos/pick_cube datasets/pick_cube
    robot-rl demos import --format lerobot datasets/pick_cube demos/pick_cube_again
    robot-rl demos import --format lerobot --config pick_cube --resize their_dataset demos/theirs
    robot-rl demos import --format lerobot --config pick_cube their_dataset demos/theirs --action-range stats

``export`` writes a demo directory (``robot-rl record-demos``, ``ros.demos_dir``) as a new
bag folder of standard messages that ``ros2 bag info``, ``ros2 bag play`` and Foxglove
open; ``import`` writes such a bag back into a demo directory, array for array, episode
by episode. The topic layout is in :mod:`robot_rl.ros.bag.demos`. A bag that is not a
demo bag, or one cut short, is refused in one line. A bag some of whose episodes cannot be
imported (damaged chunks skipped, episodes cut or missing, an earlier ``bag repair`` that
dropped some) is refused too, in one line that says how many episodes and messages would be
lost and where, with nothing written; ``--allow-loss`` imports its whole episodes anyway and
the output line still names what was left out.

``--format lerobot`` exports a demo directory, or a run's replay log (``<run>/replay``), as a
new LeRobotDataset v3 folder, and imports one (a local folder; nothing is downloaded) into a
demo directory: :mod:`robot_rl.data.lerobot_export` and :mod:`robot_rl.data.lerobot_import`
say what v3 cannot hold and how an import rebuilds it. A dataset robot_rl did not export
needs ``--config``, the task it is for; its features, cameras and fps must be the task's,
and images of another size are resized only with ``--resize``. Actions outside the task's
action space are refused; ``--action-range LOW HIGH`` (the range of the dataset's units, one
value or comma-separated per dimension) or ``--action-range stats`` (the dataset's
``meta/stats.json``) rescales them linearly into it: :mod:`robot_rl.data.lerobot_actions`.
"""

from __future__ import annotations

import argparse
import re

#: argparse takes a word starting with "-" for an option unless it looks like a plain negative number;
#: ``--action-range -0.05,-0.05,0 0.05,0.05,2`` and ``-1e3`` are numbers too (demos has no such option)
_NEGATIVE_VALUE = re.compile(r"^-(?:[\d.]|inf|nan)", re.IGNORECASE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["export", "import"],
                        help="export: DEMO_DIR -> BAG or DATASET; import: BAG or DATASET -> DEMO_DIR")
    parser.add_argument("source", help="export: the demo directory (or a run's replay log); import: the bag or "
                                       "dataset folder")
    parser.add_argument("dest", help="export: the new bag or dataset folder; import: the demo directory to write")
    parser.add_argument("--format", choices=["bag", "lerobot"], default="bag",
                        help="bag: rosbag2 MCAP; lerobot: a LeRobotDataset v3 folder")
    parser.add_argument("--config", default=None,
                        help="import --format lerobot: the task the dataset is for (a name or a path); needed for "
                             "a dataset robot_rl did not export")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="import --format lerobot: override a config value")
    parser.add_argument("--resize", action="store_true",
                        help="import --format lerobot: resize camera images of another size to the task's")
    parser.add_argument("--action-range", nargs="+", default=None, metavar="WORD",
                        help="import --format lerobot: LOW HIGH or stats; rescale actions linearly per dimension "
                             "from LOW..HIGH (one number, or comma-separated numbers per dimension) or from the "
                             "min/max of the dataset's meta/stats.json ('stats') into the task's action space; "
                             "give it after the folders")
    parser._negative_number_matcher = _NEGATIVE_VALUE
    parser.add_argument("--force", action="store_true", help="import: replace the demos DEMO_DIR already holds")
    parser.add_argument("--append", action="store_true",
                        help="import: add to the demos DEMO_DIR already holds (same spaces)")
    parser.add_argument("--allow-loss", action="store_true",
                        help="import: accept leaving out the episodes a damaged or cut bag cannot give whole")


def run(args: argparse.Namespace) -> int:
    from robot_rl.errors import ConfigError

    if args.format == "lerobot":
        return _run_lerobot(args)
    if args.config or args.overrides or args.resize or args.action_range is not None:
        raise ConfigError("demos: --config, --set, --resize and --action-range are for --format lerobot")
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


def _run_lerobot(args: argparse.Namespace) -> int:
    from robot_rl.errors import ConfigError

    if args.allow_loss:
        raise ConfigError("demos --format lerobot: --allow-loss is for bags; a v3 dataset imports whole or not at all")
    if args.action == "export":
        from robot_rl.data.lerobot_export import export_lerobot

        if args.force or args.append or args.config or args.overrides or args.resize or args.action_range is not None:
            raise ConfigError("demos export writes a new dataset folder from the demos' own manifest: --force, "
                              "--append, --config, --set, --resize and --action-range are for import")
        print(export_lerobot(args.source, args.dest).line())
        return 0
    if args.force and args.append:
        raise ConfigError("demos import: --force replaces the demos, --append adds to them; give one")
    from robot_rl.data.lerobot_actions import parse_action_range
    from robot_rl.data.lerobot_import import import_lerobot

    action_range = parse_action_range(args.action_range) if args.action_range is not None else None
    task: dict = {}
    if args.config:
        from robot_rl.assemble import config_spaces_env
        from robot_rl.config import to_dict
        from robot_rl.paths import resolve_config
        from robot_rl.tasks import load_config

        cfg = load_config(resolve_config(args.config), args.overrides)
        env = config_spaces_env(cfg)
        hz = float(cfg.env.control_hz)
        if hz != round(hz):
            raise ConfigError(f"{args.config}: env.control_hz is {hz:g}; a LeRobotDataset v3 has a whole number of "
                              "frames per second, so no dataset matches this task's steps")
        task = {"obs_space": env.observation_space, "action_space": env.action_space, "task": cfg.task.name,
                "env_config": to_dict(cfg.env), "fps": int(round(hz))}
    elif args.overrides:
        raise ConfigError("demos import: --set needs --config")
    print(import_lerobot(args.source, args.dest, resize=args.resize, force=args.force, append=args.append,
                         action_range=action_range, **task).line())
    return 0
