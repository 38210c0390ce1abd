"""tf frames without ROS: pose algebra, the sim cameras' optical frames against what they render,
camera mounts from the config, and the sim's clock across resets."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robot_rl.control.transforms import quat_to_mat, rotvec_to_quat
from robot_rl.errors import ConfigError
from robot_rl.nodes.frames import compose, inverse, mount_transforms, point_in_frame, relative, tcp_transform
from robot_rl.nodes.sim import SimServer
from robot_rl.tasks import load_config

PICK = "configs/pick_cube.yaml"


def random_pose(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return rng.uniform(-1, 1, 3), rotvec_to_quat(rng.uniform(-2, 2, 3))


def same_rotation(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.allclose(quat_to_mat(a), quat_to_mat(b), atol=1e-9))


def test_pose_algebra_round_trips():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b, p = random_pose(rng), random_pose(rng), rng.uniform(-1, 1, 3)
        ab = compose(a, b)
        back = relative(a, ab)  # b in a, recovered from both in a common frame
        assert np.allclose(back[0], b[0]) and same_rotation(back[1], b[1])
        ident = compose(a, inverse(a))
        assert np.allclose(ident[0], 0.0, atol=1e-12) and same_rotation(ident[1], np.array([1.0, 0, 0, 0]))
        # a point given in a's parent, expressed in a, then mapped back out again
        local = point_in_frame(p, a)
        assert np.allclose(a[0] + quat_to_mat(a[1]) @ local, p)


@pytest.fixture(scope="module")
def sim():
    server = SimServer(load_config(PICK))
    yield server
    server.close()


def camera_pose(sim: SimServer, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The camera's optical frame in the base, through tf's own chain (base -> tcp -> wrist for the wrist)."""
    fixed = {t.child: t for t in sim.camera_transforms("base", "tcp")}
    t = fixed[f"{name}_color_optical_frame"]
    if t.parent == "base":
        return t.translation, t.rotation
    assert t.parent == "tcp"
    tcp = tcp_transform(sim.controller.state, "base", "tcp")
    return compose((tcp.translation, tcp.rotation), (t.translation, t.rotation))


