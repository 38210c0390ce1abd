"""The ``robot-rl`` command.

Each subcommand lives in its own module under robot_rl.cli and exposes
``add_arguments(parser)`` and ``run(args) -> int``. Modules are imported only when their
subcommand runs, so ``robot-rl --help`` stays fast and a missing optional library
only matters for the command that needs it.

Errors a user can fix (:class:`robot_rl.errors.RobotRLError`) are printed as one line,
``robot-rl: <what and where>``, with a non-zero exit status and no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import re
import sys

from robot_rl.errors import RobotRLError

# subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "rollout": ("robot_rl.cli.rollout", "run the scripted expert in sim, report its success rate, save an image strip"),
    "record-rewards": ("robot_rl.cli.record_rewards",
                       "record camera frames labelled success/failure for the reward classifier"),
    "train-reward": ("robot_rl.cli.train_reward", "train the reward classifier; refuse it if it misses the bar"),
    "train": ("robot_rl.cli.train", "train SAC/RLPD in sim in one process (env, agent, buffers)"),
    "train-bc": ("robot_rl.cli.train_bc",
                 "behaviour cloning from a demo folder: a base policy checkpoint and its eval success in sim"),
    "record-demos": ("robot_rl.cli.record_demos",
                     "record demonstration episodes (scripted expert in sim; SpaceMouse, keyboard, gamepad)"),
    "learner": ("robot_rl.cli.learner", "serve actors over gRPC and train on what they send (learning plane)"),
    "actor": ("robot_rl.cli.actor", "run an env with the policy and stream its steps to a learner"),
    "eval": ("robot_rl.cli.eval", "run a train or learner run's policy for N episodes, report success, save a video"),
    "cameras": ("robot_rl.cli.cameras",
                "list connected cameras, or open a config's cameras and report size, fps and delay"),
    "launch": ("robot_rl.cli.launch", "start a session's node graph (sim or robot) as processes, without ROS 2"),
    "encoder": ("robot_rl.cli.encoder",
                "check a pretrained ResNet-10 weights file, or convert it to the project format"),
    "demos": ("robot_rl.cli.demos",
              "export a demo directory to a rosbag2 MCAP bag or a LeRobotDataset v3 folder, or import one back"),
    "bag": ("robot_rl.cli.bag", "check a rosbag2 MCAP bag (a recorded session), or repair one a crash cut short"),
}




def _with_arm_checks(commands: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """``commands`` and each arm backend's ``robot-rl <backend> ...`` command, asked of the
    arm registry (a backend's SPEC names its check module), before ``launch``."""
    from robot_rl_drivers.robots import robot_specs

    arms = {spec.name: (spec.check, spec.check_help) for spec in robot_specs() if spec.check}
    out: dict[str, tuple[str, str]] = {}
    for name, entry in commands.items():
        if name == "cameras":
            out.update(arms)
        out[name] = entry
    return out


COMMANDS = _with_arm_checks(COMMANDS)

_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)\s*(?:<[^>]*>)?`")  # :class:`X`, :func:`~a.b`, :ref:`t <x>`
_LITERAL = re.compile(r"``(.+?)``")


def plain(text: str) -> str:
    """``text`` without reStructuredText markup (double backticks, :class:`...` roles)."""
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default (when it has a meaningful one) and strips docstring markup."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain(text))

    def _get_help_string(self, action: argparse.Action) -> str:
        text = plain(action.help or "")
        if re.search(r"\bdefault\b", text, re.IGNORECASE) or not _meaningful(action.default) \
                or not (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE)):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"


def _meaningful(default: object) -> bool:
    """Whether a default is worth showing (not None, a store_true's False, or an empty list)."""
    return not (default is None or default is False or default is argparse.SUPPRESS or default == [])


def _show_defaults(parser: argparse.ArgumentParser) -> None:
    """Give options without help text a help line, so that their default is shown too."""
    for action in parser._actions:
        if not action.help and action.option_strings and _meaningful(action.default):
            action.help = "default: %(default)s"


def version() -> str:
    """The installed robot_rl's version (the source tree's ``__version__`` if not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("robot_rl")
    except PackageNotFoundError:
        from robot_rl import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robot-rl", description=plain(__doc__.split("\n\n")[0]),
                                     formatter_class=HelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--version", action="version", version=f"robot-rl {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, formatter_class=HelpFormatter)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # Find the subcommand first (ignoring --help), then let its module add its arguments.
    probe = [a for a in argv if a not in ("-h", "--help")]
    if not any(a in COMMANDS for a in probe):
        parser.parse_args(argv)  # prints usage or help and exits
    known, _ = parser.parse_known_args(probe)
    module = importlib.import_module(known._module)
    sub_parser = _subparser(parser, known.command)
    module.add_arguments(sub_parser)
    forms = ConfigForms.add(sub_parser)
    _show_defaults(sub_parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("robot_rl").setLevel(logging.DEBUG if args.verbose else logging.INFO)
    try:
        if forms is not None:
            forms.settle(args, known.command)
        return int(module.run(args) or 0)
    except RobotRLError as err:
        print(f"robot-rl: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("robot-rl: interrupted", file=sys.stderr)
        return 130


class ConfigForms:
    """A command's config taken both ways: ``robot-rl launch --config pick_cube`` as well as
    ``robot-rl launch pick_cube``, and ``robot-rl train pick_cube`` as well as ``robot-rl train
    --config pick_cube``. A command declares one form; :meth:`add` adds the other where that is
    unambiguous (a ``--config`` command with no positional argument, or a positional ``config``),
    and :meth:`settle` puts the one config given into ``args.config``: both forms naming
    different configs, or none where one is required, is one line and exit status 2."""

    OTHER = "_config_other_form"  # the added form's dest

    def __init__(self, positional: str, option: str, required: bool) -> None:
        self.positional, self.option, self.required = positional, option, required  # dests

    @classmethod
    def add(cls, parser: argparse.ArgumentParser) -> ConfigForms | None:
        config = next((a for a in parser._actions if a.dest == "config"), None)
        positionals = [a for a in parser._actions if not a.option_strings]
        if config is None:
            return None
        if not config.option_strings:  # declared positional: add --config
            config.nargs, config.required, config.default, config.metavar = argparse.OPTIONAL, False, None, "CONFIG"
            parser.add_argument("--config", dest=cls.OTHER, metavar="CONFIG",
                                help="the config, given as an option (the same as CONFIG given first)")
            return cls("config", cls.OTHER, required=True)
        if positionals:  # eval RUN_DIR [--config X]: a second positional would be ambiguous
            return None
        required, config.required = config.required, False
        parser.add_argument(cls.OTHER, nargs=argparse.OPTIONAL, metavar="CONFIG",
                            help="the config, given first (the same as --config CONFIG)")
        return cls(cls.OTHER, "config", required=required)

    def settle(self, args: argparse.Namespace, command: str) -> None:
        first, option = getattr(args, self.positional), getattr(args, self.option)
        delattr(args, self.OTHER)
        if first is not None and option is not None and not _same_config(first, option):
            raise RobotRLError(f"two configs given, {first} (first) and --config {option}; give one: "
                               f"robot-rl {command} {first} or robot-rl {command} --config {option}")
        args.config = first if first is not None else option
        if args.config is None and self.required:
            raise RobotRLError(f"{command} needs a config (a name or a path): robot-rl {command} --config pick_cube "
                               f"(or robot-rl {command} pick_cube)")


def _same_config(a: str, b: str) -> bool:
    """Whether two config arguments name the same file (``pick_cube`` and ``configs/pick_cube.yaml``)."""
    if a == b:
        return True
    from robot_rl.paths import resolve_config

    try:
        return resolve_config(a).resolve() == resolve_config(b).resolve()
    except RobotRLError:
        return False


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise KeyError(name)


if __name__ == "__main__":
    sys.exit(main())
