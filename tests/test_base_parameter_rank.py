"""The base-parameter rank decision: one singular-value rank for rref and QR, robust to DH/MDH
tables written with rounded angles (issue 11: 1.5708 for pi/2 gave 53 for the Jaco2 by rref)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import assert_close, table_row
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dynid.friction.models import Arctan
from dynid.model import default_friction
from dynid.model.base_parameters import (
    STRUCTURAL_RTOL,
    base_parameters,
    processing_order,
    robot_base_parameters,
    structural_regressor,
)
from dynid.robot import (
    MAX_GRAVITY,
    RevoluteDH,
    RevoluteMDH,
    Robot,
    load_robot,
)
from dynid.robot.inertia import from_log_cholesky

SPECIAL = (np.pi / 2, -np.pi / 2, np.pi, 0.0)


def _rebuild(robot: Robot, rows) -> Robot:
    build = Robot.from_dh if robot.convention == "dh" else Robot.from_mdh
    return build(robot.name, rows, robot.parameters, tool=robot.tool, limits=robot.limits,
                 gravity=robot.gravity)


def _svd_rank(stacked: np.ndarray, rtol: float) -> int:
    """numpy.linalg.matrix_rank's rule with a relative tolerance, on the whole regressor."""
    singular = np.linalg.svd(stacked, compute_uv=False)
    return int((singular > rtol * singular[0]).sum())


def _reproduction_error(robot: Robot, base) -> float:
    """max |Y pi - Y_L (G pi)| / max |Y pi| on other random states than the base's."""
    w = structural_regressor(robot, n_samples=20, seed=11)
    pi = robot.parameters.ravel()
    torques = w @ pi
    return float(np.abs(torques - base.reduce(w) @ base.base(pi)).max() / np.abs(torques).max())


def _ur5(alpha: float) -> Robot:
    """Standard UR5 DH table, twists written as +-alpha (pi/2 exact, or rounded)."""
    d = (0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823)
    a = (0.0, -0.425, -0.39225, 0.0, 0.0, 0.0)
    twist = (alpha, 0.0, 0.0, alpha, -alpha, 0.0)
    rows = [RevoluteDH(d=d[k], a=a[k], alpha=twist[k]) for k in range(6)]
    parameters = from_log_cholesky(np.random.default_rng(5).normal(size=(6, 10)))
    return Robot.from_dh("ur5", rows, parameters)


@pytest.mark.parametrize("alpha", [1.5708, np.pi / 2 - 5e-5])
def test_jaco2_with_rounded_twists_has_43(alpha):
    """Rounded to 4 decimals (the issue's table), and 5e-5 rad off."""
    jaco2 = load_robot("jaco2")
    rows = [dataclasses.replace(row, alpha=float(np.sign(row.alpha)) * alpha)
            if abs(abs(row.alpha) - np.pi / 2) < 1e-12 else row for row in jaco2.table]
    assert any(abs(row.alpha) == alpha for row in rows)
    rounded = _rebuild(jaco2, rows)
    exact = robot_base_parameters(jaco2)
    for method in ("rref", "qr"):
        base = robot_base_parameters(rounded, method=method)
        assert base.rank == 43, method
        assert _reproduction_error(rounded, base) < 1e-9, method
    # the same representatives as the exact table's, and the generic default agrees
    assert np.array_equal(robot_base_parameters(rounded).independent, exact.independent)
    assert base_parameters(structural_regressor(rounded)).rank == 43


def test_ur5_with_rounded_twists_has_36():
    exact = {m: robot_base_parameters(_ur5(np.pi / 2), method=m) for m in ("rref", "qr")}
    rounded_robot = _ur5(1.5708)
    rounded = {m: robot_base_parameters(rounded_robot, method=m) for m in ("rref", "qr")}
    for method in ("rref", "qr"):
        assert exact[method].rank == rounded[method].rank == 36, method
        assert _reproduction_error(rounded_robot, rounded[method]) < 1e-9, method
    assert np.array_equal(rounded["rref"].independent, exact["rref"].independent)


