"""robot_rl demo directories to and from rosbag2 MCAP bags, array for array.

``robot-rl demos export DEMO_DIR BAG`` writes a demo directory
(:mod:`robot_rl.data.demos`) as a bag of standard messages, which ``ros2 bag info``,
Foxglove and PlotJuggler open; ``robot-rl demos import BAG DEMO_DIR`` writes it back
through the demo module's own writer (:class:`~robot_rl.data.demos.DemoWriter`: one
durable file per episode). The round trip keeps every array byte for byte: the same
keys, dtypes, shapes and values, the episode boundaries and the intervened flags.

Topics of a demo bag:

=========================  ==============================  =============================================
topic                      type                            one message per
=========================  ==============================  =============================================
``/demo/manifest``         ``std_msgs/String``             bag: the demo directory's ``manifest.json``
``/demo/step``             ``std_msgs/String``             step: JSON ``{"episode", "step", "reward",
                                                           "terminated", "truncated", "intervened",
                                                           "success", "grasp_penalty"}``
``/demo/action``           ``std_msgs/Float64MultiArray``  step: the executed action
``/demo/obs/<key>``        ``sensor_msgs/Image`` (uint8    frame: observations 0..T-1 of the steps,
                           HxWx3 rgb8, HxW mono8, HxWx4    then the episode's final observation
                           rgba8), else
                           ``std_msgs/Float64MultiArray``
=========================  ==============================  =============================================

Time: frame ``f`` of the export (counted over all episodes, T+1 per episode) is logged
at ``start + f / env.control_hz`` (``start``: the manifest's ``created``), so a player
shows the demos at the rate they were recorded; a step's messages share its frame's
time. Episodes follow each other in the bag in their directory's order; ``episode``
counts them from 0 and ``step`` counts each episode's steps from 0.

Exactness: float32 and smaller numbers are exact in ``float64`` and in JSON's shortest
``repr`` of a double; the importer checks every value converts back to the manifest's
dtype without change. An observation dtype a double cannot hold exactly (``int64``,
``uint64``) is refused at export.

What the importer refuses, in one line: a bag that is not a demo bag (no
``/demo/manifest``, a missing observation topic, a topic of another type), a bag cut
short (no summary: it says how many messages and whole episodes were readable, and that
``robot-rl bag repair`` keeps them), and values that do not add up (shapes, dtypes, flags).

Episodes are rebuilt by time (a step's record, action and observations share its frame's
time), so the episodes a damaged chunk did not touch come back whole. An import that
would leave any episode out (a damaged chunk skipped, a step, action or frame missing, an
episode that never ended, episodes an earlier repair dropped or the export's count says
are missing) is refused with a one-line :class:`DemoLossError` naming what and where,
nothing written, unless ``allow_loss`` (``--allow-loss``): then the whole episodes are
imported and the report says what was left out.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import gymnasium as gym
import numpy as np

from robot_rl import jsonio
from robot_rl.config.yaml_text import parse_yaml
from robot_rl.data.demos import MANIFEST, DemoFormatError, DemoWriter, episode_files, read_episode, read_manifest
from robot_rl.data.spaces import box_from_spec
from robot_rl.data.transition import Step
from robot_rl.errors import ConfigError, RobotRLError
from robot_rl.ros.bag.reader import REPAIR_KEY, Bag, open_bag
from robot_rl.ros.bag.writer import BagError, BagWriter
from robot_rl.ros.messages import Header, Image, String, Time, deserialize, serialize
from robot_rl.ros.messages.definitions import Float64MultiArray, MultiArrayDimension, MultiArrayLayout

MANIFEST_TOPIC = "/demo/manifest"
STEP_TOPIC = "/demo/step"
ACTION_TOPIC = "/demo/action"
OBS_PREFIX = "/demo/obs/"
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_IMAGE_ENCODINGS = {1: "mono8", 3: "rgb8", 4: "rgba8"}
_CHANNELS = {v: k for k, v in _IMAGE_ENCODINGS.items()}
#: dtypes whose every value a float64 holds exactly
_EXACT_IN_DOUBLE = {"float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "bool"}
EPISODES_KEY = "robot_rl_episodes"  # custom_data of an exported bag: how many episodes it holds
_STEP_KEYS = ("episode", "step", "reward", "terminated", "truncated", "intervened", "success", "grasp_penalty")


class DemoBagError(RobotRLError):
    """A bag that cannot become a demo directory, or a demo directory that cannot become a bag."""


# --- spaces from a manifest -------------------------------------------------------------------


def _box(spec: dict[str, Any], where: str) -> gym.spaces.Box:
    try:
        return box_from_spec(spec)
    except ValueError as err:
        raise DemoBagError(f"{where}: {err}") from None


def spaces_of(manifest: dict[str, Any], where: str) -> tuple[gym.spaces.Dict, gym.spaces.Box]:
    """The observation and action spaces a demo manifest describes."""
    spaces = manifest.get("spaces")
    if not isinstance(spaces, dict) or not isinstance(spaces.get("observation"), dict):
        raise DemoBagError(f"{where}: the manifest has no observation spaces")
    obs = gym.spaces.Dict({k: _box(v, f"{where}: observation '{k}'") for k, v in spaces["observation"].items()})
    return obs, _box(spaces.get("action", {}), f"{where}: action")


# --- export -------------------------------------------------------------------------------------


def _multi_array(values: np.ndarray, labels: list[str]) -> Float64MultiArray:
    shape = values.shape or (1,)
    strides = [int(np.prod(shape[i:])) for i in range(len(shape))]
    dims = [MultiArrayDimension(label=label, size=int(n), stride=stride)
            for label, n, stride in zip(labels, shape, strides)]
    return Float64MultiArray(layout=MultiArrayLayout(dim=dims, data_offset=0),
                             data=np.ascontiguousarray(values, dtype=np.float64).ravel())


def _stamp(t_ns: int) -> Time:
    return Time(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000)


def _is_image(shape: tuple[int, ...], dtype: np.dtype) -> bool:
    return dtype == np.uint8 and (len(shape) == 2 or (len(shape) == 3 and shape[2] in _CHANNELS.values()))


def _obs_message(key: str, frame: np.ndarray, t_ns: int) -> Any:
    if _is_image(frame.shape, frame.dtype):
        h, w = frame.shape[:2]
        channels = 1 if frame.ndim == 2 else frame.shape[2]
        return Image(header=Header(stamp=_stamp(t_ns), frame_id=key), height=h, width=w,
                     encoding=_IMAGE_ENCODINGS[channels], is_bigendian=0, step=w * channels,
                     data=np.ascontiguousarray(frame).tobytes())
    return _multi_array(frame, [f"{key}.{i}" for i in range(max(frame.ndim, 1))])


def _start_ns(manifest: dict[str, Any]) -> int:
    try:
        return int(datetime.datetime.fromisoformat(str(manifest["created"])).timestamp() * 1e9)
    except (KeyError, ValueError, OverflowError):
        return 0


def _period_ns(manifest: dict[str, Any]) -> int:
    """The time between two frames of the export: one control period (``env.control_hz``, else 10 Hz)."""
    env = manifest.get("env") if isinstance(manifest.get("env"), dict) else {}
    hz = env.get("control_hz")
    if type(hz) not in (int, float) or not 1e-3 <= hz <= 1e6:
        hz = 10.0
    return max(1, int(round(1e9 / hz)))


@dataclass
class ExportReport:
    bag: Path
    episodes: int
    steps: int

    def line(self) -> str:
        return f"exported {self.episodes} episodes ({self.steps} steps) into {self.bag}"


def export_demos(demo_dir: str | Path, bag_dir: str | Path) -> ExportReport:
    """Write the demo directory ``demo_dir`` as the bag ``bag_dir`` (a new folder; see the module docstring)."""
    demo_dir = Path(demo_dir)
    manifest = read_manifest(demo_dir)
    manifest_text = (demo_dir / MANIFEST).read_bytes().decode("utf-8")
    obs_space, action_space = spaces_of(manifest, str(demo_dir / MANIFEST))
    for key, space in obs_space.spaces.items():
        if not _KEY.match(key):
            raise DemoBagError(f"{demo_dir}: observation key '{key}' cannot name a topic (letters, digits, _)")
        if np.dtype(space.dtype).name not in _EXACT_IN_DOUBLE and not _is_image(space.shape, space.dtype):
            raise DemoBagError(f"{demo_dir}: observation '{key}' is {np.dtype(space.dtype).name}, which a "
                               "float64 message cannot hold exactly")
    files = episode_files(demo_dir)
    if not files:
        raise DemoBagError(f"{demo_dir} holds no demo episodes to export")
    period_ns = _period_ns(manifest)
    t0 = _start_ns(manifest)
    writer = BagWriter(bag_dir, custom_data={"robot_rl": "demos", "demo_dir": str(demo_dir),
                                             EPISODES_KEY: str(len(files))})
    try:
        manifest_topic = writer.add_topic(MANIFEST_TOPIC, String._type)
        step_topic = writer.add_topic(STEP_TOPIC, String._type)
        action_topic = writer.add_topic(ACTION_TOPIC, Float64MultiArray._type)
        obs_topics = {}
        for key, space in sorted(obs_space.spaces.items()):
            kind = Image._type if _is_image(space.shape, space.dtype) else Float64MultiArray._type
            obs_topics[key] = writer.add_topic(OBS_PREFIX + key, kind)
        writer.write(manifest_topic, serialize(String(data=manifest_text)), t0)
        frame, steps_total = 0, 0
        for episode, path in enumerate(files):
            steps = read_episode(path, obs_space, action_space, episode_id=episode)
            for t, step in enumerate(steps):
                t_ns = t0 + (frame + t) * period_ns
                for key, topic in obs_topics.items():
                    writer.write(topic, serialize(_obs_message(key, step.obs[key], t_ns)), t_ns)
                writer.write(action_topic, serialize(_multi_array(np.asarray(step.action), ["action"])), t_ns)
                record = {"episode": episode, "step": t, "reward": float(np.float32(step.reward)),
                          "terminated": step.terminated, "truncated": step.truncated,
                          "intervened": step.intervened, "success": step.success,
                          "grasp_penalty": float(np.float32(step.grasp_penalty))}
                writer.write(step_topic, serialize(String(data=jsonio.dumps(record))), t_ns)
            t_ns = t0 + (frame + len(steps)) * period_ns
            for key, topic in obs_topics.items():
                writer.write(topic, serialize(_obs_message(key, steps[-1].next_obs[key], t_ns)), t_ns)
            frame += len(steps) + 1
            steps_total += len(steps)
            writer.flush()  # an episode at a time: a crash keeps the episodes already written
    finally:
        writer.close()
    return ExportReport(writer.path, len(files), steps_total)


# --- import -------------------------------------------------------------------------------------


@dataclass
class ImportReport:
    directory: Path
    episodes: int
    steps: int
    skipped: Optional[str]  # what the bag held that was not imported, in words (None: nothing)
    episodes_lost: int = 0  # episodes the bag held (or should have) that were not imported
    messages_lost: int = 0  # messages read but not imported, plus those the damaged chunks held

    def line(self) -> str:
        text = f"imported {self.episodes} episodes ({self.steps} steps) into {self.directory}"
        return text + (f"; left out {self.skipped}" if self.skipped else "")


class DemoLossError(DemoBagError):
    """A demo bag whose episodes cannot all be imported, and the loss was not accepted (``--allow-loss``)."""


def _topics_check(bag: Bag, obs_space: gym.spaces.Dict) -> None:
    want = {STEP_TOPIC: String._type, ACTION_TOPIC: Float64MultiArray._type}
    for key, space in obs_space.spaces.items():
        want[OBS_PREFIX + key] = Image._type if _is_image(space.shape, space.dtype) else Float64MultiArray._type
    for topic, type_name in want.items():
        found = bag.topics.get(topic)
        if found is None:
            raise DemoBagError(f"{bag.path}: no {topic} topic: not a complete robot_rl demo bag "
                               f"(its manifest names observation keys {sorted(obs_space.spaces)})")
        if found.type_name != type_name or found.encoding != "cdr":
            raise DemoBagError(f"{bag.path}: {topic} is {found.type_name} ({found.encoding}), a demo bag has "
                               f"{type_name} (cdr)")


def _finished_episodes(bag: Bag) -> int:
    """Episodes whose last step a (cut-short) bag still holds: for the error message only."""
    n = 0
    for m in bag.of(STEP_TOPIC):
        try:
            record = json.loads(deserialize(m.data, String).data)
        except (RobotRLError, json.JSONDecodeError):
            continue
        n += isinstance(record, dict) and bool(record.get("terminated") or record.get("truncated"))
    return n


def _custom_data(bag: Bag) -> dict[str, Any]:
    """The bag's rosbag2 ``custom_data``: from ``metadata.yaml``, else the file's own metadata record."""
    info = bag.metadata_yaml
    if info is None and bag.rosbag2_record:
        try:
            info = parse_yaml(bag.rosbag2_record, source=f"{bag.file}: rosbag2 metadata record")
        except ConfigError:
            info = None
    custom = info.get("custom_data") if isinstance(info, dict) else None
    return custom if isinstance(custom, dict) else {}


def _decode(bag: Bag, topic: str, cls: type, i: int, data: bytes) -> Any:
    try:
        return deserialize(data, cls)
    except RobotRLError as err:
        raise DemoBagError(f"{bag.path}: {topic} message {i}: {err}") from None


def _step_record(bag: Bag, i: int, text: str) -> dict[str, Any]:
    where = f"{bag.path}: {STEP_TOPIC} message {i}"
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise DemoBagError(f"{where}: not JSON ({err})") from None
    if not isinstance(record, dict) or any(k not in record for k in _STEP_KEYS):
        raise DemoBagError(f"{where}: a step needs {', '.join(_STEP_KEYS)}")
    for k in ("episode", "step"):
        if type(record[k]) is not int or record[k] < 0:
            raise DemoBagError(f"{where}: '{k}' must be a whole number >= 0, not {record[k]!r}")
    for k in ("terminated", "truncated", "intervened", "success"):
        if type(record[k]) is not bool:
            raise DemoBagError(f"{where}: '{k}' must be true or false, not {record[k]!r}")
    for k in ("reward", "grasp_penalty"):
        v = record[k]
        if type(v) not in (int, float) or not math.isfinite(v) or float(np.float32(v)) != float(v):
            raise DemoBagError(f"{where}: '{k}' {v!r} is not a finite float32 value")
    return record


def _array_of(bag: Bag, topic: str, i: int, msg: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    where = f"{bag.path}: {topic} message {i}"
    if isinstance(msg, Image):
        channels = _CHANNELS.get(msg.encoding)
        want = shape if len(shape) == 3 else (*shape, 1)
        if channels is None or (msg.height, msg.width, channels) != want or msg.step != msg.width * channels \
                or len(msg.data) != msg.height * msg.step:
            raise DemoBagError(f"{where}: a {msg.width}x{msg.height} {msg.encoding} image, the manifest says {shape}")
        return np.frombuffer(bytes(msg.data), np.uint8).reshape(shape).copy()
    values = np.frombuffer(bytes(msg.data), np.float64) if len(msg.data) else np.zeros(0)
    if values.size != int(np.prod(shape)):
        raise DemoBagError(f"{where}: {values.size} values, the manifest's shape {shape} holds {int(np.prod(shape))}")
    out = values.astype(dtype).reshape(shape)
    if not np.array_equal(out.astype(np.float64).ravel(), values):
        raise DemoBagError(f"{where}: values that are not {dtype.name} values (not exported by robot_rl)")
    return out


def import_demos(bag_dir: str | Path, demo_dir: str | Path, *, force: bool = False,
                 append: bool = False, allow_loss: bool = False) -> ImportReport:
    """Write the demo bag ``bag_dir`` into the demo directory ``demo_dir`` (see the module docstring).

    A bag some of whose episodes cannot be imported (damaged chunks, episodes cut or
    missing, an earlier repair that dropped some) is refused with a one-line
    :class:`DemoLossError` that says what would be lost and where, before anything is
    written, unless ``allow_loss``: then the whole episodes are imported and the report
    says what was left out.
    """
    bag = open_bag(bag_dir)
    if not bag.complete:
        raise DemoBagError(f"{bag.file} is cut short ({bag.problem}): {bag.message_count} messages are readable, "
                           f"{_finished_episodes(bag)} finished episodes among them; 'robot-rl bag repair "
                           f"{bag.path}' keeps what is readable (and the original), then import again")
    if MANIFEST_TOPIC not in bag.topics or not bag.of(MANIFEST_TOPIC):
        names = sorted(bag.topics)
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        damage = f"; {bag.damage_line()}" if bag.damaged else ""
        raise DemoBagError(f"{bag.path} is not a robot_rl demo bag: it has no {MANIFEST_TOPIC} "
                           f"{'topic' if MANIFEST_TOPIC not in bag.topics else 'message'} "
                           f"(its topics: {shown or 'none'}){damage}")
    manifest_msgs = bag.of(MANIFEST_TOPIC)
    if len(manifest_msgs) != 1:
        raise DemoBagError(f"{bag.path}: {len(manifest_msgs)} messages on {MANIFEST_TOPIC}, a demo bag has one")
    try:
        manifest = json.loads(_decode(bag, MANIFEST_TOPIC, String, 0, manifest_msgs[0].data).data)
    except json.JSONDecodeError as err:
        raise DemoBagError(f"{bag.path}: {MANIFEST_TOPIC} is not JSON ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != "robot_rl-demos":
        raise DemoBagError(f"{bag.path}: {MANIFEST_TOPIC} is not a robot_rl demo manifest")
    obs_space, action_space = spaces_of(manifest, f"{bag.path}: {MANIFEST_TOPIC}")
    _topics_check(bag, obs_space)

    records = [(m.log_time, _step_record(bag, i, _decode(bag, STEP_TOPIC, String, i, m.data).data))
               for i, m in enumerate(bag.of(STEP_TOPIC))]
    actions = {m.log_time: _array_of(bag, ACTION_TOPIC, i, _decode(bag, ACTION_TOPIC, Float64MultiArray, i, m.data),
                                     action_space.shape, np.dtype(action_space.dtype))
               for i, m in enumerate(bag.of(ACTION_TOPIC))}
    frames = {}
    for key, space in obs_space.spaces.items():
        topic = OBS_PREFIX + key
        cls = Image if _is_image(space.shape, space.dtype) else Float64MultiArray
        frames[key] = {m.log_time: _array_of(bag, topic, i, _decode(bag, topic, cls, i, m.data), space.shape,
                                             np.dtype(space.dtype)) for i, m in enumerate(bag.of(topic))}
    expected = _custom_data(bag).get(EPISODES_KEY)
    rebuilt = _Rebuild(bag, _period_ns(manifest), int(expected) if str(expected).isdigit() else None)
    episodes = rebuilt.episodes(records, actions, frames)
    used = sum(len(s) * 2 + (len(s) + 1) * len(frames) for s in episodes) + 1  # steps, actions, frames, manifest
    lost = rebuilt.losses(bag, _custom_data(bag).get(REPAIR_KEY), bag.message_count - used)
    report = ImportReport(Path(demo_dir), len(episodes), sum(len(s) for s in episodes), lost or None,
                          rebuilt.episodes_lost, (bag.message_count - used) + (bag.lost_messages or 0))
    if not episodes:
        raise DemoBagError(f"{bag.path} holds no finished demo episode" + (f" ({lost})" if lost else ""))
    if lost and not allow_loss:
        raise DemoLossError(f"{bag.path}: importing it would leave out {lost}; nothing written; pass "
                            f"--allow-loss to import its {len(episodes)} whole episodes anyway")
    writer = DemoWriter(demo_dir, obs_space, action_space, task=str(manifest.get("task", "")),
                        source=str(manifest.get("source", "")), env_config=manifest.get("env") or {},
                        force=force, append=append)
    for steps in episodes:
        writer.write_episode(steps)
    return report


class _Rebuild:
    """Episodes of Steps from the per-step and per-frame streams, matched by their log times.

    Each step's record, action and observation share the time of its frame; the episode's
    final observation is one control period after its last step. Matching by time (not by
    position) lets the episodes a damaged chunk did not touch come back whole, and names
    each one that cannot.
    """

    def __init__(self, bag: Bag, period_ns: int, expected: Optional[int]) -> None:
        self.bag, self.period, self.expected = bag, period_ns, expected
        self.dropped: list[str] = []  # one phrase per episode left out
        self.episodes_lost = 0

    def episodes(self, records: list[tuple[int, dict[str, Any]]], actions: dict[int, np.ndarray],
                 frames: dict[str, dict[int, np.ndarray]]) -> list[list[Step]]:
        by_episode: dict[int, list[tuple[int, dict[str, Any]]]] = {}
        for t, r in records:
            by_episode.setdefault(r["episode"], []).append((t, r))
        seen = sorted(by_episode)
        total = max(self.expected or 0, seen[-1] + 1 if seen else 0)
        missing = [e for e in range(total) if e not in by_episode]
        if missing:
            self._drop(len(missing), f"{_ranges('episode', missing)} (none of its messages were readable)")
        out = []
        for e in seen:
            why, steps = self._episode(e, sorted(by_episode[e], key=lambda x: x[1]["step"]), actions, frames)
            if why:
                self._drop(1, f"episode {e} ({why})")
            else:
                out.append([dataclasses.replace(s, episode_id=len(out)) for s in steps])
        return out

    def _drop(self, n: int, what: str) -> None:
        self.episodes_lost += n
        self.dropped.append(what)

    def _episode(self, e: int, items: list[tuple[int, dict[str, Any]]], actions: dict[int, np.ndarray],
                 frames: dict[str, dict[int, np.ndarray]]) -> tuple[Optional[str], list[Step]]:
        numbers = [r["step"] for _, r in items]
        if numbers != list(range(len(items))):
            gone = sorted(set(range(max(numbers) + 1)) - set(numbers))
            return (f"{_ranges('step', gone)} missing" if gone else "a step given twice"), []
        ends = [r["terminated"] or r["truncated"] for _, r in items]
        if any(ends[:-1]):
            raise DemoBagError(f"{self.bag.path}: episode {e} goes on after its step {ends.index(True)} ended it")
        if not ends[-1]:
            return f"{len(items)} steps, which never ended", []
        times = [t for t, _ in items] + [items[-1][0] + self.period]
        for t, at in enumerate(times[:-1]):
            if at not in actions:
                return f"no {ACTION_TOPIC} message for step {t}", []
        for key, stream in frames.items():
            for t, at in enumerate(times):
                if at not in stream:
                    return f"no {OBS_PREFIX + key} frame for step {t}", []
        steps = [Step(episode_id=e, step=t, obs={k: f[times[t]] for k, f in frames.items()}, action=actions[times[t]],
                      reward=float(r["reward"]), terminated=r["terminated"], truncated=r["truncated"],
                      next_obs={k: f[times[t + 1]] for k, f in frames.items()}, intervened=r["intervened"],
                      success=r["success"], grasp_penalty=float(r["grasp_penalty"]))
                 for t, (_, r) in enumerate(items)]
        return None, steps

    def losses(self, bag: Bag, repaired: Any, unused: int) -> str:
        """Everything the import leaves out, in one phrase ('' when nothing)."""
        parts = []
        if self.dropped:
            of = f" of {self.expected}" if self.expected else ""
            parts.append(f"{self.episodes_lost}{of} episode(s): " + ", ".join(self.dropped[:5])
                         + (f" and {len(self.dropped) - 5} more" if len(self.dropped) > 5 else ""))
        if bag.damaged:
            parts.append(bag.damage_line())
        if repaired:
            parts.append(f"what an earlier 'bag repair' {repaired}")
        if unused > 0 and parts:
            parts.append(f"{unused} readable messages of those episodes")
        elif unused > 0:
            parts.append(f"{unused} messages that belong to no whole episode")
        return "; ".join(parts)


def _ranges(word: str, numbers: list[int]) -> str:
    """``episode 3``, ``episodes 2-5, 9``: numbers in runs."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:8]) + (", ..." if len(runs) > 8 else "")
    return f"{word}{'s' if len(numbers) > 1 else ''} {shown}"


__all__ = ["ACTION_TOPIC", "DemoBagError", "DemoFormatError", "DemoLossError", "EPISODES_KEY", "ExportReport",
           "ImportReport", "MANIFEST_TOPIC", "OBS_PREFIX", "STEP_TOPIC", "export_demos", "import_demos", "spaces_of",
           "BagError"]