def render(sim: SimServer, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(depth in metres along the view axis, geom id per pixel or -1) of camera ``name``."""
    world, spec = sim.world, sim.world.cameras[name].spec
    renderer = mujoco.Renderer(world.model, spec.height, spec.width)
    try:
        renderer.update_scene(world.data, camera=name)
        renderer.enable_depth_rendering()
        depth = renderer.render().copy()
        renderer.disable_depth_rendering()
        renderer.enable_segmentation_rendering()
        seg = renderer.render().copy()
    finally:
        renderer.close()
    geom = np.where(seg[:, :, 1] == mujoco.mjtObj.mjOBJ_GEOM, seg[:, :, 0], -1)
    return depth, geom


def test_sim_cameras_hang_under_base_or_tcp(sim):
    fixed = {t.child: t.parent for t in sim.camera_transforms("base", "tcp")}
    assert fixed == {"front_color_optical_frame": "base", "wrist_color_optical_frame": "tcp"}
    assert sim.camera_transforms("base", "tcp", moving=True) == []  # no camera rides another moving body


@pytest.mark.parametrize("name", ["front", "wrist"])
def test_optical_frame_maps_the_scene_to_where_the_camera_shows_it(sim, name):
    """Every table pixel, pushed out along its ray by its rendered depth through the published
    optical frame and intrinsics, lands on the table top (z = 0); and the cube's centre projects
    onto the cube's own pixels. A frame off by the optical flip or a mirror misses both."""
    pos, quat = camera_pose(sim, name)
    k = sim.intrinsics(name)
    depth, geom = render(sim, name)
    model, data = sim.world.model, sim.world.data
    table, cube = model.geom("table").id, model.geom("cube").id

    v, u = np.nonzero(geom == table)
    assert len(u) > 1000, "the camera should see the table"
    z = depth[v, u]
    rays = np.stack([(u + 0.5 - k[0, 2]) / k[0, 0], (v + 0.5 - k[1, 2]) / k[1, 1], np.ones_like(z)], axis=1)
    on_table = (rays * z[:, None]) @ quat_to_mat(quat).T + pos
    assert np.percentile(np.abs(on_table[:, 2]), 99) < 1e-3, "table pixels do not land on the table top"
    assert np.ptp(on_table[:, 0]) > 0.05 and np.ptp(on_table[:, 1]) > 0.05  # a patch, not one point

    p = point_in_frame(data.geom_xpos[cube], (pos, quat))
    assert p[2] > 0, "the cube is in front of the camera (optical z forward)"
    col, row = k[0, 0] * p[0] / p[2] + k[0, 2], k[1, 1] * p[1] / p[2] + k[1, 2]
    assert geom[int(row), int(col)] == cube
    rows, cols = np.nonzero(geom == cube)
    assert abs(col - (cols.mean() + 0.5)) < 3 and abs(row - (rows.mean() + 0.5)) < 3


def test_the_tcp_transform_is_the_published_pose(sim):
    state = sim.controller.state
    t = tcp_transform(state, "base", "tcp")
    assert (t.parent, t.child) == ("base", "tcp")
    assert np.allclose(t.translation, state.tcp_pos) and np.allclose(t.rotation, state.tcp_quat)


def test_sim_time_runs_on_across_resets_and_stamps_the_answer(sim):
    """MuJoCo's time is the session clock: no reset rewinds it, and a reset's answer is stamped
    later than anything of the episode before (the actor tells episodes apart by it)."""
    seen = [sim.now()]
    for i in range(3):
        for _ in range(3):
            sim.tick()
            seen.append(sim.now())
        answer = sim.reset({"id": f"t:{i}", "seed": i})
        assert answer["stamp"] == sim.now() > seen[-1]
        seen.append(sim.now())
    assert all(b >= a for a, b in zip(seen, seen[1:])) and seen[-1] > seen[0]


def test_a_reset_that_takes_no_sim_time_still_moves_the_clock_on(sim, monkeypatch):
    monkeypatch.setattr(sim.world.task, "reset", lambda rng: None)
    before = sim.now()
    answer = sim.reset({"id": "instant", "seed": 1})
    assert answer["stamp"] > before and answer["stamp"] - before >= 0.5 * sim.world.dt


def test_mounts_from_the_config_become_static_transforms():
    cfg = load_config(PICK, [
        "cameras.front.mount={parent: base, xyz: [0.9, 0.0, 0.4], quat: [0.0, -0.7071068, 0.0, 0.7071068]}",
        "cameras.wrist.mount={parent: tcp, xyz: [0.05, 0.0, -0.07], quat: [0, 0, 0, 1]}",
        "ros.frame_id=fr3_link0", "ros.tcp_frame_id=fr3_tcp"])
    got = {t.child: t for t in mount_transforms(cfg.cameras, cfg.ros.frame_id, cfg.ros.tcp_frame_id)}
    front, wrist = got["front_color_optical_frame"], got["wrist_color_optical_frame"]
    assert front.parent == "fr3_link0" and wrist.parent == "fr3_tcp"
    assert np.allclose(front.translation, [0.9, 0.0, 0.4])
    assert np.allclose(front.rotation, [0.7071068, 0.0, -0.7071068, 0.0], atol=1e-6)  # x,y,z,w in, w,x,y,z out
    assert np.allclose(wrist.rotation, [1.0, 0, 0, 0])
    # the front's optical z (forward) is the base's -x: a camera at x = 0.9 looking back at the arm
    assert np.allclose(quat_to_mat(front.rotation)[:, 2], [-1.0, 0.0, 0.0], atol=1e-6)
    assert mount_transforms(load_config(PICK).cameras, "base", "tcp") == []  # no mount: no tf


@pytest.mark.parametrize("mount, error", [
    ("{parent: base, xyz: [0, 0, 0], quat: [0, 0, 0.7, 0.8]}", "not a unit quaternion"),
    ("{parent: base, xyz: [0, 0, 0], quat: [0, 0, 0, 0]}", "not a unit quaternion"),
    ("{parent: base, xyz: [.nan, 0, 0], quat: [0, 0, 0, 1]}", "must be a finite number"),
    ("{parent: base, xyz: [0, 0, 0], quat: [0, 0, .inf, 1]}", "must be a finite number"),
    ("{parent: base, xyz: [0, 0, 1000], quat: [0, 0, 0, 1]}", "out of range"),
    ("{parent: hand, xyz: [0, 0, 0], quat: [0, 0, 0, 1]}", "must be one of 'base', 'tcp'"),
    ("{parent: base, xyz: [0, 0], quat: [0, 0, 0, 1]}", "must have 3 items"),
    ("{parent: base, quat: [0, 0, 0, 1]}", "missing required key 'cameras.front.mount.xyz'"),
    ("{parent: base, xyz: [0, 0, 0], quat: [0, 0, 0, 1], frame: x}", "unknown key 'cameras.front.mount.frame'"),
])
def test_a_bad_mount_is_one_line_naming_the_key(mount, error):
    with pytest.raises(ConfigError) as err:
        load_config(PICK, [f"cameras.front.mount={mount}"])
    text = str(err.value)
    assert error in text and "cameras.front.mount" in text and "\n" not in text


@pytest.mark.parametrize("override, error", [
    ("ros.tcp_frame_id=base", "both 'base'"),
    ("ros.tcp_frame_id=/tcp", "not a tf frame id"),
    ("ros.frame_id=''", "not a tf frame id"),
    ("ros.tcp_frame_id='my tcp'", "not a tf frame id"),
])
def test_bad_frame_ids_are_refused(override, error):
    with pytest.raises(ConfigError, match=error):
        load_config(PICK, [override])