def test_builtin_counts_are_kept():
    """Exact tables: the counts the papers give (and those with friction / static M, g)."""
    counts = {"arm3": 15, "panda": 43, "panda-cad": 43, "jaco2": 43}
    for name, count in counts.items():
        robot = load_robot(name)
        for method in ("rref", "qr"):
            assert robot_base_parameters(robot, method=method).rank == count, (name, method)
    assert robot_base_parameters(load_robot("arm3"),
                                 friction=default_friction(load_robot("arm3"))).rank == 24
    panda = load_robot("panda")
    assert robot_base_parameters(panda, friction=default_friction(panda)).rank == 64
    for method in ("rref", "qr"):
        base = robot_base_parameters(panda, kind="static", drop_joint1_gravity=True,
                                     method=method)
        assert base.rank == 43, method


def test_rref_that_cannot_reach_the_rank_says_so():
    """Columns each within the tolerance whose sum is not: rank 2, one leading column."""
    rtol = 1e-3
    w = np.zeros((60, 51))
    w[0, 0] = 1.0
    w[1, 1:] = 0.9 * rtol  # 50 copies of one small column: sigma_2 = 0.9 rtol sqrt(50)
    assert base_parameters(w, method="qr", rtol=rtol).rank == 2
    with pytest.raises(ValueError, match="rref found only 1 leading columns for numerical "
                       "rank 2: singular values crowd the tolerance"):
        base_parameters(w, rtol=rtol)


def _pair(convention: str, joints, digits: int, seed: int) -> tuple[Robot, Robot]:
    """A chain from ``(prismatic, alpha, theta, a, d)`` rows, exact and with its angles rounded
    to ``digits`` decimals and lengths to 4; random physical links."""
    tables = []
    for angle, size in ((lambda x: x, lambda x: x),
                        (lambda x: round(x, digits), lambda x: round(x, 4))):
        rows = []
        for prismatic, alpha, theta, a, d in joints:
            rows.append(table_row(convention, prismatic, a=size(a), d=size(d),
                                  alpha=angle(alpha), theta=angle(theta)))
        tables.append(rows)
    parameters = from_log_cholesky(np.random.default_rng(seed).normal(size=(len(joints), 10)))
    build = Robot.from_mdh if convention == "mdh" else Robot.from_dh
    return build("exact", tables[0], parameters), build("rounded", tables[1], parameters)


@st.composite
def _tables(draw):
    """A random DH or MDH chain of 3-6 joints (about one in five prismatic), twists and fixed
    rotations in {0, +-pi/2, pi}, lengths 0 or 5-50 cm either sign (the documented tolerance
    takes lengths under ~1 mm for zero), and the same chain with angles rounded to 4 or 5
    decimals and lengths to 4."""
    convention = draw(st.sampled_from(["dh", "mdh"]))
    n = draw(st.integers(3, 6))
    digits = draw(st.sampled_from([4, 5]))
    length = st.one_of(st.just(0.0), st.floats(0.05, 0.5), st.floats(-0.5, -0.05))
    joints = [(draw(st.integers(0, 4)) == 4, draw(st.sampled_from(SPECIAL)),
               draw(st.sampled_from(SPECIAL)), draw(length), draw(length)) for _ in range(n)]
    return _pair(convention, joints, digits, draw(st.integers(0, 2**32 - 1)))


# Axes along gravity (twists pi): 3.1416 tilts them by 7e-6 rad and gravity then acts on the
# first moments, a singular value of 1.3e-5 sigma_max that the exact table does not have.
GRAVITY_TILT = _pair("mdh", [(False, np.pi, np.pi, 0.405, 0.0), (False, np.pi, np.pi, 0.0, 0.0),
                             (True, 0.0, np.pi / 2, 0.13, 0.0)], 4, 85)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(_tables())
