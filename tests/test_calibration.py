"""Geometric calibration: the kinematic parameter model (exact Jacobian against finite
differences on random MDH/DH/URDF robots, the corrected robot, identifiability), the
Levenberg–Marquardt fit on the twin (position, pose, plane), pose selection, bad inputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dynid.calibration import (
    KinematicModel,
    Measurements,
    calibrate,
    measure,
    perturbed,
    select_poses,
)
from dynid.calibration.fit import rotation_log
from dynid.dynamics import tool_pose
from dynid.robot import JointLimits, Robot, load_robot, load_urdf, save_robot
from dynid.robot._joint import (
    PrismaticDH,
    PrismaticMDH,
    RevoluteDH,
    RevoluteMDH,
    rot_x,
    translation,
)
from dynid.robot.inertia import from_com


def _parameters(n: int) -> np.ndarray:
    """Unit masses at the link origins with 0.1 kg m^2 about every axis (the layout's own
    conversion, not its indices)."""
    return from_com(np.ones(n), np.zeros((n, 3)), np.tile([0.1, 0, 0, 0.1, 0, 0.1], (n, 1)))


def random_mdh(seed: int) -> Robot:
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(6):
        alpha = rng.choice([0.0, np.pi / 2, -np.pi / 2, rng.uniform(-3, 3)])
        if k == 3:
            rows.append(PrismaticMDH(rng.uniform(-0.2, 0.2), alpha, rng.uniform(-1, 1),
                                     rng.uniform(0, 0.2)))
        else:
            rows.append(RevoluteMDH(rng.uniform(-0.3, 0.3), alpha, rng.uniform(-0.3, 0.3),
                                    rng.uniform(-1, 1)))
    tool = translation(0.05, 0.0, 0.1)  # one MDH row, so that the robot file can hold it
    return Robot.from_mdh("mdh", rows, _parameters(6), tool=tool)


def random_dh(seed: int) -> Robot:
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(5):
        alpha = rng.choice([0.0, np.pi / 2, -np.pi / 2, rng.uniform(-3, 3)])
        if k == 2:
            rows.append(PrismaticDH(rng.uniform(-1, 1), rng.uniform(-0.2, 0.2), alpha,
                                    rng.uniform(0, 0.2)))
        else:
            rows.append(RevoluteDH(rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), alpha,
                                   rng.uniform(-1, 1)))
    return Robot.from_dh("dh", rows, _parameters(5), tool=translation(0.04, 0.0, 0.08))


_INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" '
             'ixz="0" iyz="0"/></inertial>')
_LIMIT = '<limit lower="{}" upper="{}" effort="10" velocity="1"/>'


def _urdf_joint(name, kind, parent, child, xyz, rpy, axis=None, limit=None) -> str:
    text = (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/>')
    if axis is not None:
        text += f'<axis xyz="{axis}"/>' + _LIMIT.format(*limit)
    return text + "</joint>"


URDF = "\n".join([
    '<?xml version="1.0"?>', '<robot name="tiny">', '<link name="base"/>',
    *(f'<link name="l{k}">{_INERTIAL}</link>' for k in range(1, 5)), '<link name="tip"/>',
    _urdf_joint("j1", "revolute", "base", "l1", "0 0 0.3", "0 0 0.2", "0 0 1", (-2.9, 2.9)),
    _urdf_joint("j2", "revolute", "l1", "l2", "0.05 0 0.1", "1.5707963 0 0", "0 0 1", (-2, 2)),
    _urdf_joint("j3", "prismatic", "l2", "l3", "0.3 0.02 0", "0 0.3 0.1", "1 0 0", (0, 0.3)),
    _urdf_joint("j4", "revolute", "l3", "l4", "0.1 0 0.05", "-1.2 0.4 0.3", "0.6 0 0.8",
                (-2.5, 2.5)),
    _urdf_joint("tool", "fixed", "l4", "tip", "0.07 0.05 0.08", "0 0 0"),
    "</robot>"])


@pytest.fixture(scope="module")
def urdf_robot(tmp_path_factory) -> Robot:
    path = tmp_path_factory.mktemp("urdf") / "tiny.urdf"
    path.write_text(URDF)
    return load_urdf(path, tool_frame="tip")


def _finite_difference(model: KinematicModel, values: np.ndarray, q: np.ndarray) -> np.ndarray:
    h = 1e-6
    out = np.zeros((q.shape[0], 6, model.n_parameters))
    for k in range(model.n_parameters):
        step = np.zeros(model.n_parameters)
        step[k] = h
        plus, minus = model.pose(values + step, q), model.pose(values - step, q)
        out[:, :3, k] = (plus[:, :3, 3] - minus[:, :3, 3]) / (2 * h)
        out[:, 3:, k] = rotation_log(plus[:, :3, :3] @ minus[:, :3, :3].transpose(0, 2, 1)) \
            / (2 * h)
    return out


def _robots(urdf_robot):
    return [random_mdh(1), random_mdh(2), random_dh(3), random_dh(4), urdf_robot,
            load_robot("panda"), load_robot("jaco2")]


@pytest.mark.parametrize("mode", ["full", "offsets"])
def test_jacobian_matches_finite_differences(urdf_robot, mode):
    betas = {r.name: [n for n in KinematicModel(r).names if "beta" in n]
             for r in (random_mdh(2), random_dh(3))}
    assert all(betas.values())  # Hayati's parameter is exercised in both conventions
    for robot in _robots(urdf_robot):
        model = KinematicModel(robot, parameters=mode)
        rng = np.random.default_rng(7)
        values = model.nominal + rng.normal(0, 0.02, model.n_parameters)
        q = model.random_poses(6, seed=3)
        _, jac = model.jacobian(values, q)
        expected = _finite_difference(model, values, q)
        np.testing.assert_allclose(jac, expected, rtol=0, atol=1e-7 * max(1.0, model.reach))
        assert np.isfinite(jac).all()


def test_nominal_pose_is_the_robots_tool_pose(urdf_robot):
    for robot in _robots(urdf_robot):
        model = KinematicModel(robot)
        q = model.random_poses(5, seed=1)
        np.testing.assert_allclose(model.pose(None, q), tool_pose(robot, q), atol=1e-12)
        np.testing.assert_allclose(model.base_transform(), np.eye(4), atol=1e-15)


def test_joint_jacobian_matches_finite_differences():
    model = KinematicModel(random_mdh(5))
    q = model.random_poses(4, seed=2)
    _, jq = model.joint_jacobian(None, q)
    h = 1e-6
    for j in range(model.n_joints):
        step = np.zeros(model.n_joints)
        step[j] = h
        fd = (model.pose(None, q + step)[:, :3, 3] - model.pose(None, q - step)[:, :3, 3]) / (2 * h)
        np.testing.assert_allclose(jq[:, :3, j], fd, atol=1e-8)


@pytest.mark.parametrize("build", [random_mdh, random_dh])
def test_corrected_table_robot_round_trips(build, tmp_path):
    robot = build(11)
    model = KinematicModel(robot)
    rng = np.random.default_rng(0)
    values = model.nominal + rng.uniform(-1e-3, 1e-3, model.n_parameters)
    # a robot file holds the tool as one table row: keep the tool nominal, and every beta 0
    held = [k for k, p in enumerate(model.parameters) if p.role == "beta" or p.group == "tool"]
    values[held] = model.nominal[held]
    corrected = model.robot(values)
    assert corrected.convention == robot.convention and corrected.table is not None
    q = model.random_poses(5, seed=4)
    base = model.base_transform(values)
    np.testing.assert_allclose(base @ tool_pose(corrected, q), model.pose(values, q),
                               atol=1e-12)
    np.testing.assert_array_equal(corrected.parameters, robot.parameters)
    assert corrected.joint_names == robot.joint_names
    save_robot(corrected, tmp_path / "corrected.yaml")
    loaded = load_robot(tmp_path / "corrected.yaml")
    np.testing.assert_allclose(tool_pose(loaded, q), tool_pose(corrected, q), atol=1e-9)


def test_corrected_robot_with_beta_is_urdf_and_exports(tmp_path):
    from dynid.export import to_urdf

    robot = load_robot("panda")
    model = KinematicModel(robot)
    values = np.array(model.nominal)
    values[model.names.index("joint 1 beta")] = 2e-3
    values[model.names.index("joint 4 a")] += 1e-3
    corrected = model.robot(values)
    assert corrected.convention == "urdf" and corrected.table is None
    q = model.random_poses(5, seed=4)
    np.testing.assert_allclose(tool_pose(corrected, q), model.pose(values, q), atol=1e-12)
    path = tmp_path / "corrected.urdf"
    path.write_text(to_urdf(corrected))
    back = load_urdf(path)
    np.testing.assert_allclose(back.parameters, robot.parameters, atol=1e-9)
    np.testing.assert_allclose(tool_pose(back, q)[:, :3, 3],
                               (tool_pose(corrected, q) @ np.linalg.inv(corrected.tool)
                                @ back.tool)[:, :3, 3], atol=1e-12)


def test_identifiability_of_the_panda():
    model = KinematicModel(load_robot("panda"))
    position = model.identifiable("position")
    # the base absorbs joint 1's placement; with the tool on joint 7's axis its offset and the
    # tool angles cannot be seen by a tool point
    assert position.regrouped["base rz"] == "base rz + joint 1 offset"
    assert {"joint 7 offset", "tool rz", "tool ry", "tool rx"} <= set(
        position.unidentifiable)
    pose = model.identifiable("pose")
    assert pose.rank > position.rank
    assert "tool rx" in pose.independent or "tool rx" in " ".join(pose.regrouped.values())
    plane = model.identifiable("plane")
    assert plane.rank < position.rank
    assert not set(position.independent) & set(position.unidentifiable)
    fixed = KinematicModel(load_robot("panda"), parameters="offsets", base=False, tool=False)
    assert fixed.names == tuple(f"joint {j} offset" for j in range(1, 8))
    # measured in the robot's own base frame, joint 1's offset is seen; joint 7's is not
    assert fixed.identifiable("position").independent == fixed.names[:6]
    assert position.report()["rank"] == position.rank == len(position.independent)


def _tooled(robot: Robot) -> Robot:
    return dataclasses.replace(robot, tool=robot.tool @ translation(0.06, 0.03, 0.07))


def _recovery(model: KinematicModel, kind: str, poses: int, seed: int, sigma: float = 1e-5,
              **kwargs):
    truth = perturbed(model, seed=seed, kind=kind)
    q = model.random_poses(poses, seed=seed + 1)
    data = measure(model, truth, q, kind=kind, sigma_position=sigma, seed=seed + 2, **kwargs)
    cal = calibrate(model, data)
    index = [model.names.index(n) for n in cal.estimated]
    error = cal.values[index] - truth[index]
    return cal, error, truth


def _check_recovered(model, cal, error):
    assert cal.converged
    assert 0.5 < cal.chi2_dof < 1.6
    # each estimate within 4.5 standard deviations, and the std themselves small
    assert (np.abs(error) < 4.5 * cal.std).all(), np.abs(error / cal.std).max()
    start_error = cal.rms_position_before
    assert cal.rms_position_after < 0.05 * start_error


def test_mdh_panda_recovers_its_perturbation():
    model = KinematicModel(_tooled(load_robot("panda")))
    cal, error, _ = _recovery(model, "position", 60, seed=0)
    _check_recovered(model, cal, error)
    assert np.abs(error).max() < 1e-4


def test_dh_robot_recovers_its_perturbation():
    robot = _tooled(load_robot("jaco2"))
    assert robot.convention == "dh"
    model = KinematicModel(robot)
    assert "joint 7 beta" in model.names and "joint 7 d" not in model.names  # Hayati
    cal, error, _ = _recovery(model, "position", 80, seed=3)
    _check_recovered(model, cal, error)


def test_random_dh_with_prismatic_recovers():
    model = KinematicModel(random_dh(3))
    cal, error, _ = _recovery(model, "position", 80, seed=5)
    _check_recovered(model, cal, error)


def test_urdf_robot_recovers_its_perturbation(urdf_robot):
    model = KinematicModel(urdf_robot)
    cal, error, truth = _recovery(model, "position", 80, seed=7)
    _check_recovered(model, cal, error)
    corrected = cal.robot
    assert corrected.convention == "urdf"
    q = model.random_poses(10, seed=99)
    true_pose = model.pose(truth, q)
    fitted = cal.base_transform @ tool_pose(corrected, q)
    assert np.abs(fitted[:, :3, 3] - true_pose[:, :3, 3]).max() < 1e-4


def test_pose_measurements():
    model = KinematicModel(_tooled(load_robot("panda")))
    cal, error, _ = _recovery(model, "pose", 40, seed=11, sigma_rotation=1e-4)
    _check_recovered(model, cal, error)
    assert "tool rx" in cal.estimated
    assert cal.rms_rotation_after < cal.rms_rotation_before
    assert cal.rms_rotation_after < 3e-4


def test_plane_measurements():
    robot = _tooled(load_robot("panda"))
    model = KinematicModel(robot, parameters="offsets")
    truth = perturbed(model, seed=2, kind="plane")
    q = model.random_poses(90, seed=3)
    data = measure(model, truth, q, kind="plane", sigma_position=1e-5, seed=4)
    assert data.kind == "plane" and len(np.unique(data.plane)) == 3
    points = model.pose(truth, data.q)[:, :3, 3]  # the true contacts lie on their planes
    centre = np.median(model.pose(truth, q)[:, :3, 3], axis=0)
    distance = points[np.arange(90), data.plane] - centre[data.plane]
    assert np.abs(distance).max() < 6e-5
    cal = calibrate(model, data)
    index = [model.names.index(n) for n in cal.estimated]
    error = cal.values[index] - truth[index]
    assert cal.converged and len(cal.planes) == 3
    assert (np.abs(error) < 5 * cal.std).all()
    assert 0.5 < cal.chi2_dof < 1.6
    assert cal.rms_position_after < 2e-5 < cal.rms_position_before


def test_several_sets_fit_together():
    model = KinematicModel(_tooled(load_robot("panda")))
    truth = perturbed(model, seed=1, kind="pose")
    a = measure(model, truth, model.random_poses(40, seed=1), sigma_position=1e-5, seed=1)
    b = measure(model, truth, model.random_poses(20, seed=2), kind="pose", sigma_position=1e-5,
                sigma_rotation=1e-4, seed=2)
    cal = calibrate(model, [a, b])
    index = [model.names.index(n) for n in cal.estimated]
    assert (np.abs(cal.values[index] - truth[index]) < 4.5 * cal.std).all()
    held = measure(model, truth, model.random_poses(30, seed=5), sigma_position=1e-5, seed=5)
    check = cal.heldout(held)
    assert check["rms_position_after"] < 3e-5 < check["rms_position_before"]
    assert len(check["after"][0]["position"]) == 30
    report = cal.report()
    import json

    json.dumps(report)
    assert report["identifiability"]["kind"] == "pose"
    assert report["n_estimated"] == len(cal.estimated)


def test_base_far_from_the_robot_is_registered():
    model = KinematicModel(_tooled(load_robot("panda")))
    truth = perturbed(model, seed=4)
    truth[:6] = [1.5, -2.0, 0.4, 2.0, 0.3, -0.5]  # the tracker stands metres away, turned
    data = measure(model, truth, model.random_poses(60, seed=4), sigma_position=1e-5, seed=4)
    cal = calibrate(model, data)
    assert cal.converged
    np.testing.assert_allclose(cal.base_transform, model.base_transform(truth), atol=1e-4)


@pytest.mark.parametrize("criterion", ["D", "E", "A"])
def test_select_poses_beats_random(criterion):
    model = KinematicModel(_tooled(load_robot("panda")), parameters="offsets")
    columns = [model.names.index(n) for n in model.identifiable().independent]

    def information(q):
        _, jac = model.jacobian(None, q)
        a = model.scaled_rows(jac, "position")[:, columns]
        return a.T @ a
    chosen = select_poses(model, 15, criterion=criterion, n_candidates=600, seed=2)
    assert chosen.q.shape == (15, 7) and len(set(chosen.indices.tolist())) == 15
    lower, upper = model.robot_nominal.limits.lower, model.robot_nominal.limits.upper
    assert ((chosen.q >= lower) & (chosen.q <= upper)).all()
    scores = {"D": lambda m: np.linalg.slogdet(m)[1], "E": lambda m: np.linalg.eigvalsh(m)[0],
              "A": lambda m: -np.trace(np.linalg.inv(m))}[criterion]
    ours = scores(information(chosen.q))
    assert ours == pytest.approx(chosen.value, rel=1e-6, abs=1e-9)
    for seed in range(5):
        assert ours > scores(information(model.random_poses(15, seed=seed)))


def test_bad_inputs():
    model = KinematicModel(_tooled(load_robot("panda")))
    truth = perturbed(model, seed=0)
    data = measure(model, truth, model.random_poses(30, seed=0), seed=0)
    with pytest.raises(TypeError, match="robot"):
        KinematicModel("panda")
    with pytest.raises(ValueError, match="parameters"):
        KinematicModel(load_robot("panda"), parameters="some")
    wrong = Measurements("position", np.zeros((30, 6)), 1e-4, position=np.zeros((30, 3)))
    with pytest.raises(ValueError, match="6 joints"):
        calibrate(model, wrong)
    with pytest.raises(ValueError, match="`q` contains NaN"):
        Measurements("position", np.full((3, 7), np.nan), 1e-4, position=np.zeros((3, 3)))
    few = data.subset(np.arange(8))
    with pytest.raises(ValueError, match="residuals for"):
        calibrate(model, few)
    with pytest.raises(ValueError, match="rank-deficient"):
        calibrate(model, data, parameters=[*model.identifiable().independent, "tool rx"])
    with pytest.warns(RuntimeWarning, match="without converging"):
        assert not calibrate(model, data, max_evaluations=1).converged
    with pytest.raises(ValueError, match="start"):
        calibrate(model, data, start=np.zeros(4))
    with pytest.raises(ValueError, match="max_evaluations"):
        calibrate(model, data, max_evaluations=0)
    with pytest.raises(ValueError, match="no parameter"):
        calibrate(model, data, parameters=["joint 9 offset"])
    with pytest.raises(ValueError, match="values"):
        model.pose(np.zeros(3), data.q)
    with pytest.raises(ValueError, match=r"`q` must be \(m, 7\)"):
        model.pose(None, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="count"):
        select_poses(model, 5)
    with pytest.raises(ValueError, match="criterion"):
        select_poses(model, 20, criterion="G")
    with pytest.raises(ValueError, match="sigma_position"):
        measure(model, truth, data.q, sigma_position=-1.0)
    with pytest.raises(ValueError, match="kind"):
        model.identifiable("laser")


def test_limits_of_random_poses():
    robot = Robot.from_mdh("r", [RevoluteMDH(0, 0, 0.1), RevoluteMDH(0.3, np.pi / 2, 0)],
                           _parameters(2), limits=JointLimits([-1, -0.5], [1, 0.5],
                                                              [1, 1], [1, 1], [1, 1]))
    q = KinematicModel(robot).random_poses(100, seed=0)
    assert (np.abs(q[:, 0]) <= 1).all() and (np.abs(q[:, 1]) <= 0.5).all()


def test_plot_calibration():
    import matplotlib

    matplotlib.use("Agg")
    from dynid.calibration import plot_calibration

    model = KinematicModel(_tooled(load_robot("panda")), parameters="offsets")
    truth = perturbed(model, seed=0)
    data = measure(model, truth, model.random_poses(30, seed=0), seed=0)
    held = measure(model, truth, model.random_poses(10, seed=1), seed=1)
    figure = plot_calibration(calibrate(model, data), heldout=held)
    assert len(figure.axes) == 4
    assert figure.axes[2].lines[0].get_xdata().size == 10


def test_select_poses_for_pose_measurements_from_given_candidates():
    model = KinematicModel(_tooled(load_robot("panda")))
    candidates = model.random_poses(300, seed=8)
    chosen = select_poses(model, 12, kind="pose", candidates=candidates)
    np.testing.assert_array_equal(chosen.q, candidates[chosen.indices])
    assert chosen.parameters == model.identifiable("pose").independent
    assert np.isfinite(chosen.value) and chosen.condition < 1e3
    with pytest.raises(ValueError, match="12 poses to choose from 5 candidates"):
        select_poses(model, 12, kind="pose", candidates=candidates[:5])
    from dynid.calibration.poses import MAX_CANDIDATES

    with pytest.raises(ValueError, match="`n_candidates` must be an integer in"):
        select_poses(model, 12, n_candidates=MAX_CANDIDATES + 1)
    with pytest.raises(ValueError, match="more than MAX_CANDIDATES"):
        select_poses(model, 12, candidates=np.zeros((MAX_CANDIDATES + 1, 7)))
    with pytest.raises(ValueError, match="kind"):
        select_poses(model, 12, kind="plane")


# --- review of issue 25 ----------------------------------------------------------------------

@pytest.mark.parametrize(("name", "held", "shown"), [("panda", "joint 5 d", "joint 3 d"),
                                                     ("tx40", "joint 3 a", "joint 4 d")])
def test_plane_contacts_full_model_holds_the_scale_and_recovers_lengths(name, held, shown):
    """Plane contacts cannot see the robot's scale: the largest lever that fixes it is held at
    nominal (the TX40's `joint 1 d` is larger but regrouped with `base z`, which would absorb
    it) and the other lengths come out right (not shrunk with the planes)."""
    model = KinematicModel(_tooled(load_robot(name)))
    found = model.identifiable("plane")
    assert found.scale_held == held
    assert found.scale_held not in found.independent
    assert found.report()["scale_held"] == held
    truth = perturbed(model, seed=0, kind="plane")
    q = model.random_poses(60, seed=1)
    data = measure(model, truth, q, kind="plane", sigma_position=1e-4, seed=100)
    cal = calibrate(model, data)
    assert cal.converged and 0.5 < cal.chi2_dof < 1.6
    lengths = [k for k, name in enumerate(model.names) if not model.is_angle[k]
               and name in cal.estimated and not name.startswith("base")]
    assert len(lengths) > 5
    error = cal.values[lengths] - truth[lengths]
    assert (np.abs(error) < 5 * cal.std[[cal.estimated.index(model.names[k])
                                         for k in lengths]]).all()
    assert np.abs(error).max() < 5e-4, dict(zip(np.array(model.names)[lengths], error, strict=True))
    k = model.names.index(shown)
    assert abs(cal.values[k] / truth[k] - 1.0) < 1e-3  # not shrunk (the Panda's was 44 %)
    assert not model.plane_determined([model.names.index(n) for n in model.names
                                       if n not in found.unidentifiable])
    with pytest.raises(ValueError, match=r"`parameters`: plane contacts cannot determine.*scale"):
        calibrate(model, data, parameters=[*found.independent, held])


def test_plane_scale_is_fixed_by_a_prismatic_joint():
    model = KinematicModel(random_dh(3))
    assert not model.scale_free
    assert model.identifiable("plane").scale_held is None


@pytest.mark.parametrize("kind", ["position", "pose"])
def test_regrouping_coefficients_are_physical(kind):
    """Moving a regrouped parameter along its null direction (the coefficients in physical
    units) leaves the measured quantities unchanged to second order."""
    model = KinematicModel(_tooled(load_robot("panda")))
    found = model.identifiable(kind)
    assert "joint 7 offset" in found.coefficients
    eps = 1e-6
    q = model.random_poses(20, seed=5)
    nominal = model.pose(None, q)
    checked = 0
    for name in model.names:
        if name in found.independent or name in found.unidentifiable:
            continue
        direction = np.zeros(model.n_parameters)
        direction[model.names.index(name)] = eps
        for representative, terms in found.coefficients.items():
            if name in terms:
                direction[model.names.index(representative)] -= eps * terms[name]
        moved = model.pose(np.array(model.nominal) + direction, q)
        assert np.abs(moved[:, :3, 3] - nominal[:, :3, 3]).max() < 1e-9, name
        if kind == "pose":
            assert np.abs(rotation_log(moved[:, :3, :3] @ np.swapaxes(
                nominal[:, :3, :3], 1, 2))).max() < 1e-9, name
        checked += 1
    assert checked > 3
    for terms in found.coefficients.values():  # no rref round-off left in the combinations
        assert min(abs(v) for v in terms.values()) > 1e-4, terms
    tool = found.coefficients["joint 7 offset"]
    if "tool y" in tool:  # an angle standing for a length: 1/m, the reach does not enter
        assert abs(abs(tool["tool y"]) - 1.0 / 0.06) < 1e-6


def _gimbal_urdf(tmp_path, pitch: str) -> Robot:
    text = "\n".join([
        '<?xml version="1.0"?>', '<robot name="g">', '<link name="base"/>',
        *(f'<link name="l{k}">{_INERTIAL}</link>' for k in range(1, 5)), '<link name="tip"/>',
        _urdf_joint("j1", "revolute", "base", "l1", "0 0 0.3", "0 0 0", "0 0 1", (-2.9, 2.9)),
        _urdf_joint("j2", "revolute", "l1", "l2", "0 0.13 0", f"0 {pitch} 0", "0 1 0", (-2, 2)),
        _urdf_joint("j3", "revolute", "l2", "l3", "0 -0.1 0.42", "0 0 0", "0 1 0", (-2.5, 2.5)),
        _urdf_joint("j4", "revolute", "l3", "l4", "0 0 0.39", f"0 {pitch} 0", "0 1 0",
                    (-2.5, 2.5)),
        _urdf_joint("tool", "fixed", "l4", "tip", "0.07 0.05 0.08", "0 0 0"),
        "</robot>"])
    path = tmp_path / "g.urdf"
    path.write_text(text)
    return load_urdf(path, tool_frame="tip")


@pytest.mark.parametrize("pitch", ["1.5707963267948966", "1.5707", "1.2"])
def test_urdf_origin_at_pitch_half_pi_is_calibrated(tmp_path, pitch):
    """An origin at pitch exactly pi/2 (roll-pitch-yaw's singularity), or written rounded: the
    error rotations about the parent's axes still see a tilt about the parent's x axis."""
    from dynid.robot._joint import Joint

    nominal = _gimbal_urdf(tmp_path, pitch)
    tilt = rot_x(3e-3)
    joints = list(nominal.joints)
    joints[1] = Joint(joints[1].name, joints[1].kind, axis=joints[1].axis,
                      pre=tilt @ joints[1].pre, post=joints[1].post)
    true_robot = dataclasses.replace(nominal, joints=tuple(joints))
    model = KinematicModel(nominal)
    assert {"joint 2 rx", "joint 2 ry", "joint 2 rz"} <= set(model.names)
    assert model.nominal[model.names.index("joint 2 ry")] == 0.0
    q = model.random_poses(80, seed=1)
    points = tool_pose(true_robot, q)[:, :3, 3] + np.random.default_rng(0).normal(
        0.0, 1e-5, (80, 3))
    cal = calibrate(model, Measurements("position", q, 1e-5, position=points))
    assert cal.converged and 0.5 < cal.chi2_dof < 1.6
    assert cal.rms_position_after < 2e-5 < 1e-3 < cal.rms_position_before
    check = model.random_poses(10, seed=7)
    fitted = cal.base_transform @ tool_pose(cal.robot, check)
    assert np.abs(fitted[:, :3, 3] - tool_pose(true_robot, check)[:, :3, 3]).max() < 5e-5


def test_joint_readings_in_degrees_are_refused():
    model = KinematicModel(_tooled(load_robot("panda")))
    q = model.random_poses(30, seed=1)
    data = measure(model, None, q, sigma_position=1e-5)
    degrees = Measurements("position", np.degrees(q), 1e-5, position=data.position)
    with pytest.raises(ValueError, match=r"`measurements\[0\]`.*degrees"):
        calibrate(model, degrees)


def test_twin_plane_contacts_respect_limits_and_reach():
    model = KinematicModel(_tooled(load_robot("panda")))
    q = model.random_poses(30, seed=2)
    data = measure(model, None, q, kind="plane", sigma_position=1e-5)
    limits = model.robot_nominal.limits
    assert ((data.q >= limits.lower) & (data.q <= limits.upper)).all()
    with pytest.raises(ValueError, match="`planes`"):
        measure(model, None, q, kind="plane", planes=[[0.0, 0.0, 1.0, 5.0]])


def test_measurement_bounds():
    q = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"`sigma_position` must be a standard deviation >= "
                                         r"MIN_SIGMA = 1e-09 m"):
        Measurements("position", q, 1e-12, position=np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"`sigma_rotation` must be .* 1e-09 rad"):
        Measurements("pose", q, 1e-4, position=np.zeros((3, 3)),
                     rotation=np.broadcast_to(np.eye(3), (3, 3, 3)), sigma_rotation=1e-300)
    with pytest.raises(ValueError, match=r"`position`: measurement 2 has a coordinate beyond "
                                         r"MAX_COORDINATE"):
        Measurements("position", q, 1e-4, position=[[0, 0, 0], [0, 2e3, 0], [0, 0, 0]])
    Measurements("position", q, 1e-9, position=np.full((3, 3), 999.0))  # the bounds included


def test_select_poses_weights_pose_rows_as_the_fit():
    """With the instrument's noise, the design's information matrix is the fit's ``J^T W J``
    (up to one common factor): its reported D-value matches one computed from the fit's
    weighted residual Jacobian at the chosen poses."""
    from dynid.calibration.fit import _Problem

    model = KinematicModel(_tooled(load_robot("panda")))
    candidates = model.random_poses(300, seed=8)
    sp, sr = 1e-4, 1e-5  # a precise orientation: the rotation rows weigh more than by default
    weighted = select_poses(model, 12, kind="pose", candidates=candidates, sigma_position=sp,
                            sigma_rotation=sr)
    default = select_poses(model, 12, kind="pose", candidates=candidates)
    assert not np.array_equal(np.sort(weighted.indices), np.sort(default.indices))
    names = weighted.parameters
    estimated = np.array([model.names.index(n) for n in names])
    data = measure(model, None, weighted.q, kind="pose", sigma_position=sp, sigma_rotation=sr)
    problem = _Problem(model, [data], estimated, np.array(model.nominal))
    _, jac = problem.residuals(np.array(model.nominal)[estimated], jacobian=True)
    scale = np.where(model.is_angle[estimated], 1.0, model.reach)  # unitless columns
    info = (jac * scale).T @ (jac * scale) * (sp / model.reach) ** 2
    assert np.linalg.slogdet(info)[1] == pytest.approx(weighted.value, rel=1e-8)
    with pytest.raises(ValueError, match="give both or neither"):
        select_poses(model, 12, kind="pose", candidates=candidates, sigma_rotation=sr)
    with pytest.raises(ValueError, match="`sigma_rotation`: position measurements"):
        select_poses(model, 12, candidates=candidates, sigma_rotation=sr)


def test_rounded_urdf_rotation_keeps_dependencies_exact(urdf_robot):
    """The tiny URDF's `rpy="1.5707963 0 0"` is pi/2 rounded: joint 2's error rotation about
    its parent's z axis is exactly joint 1's (regrouped), never a direction 3e-8 away from it
    that the rank decision would keep with a coefficient of 1e7."""
    model = KinematicModel(dataclasses.replace(urdf_robot, tool=urdf_robot.tool @ translation(
        0.02, 0.01, 0.03)))
    found = model.identifiable("pose")
    assert "joint 2 rz" in found.coefficients["base rz"]
    assert max(abs(v) for terms in found.coefficients.values() for v in terms.values()) < 1e3
    columns = [model.names.index(n) for n in found.independent]
    _, jac = model.jacobian(None, model.random_poses(60, seed=3))
    singular = np.linalg.svd(model.scaled_rows(jac, "pose")[:, columns], compute_uv=False)
    assert singular[-1] > 1e-3 * singular[0]
    cal, error, _ = _recovery(model, "pose", 60, seed=3, sigma_rotation=1e-4)
    _check_recovered(model, cal, error)