@example(GRAVITY_TILT)
def test_rounded_tables_keep_the_exact_count(robots):
    exact, rounded = robots
    results = {}
    for robot in (exact, rounded):
        stacked = structural_regressor(robot)
        order = processing_order(robot, stacked.shape[1])
        rref, qr = (base_parameters(stacked, method=m, rtol=STRUCTURAL_RTOL, order=order)
                    for m in ("rref", "qr"))
        assert rref.rank == qr.rank == _svd_rank(stacked, STRUCTURAL_RTOL), robot.name
        results[robot.name] = rref
    assert results["rounded"].rank == results["exact"].rank
    # the same representatives: no column that rounding made nonzero is picked
    assert np.array_equal(results["rounded"].independent, results["exact"].independent)
    # what the rank leaves out of the rounded table is below the tolerance
    assert _reproduction_error(rounded, results["rounded"]) < STRUCTURAL_RTOL


GRAVITY_SIZES = (1e-12, 1e-9, 1e-6, 1e-3, 1e-1, 9.81, 1e3)


@pytest.mark.parametrize("name", ["arm3", "panda", "jaco2"])
def test_rank_does_not_depend_on_the_size_of_gravity(name):
    """Issue 22: arm3 at 1000 m/s^2 lost its friction columns (21 instead of 24), a gravity of
    1e8 left 4 of 15. Issue 31: at 1e-6 m/s^2 arm3 gave 21, at 1e-9 18 (its arctan friction
    columns folded into each other). The same rank, representatives and regrouping for every
    size the robot accepts, torque (with friction) and static."""
    robot = load_robot(name)
    friction = default_friction(robot)
    reference = {}
    for size in (*GRAVITY_SIZES, MAX_GRAVITY):
        scaled = dataclasses.replace(robot, gravity=np.array([0.0, 0.0, -size]))
        for kind, options in (("torque", {"friction": friction}), ("static", {"kind": "static"})):
            base = robot_base_parameters(scaled, **options)
            if kind not in reference:
                reference[kind] = base
            assert base.rank == reference[kind].rank, (size, kind)
            assert np.array_equal(base.independent, reference[kind].independent), (size, kind)
            assert_close(base.regrouping, reference[kind].regrouping, rtol=1e-12, atol=1e-12)
    if name in ("arm3", "panda"):
        assert reference["torque"].rank == {"arm3": 24, "panda": 64}[name]
        assert reference["static"].rank == {"arm3": 15, "panda": 43}[name]
    # without friction columns too (issue 31: "the Panda without friction stays 43")
    tiny = dataclasses.replace(robot, gravity=np.array([0.0, 0.0, -1e-12]))
    assert robot_base_parameters(tiny).rank == robot_base_parameters(robot).rank


@st.composite
def _tilted_chains(draw):
    """A random MDH chain of 2-5 revolute joints, random inertias, a random gravity direction
    and a size log-uniform in [1e-12, 1e3] m/s^2."""
    n = draw(st.integers(2, 5))
    angle = st.sampled_from([0.0, np.pi / 2, -np.pi / 2])
    length = st.one_of(st.just(0.0), st.floats(0.05, 0.5))
    rows = [RevoluteMDH(a=draw(length), alpha=draw(angle), d=draw(length)) for _ in range(n)]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    robot = Robot.from_mdh("random", rows, from_log_cholesky(rng.normal(size=(n, 10))),
                           gravity=9.81 * direction)
    return robot, 10.0 ** draw(st.floats(-12, 3))


@settings(max_examples=12, deadline=None, derandomize=True)
@given(_tilted_chains())
def test_rank_of_a_random_robot_does_not_depend_on_the_size_of_gravity(drawn):
    """Any size of gravity along any direction: the same base parameters as at 9.81 m/s^2,
    with arctan friction (nonlinear in the velocity: issue 31's failure) and without."""
    robot, size = drawn
    scaled = dataclasses.replace(robot, gravity=robot.gravity * (size / 9.81))
    for friction in (None, Arctan.template(robot.n_joints)):
        earth, other = (robot_base_parameters(r, friction=friction) for r in (robot, scaled))
        assert other.rank == earth.rank, size
        assert np.array_equal(other.independent, earth.independent), size
        assert_close(other.regrouping, earth.regrouping, rtol=1e-12, atol=1e-12)
    # a gravity is not no gravity: the weightless chain loses the gravity-only directions
    weightless = dataclasses.replace(robot, gravity=np.zeros(3))
    assert robot_base_parameters(weightless).rank <= robot_base_parameters(robot).rank


def test_rank_does_not_depend_on_the_friction_columns_units():
    """A friction column a million times smaller (its unit) is still a column."""
    arm = load_robot("arm3")
    friction = default_friction(arm)
    base = robot_base_parameters(arm, friction=friction)
    w = structural_regressor(arm, friction=friction)
    scale = np.ones(w.shape[1])
    scale[30:] = 1e-6
    assert base_parameters(w * scale, rtol=STRUCTURAL_RTOL).rank < base.rank  # plain rule
    from dynid.model._compress import triangular_factor
    from dynid.model.base_parameters import group_scale

    factor = triangular_factor(w * scale)
    again = base_parameters(w * scale, rtol=STRUCTURAL_RTOL, order=processing_order(arm, 39),
                            column_scale=group_scale(arm, factor))
    assert again.rank == base.rank == 24


def _chain(n: int) -> Robot:
    rng = np.random.default_rng(n)
    rows = [RevoluteMDH(a=float(rng.uniform(0.05, 0.3)),
                        alpha=float(rng.choice([0.0, np.pi / 2, -np.pi / 2])),
                        d=float(rng.uniform(0.0, 0.2))) for _ in range(n)]
    return Robot.from_mdh(f"chain{n}", rows, from_log_cholesky(rng.normal(size=(n, 10))))


def test_long_chains_are_decided_in_bounded_work_and_longer_ones_refused():
    """The structural regressor stops growing with n^3 rows: at least 4 rows per column
    beyond 10 joints (structural_samples), built block by block; a chain over
    dynid.robot.MAX_JOINTS is refused by name before any work."""
    from dynid.model.base_parameters import structural_samples
    from dynid.robot import MAX_JOINTS

    assert structural_samples(7) == 280 and structural_samples(100) == 60
    chain = _chain(100)
    base = robot_base_parameters(chain)  # seconds, < 1 GB (the old 4000 states: 3.2 GB)
    # a revolute chain of generic MDH rows: 7 per link, less the first links' unseen ones
    assert 680 <= base.rank <= 700
    assert _reproduction_error(chain, base) < 1e-6
    with pytest.raises(ValueError, match=rf"MAX_JOINTS = {MAX_JOINTS}"):
        _chain(MAX_JOINTS + 1)


def _repeated_arm3(n: int) -> Robot:
    """arm3's rows and links repeated to ``n`` joints (the robot file of
    tests/test_urdf_hostile.py): an exact table whose distal columns are 1e4 times its
    proximal ones."""
    arm = load_robot("arm3")
    rows = [arm.table[k % 3] for k in range(n)]
    return Robot.from_dh(f"arm3x{n}", rows, np.tile(arm.parameters, (n // 3 + 1, 1))[:n])


def test_a_100_joint_robot_file_has_a_well_defined_rank(tmp_path, capsys):
    """Issue 31: `dynid robot show` on arm3's rows repeated to 100 joints said "rank is
    ambiguous; pass another `rtol`" (an option it did not have): the lever arms put genuine
    directions at 5e-5 of the largest, across the tolerance. Weighed link by link, the count
    is the exact table's (round-off alone counts as zero), and the command says so."""
    import json

    from dynid.cli import main
    from dynid.model.base_parameters import structural_factor
    from dynid.robot import save_robot

    chain = _repeated_arm3(100)
    save_robot(chain, tmp_path / "long.yaml")
    assert main(["robot", "show", str(tmp_path / "long.yaml"), "--json"]) == 0
    count = json.loads(capsys.readouterr().out)["n_base_parameters"]
    exact = np.linalg.matrix_rank(structural_factor(chain))  # numpy's round-off tolerance
    assert count == exact == 694


def test_an_ambiguous_rank_names_the_option_to_change(tmp_path, capsys):
    """Twists 5e-5 rad off a multiple of pi/2 and a tolerance of 3e-5 meet inside a spread
    of singular values: the error names the robot and `--rtol`, the command has it, and a
    tolerance at a gap gives a count."""
    from dynid.cli import main
    from dynid.model.base_parameters import AmbiguousRankError
    from dynid.robot import save_robot

    off = 5e-5
    joints = [(-np.pi / 2 - off, np.pi, -0.282, 0.291), (off, np.pi / 2, -0.111, -0.491),
              (-off, np.pi / 2, -0.144, 0.274), (-off, 0.0, 0.0, -0.259),
              (-off, 0.0, -0.392, -0.357), (off, -np.pi / 2, 0.0, -0.464)]
    robot, _ = _pair("mdh", [(False, *row) for row in joints], 12, 1281280736)
    with pytest.raises(AmbiguousRankError, match=r"base parameters of 'exact': rref found .* "
                       r"pass another `rtol` \(`--rtol` of `dynid base` and `dynid robot "
                       r"show`\), e.g. 3e-06"):
        robot_base_parameters(robot, rtol=3e-5)
    save_robot(robot, tmp_path / "off.yaml")
    assert main(["base", str(tmp_path / "off.yaml"), "--rtol", "3e-5"]) == 2
    assert "`--rtol` of `dynid base`" in capsys.readouterr().err
    assert main(["robot", "show", str(tmp_path / "off.yaml"), "--rtol", "1e-3"]) == 0


def test_the_structural_decision_runs_on_one_blas_thread(monkeypatch):
    """Beside one busy process per core, OpenBLAS's threads made a 100-joint chain's QR and
    SVD 3-6 times slower than one thread (each call waits for all its threads to be
    scheduled): the decision's factorisations run on one."""
    import importlib

    from threadpoolctl import threadpool_info

    # the module, not the function dynid.identification re-exports under its name
    module = importlib.import_module("dynid.model.base_parameters")
    seen = []

    def counting(function):
        def wrapped(*args, **kwargs):
            seen.append({info["num_threads"] for info in threadpool_info()
                         if info["user_api"] == "blas"})
            return function(*args, **kwargs)
        return wrapped

    for name in ("triangular_factor", "_rank_space", "regrouping_for"):
        monkeypatch.setattr(module, name, counting(getattr(module, name)))
    robot_base_parameters(load_robot("arm3"))
    assert len(seen) >= 3 and all(threads == {1} for threads in seen), seen


def test_base_command_counts_the_rigid_body_as_robot_show_and_friction_apart(capsys):
    """Issue 22: `dynid base ur5` said 54 of 78 (friction counted), `robot show` 36 of 60."""
    from dynid.cli import main

    for extra in ([], ["--gravity", "0", "0", "-1000"]):
        assert main(["base", "arm3", *extra]) == 0
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith("arm3: 15 base parameters of 30 rigid-body parameters; with "
                                "the 9 arctan friction columns: 24 of 39 in all"), first
    assert main(["base", "arm3", "--json"]) == 0
    import json

    payload = json.loads(capsys.readouterr().out)
    assert (payload["rigid_rank"], payload["n_rigid_parameters"], payload["rank"],
            payload["friction_columns"]) == (15, 30, 24, 9)
