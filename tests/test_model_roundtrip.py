"""Round trips: every model dynid writes, every command that reads models reads back (issue 22).

Robots as users write them: MDH / DH tables and URDFs with angles rounded (1.5708 for pi/2),
real small offsets (1e-4 to 1e-2 m), 1e-17-sized values where a tool wrote an exact zero as
round-off, prismatic joints. Each model is identified, saved, loaded and validated; a model
carried by a full link set (constrained, NLS, retrieved) stays a full set after the round trip.
``DYNID_FUZZ_EXAMPLES`` scales the random examples (``make fuzz``).
"""

from __future__ import annotations

import dataclasses
import os
import warnings

import numpy as np
import pytest
import yaml
from conftest import assert_close, table_row
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dynid.data.dataset import Dataset
from dynid.dynamics import rnea
from dynid.evaluation import validate_model
from dynid.friction.models import ViscousCoulomb
from dynid.identification.linear.estimators import OLS, WLS
from dynid.identification.linear.idim import identify
from dynid.model.linear_model import load_model, save_model
from dynid.robot import (
    RevoluteDH,
    RevoluteMDH,
    Robot,
    load_robot,
    load_urdf,
)
from dynid.robot.inertia import from_log_cholesky

EXAMPLES = int(os.environ.get("DYNID_FUZZ_EXAMPLES", "100"))
# the suite draws the same examples every run (CI is reproducible); `make fuzz` draws new ones
EXPLORE = "DYNID_FUZZ_EXAMPLES" in os.environ
HALF_PI = (1.5708, -1.5708, np.pi / 2, -np.pi / 2)


def _length(rng: np.random.Generator) -> float:
    """A table entry as tools write them: zero, round-off of zero, a small real offset, a
    link length."""
    kind = rng.integers(4)
    if kind == 0:
        return 0.0
    if kind == 1:
        return float(rng.choice([6e-17, -1.2e-17, 3e-16]))
    if kind == 2:
        return float(rng.choice([-1, 1]) * 10 ** rng.uniform(-4, -2))
    return float(rng.uniform(0.05, 0.4))


def _twist(rng: np.random.Generator) -> float:
    return float(rng.choice([0.0, *HALF_PI, 3.1416, np.pi, 6e-17]))


def _table_robot(rng: np.random.Generator, convention: str, n: int) -> Robot:
    rows = []
    for _ in range(n):
        prismatic = rng.random() < 0.2
        rows.append(table_row(convention, prismatic, a=_length(rng), d=_length(rng),
                              alpha=_twist(rng), theta=_twist(rng)))
    parameters = from_log_cholesky(rng.normal(size=(n, 10)))
    build = Robot.from_mdh if convention == "mdh" else Robot.from_dh
    return build(f"random-{convention}", rows, parameters)


def _urdf_robot(rng: np.random.Generator, n: int, folder) -> Robot:
    """A URDF chain with rounded rpy angles and small real or round-off offsets."""
    links, joints = ['<link name="base"/>'], []
    for k in range(n):
        mass = rng.uniform(0.2, 3.0)
        com = rng.uniform(-0.05, 0.05, 3)
        diagonal = rng.uniform(1e-2, 2e-2, 3)  # the triangle inequality holds
        links.append(
            f'<link name="l{k}"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}"/>'
            f'<mass value="{mass}"/><inertia ixx="{diagonal[0]}" ixy="0" ixz="0" '
            f'iyy="{diagonal[1]}" iyz="0" izz="{diagonal[2]}"/></inertial></link>')
        xyz = " ".join(str(_length(rng)) for _ in range(3))
        rpy = " ".join(str(float(rng.choice([0.0, *HALF_PI, 3.1416, 6e-17])))
                       for _ in range(3))
        kind = "prismatic" if rng.random() < 0.2 else "revolute"
        parent = "base" if k == 0 else f"l{k - 1}"
        joints.append(
            f'<joint name="j{k}" type="{kind}"><parent link="{parent}"/><child link="l{k}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="0 0 1"/>'
            f'<limit lower="-2.5" upper="2.5" effort="100" velocity="2"/></joint>')
    path = folder / f"random{rng.integers(10**9)}.urdf"
    path.write_text('<robot name="random">' + "".join(links + joints) + "</robot>")
    return load_urdf(path)


def _log(robot: Robot, rng: np.random.Generator, friction: ViscousCoulomb | None,
         n_samples: int = 300) -> Dataset:
    """Noise-free torques at random states (every joint both ways: Coulomb is excited)."""
    n = robot.n_joints
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -np.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, np.pi)
    q = rng.uniform(lower, upper, (n_samples, n))
    dq, ddq = rng.standard_normal((2, n_samples, n))
    tau = rnea(robot, q, dq, ddq)
    if friction is not None:
        tau = tau + friction.torque(dq)
    return Dataset(t=0.01 * np.arange(n_samples), q=q, dq=dq, ddq=ddq, tau=tau,
                   metadata={"robot": robot.name})


def _round_trip(model, path):
    """save -> load -> validate; the loaded model predicts as the saved one."""
    save_model(model, path)
    loaded = load_model(path)
    q, dq, ddq = np.random.default_rng(1).standard_normal((3, 20, model.robot.n_joints))
    expected = model.predict(q, dq, ddq)
    assert_close(loaded.predict(q, dq, ddq), expected,
                 atol=1e-9 * max(1.0, np.abs(expected).max()))
    assert (loaded.physical_parameters is None) == (model.physical_parameters is None)
    return loaded


def _carried(model, robot: Robot):
    """The model carried by a full link set (what `dynid retrieve -o` writes)."""
    return model.with_physical_parameters(robot.parameters, method="retrieve-test")


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not EXPLORE,
          database=None if not EXPLORE else settings.default.database,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["mdh", "dh", "urdf"]),
       n=st.integers(2, 5))
@example(seed=241, kind="dh", n=4)  # rref's residue 60 x sigma_{k+1}: once refused on loading
def test_random_robots_round_trip(tmp_path, seed, kind, n):
    rng = np.random.default_rng(seed)
    robot = (_urdf_robot(rng, n, tmp_path) if kind == "urdf"
             else _table_robot(rng, kind, n))
    friction = ViscousCoulomb(rng.uniform(0.0, 0.5, n), rng.uniform(0.0, 0.5, n),
                              rng.uniform(-0.1, 0.1, n))
    data = _log(robot, rng, friction)
    template = ViscousCoulomb.zeros(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = identify(robot, data, friction=template,
                             estimator=WLS() if rng.random() < 0.5 else OLS())
        except ValueError as error:
            # a rank decision that cannot be made cleanly is refused by name, never written
            assert "crowd the tolerance" in str(error)
            return
    loaded = _round_trip(model, tmp_path / "m.yaml")
    report = validate_model(loaded, data, n_poses=20)
    assert np.isfinite(report.rmse).all()
    # noise-free data: exact up to what the rank decision (rtol 1e-4) calls zero, which on a
    # table with rounded angles is a few 1e-5 of the torques
    assert report.rmse.max() <= 1e-3 * np.abs(data.tau).max()
    carried = _round_trip(_carried(model, robot), tmp_path / "carried.yaml")
    assert carried.physical_parameters is not None
    assert validate_model(carried, data, n_poses=20).consistent


@pytest.mark.xfail(strict=True, reason=(
    "known bug (found by the property test's random draws; issue 22's loader): a 3-joint DH "
    "chain with a pi twist rounded to 3.1416 and a 0.2 mm link length is identified with fo3 "
    "regrouped into the rigid body, and its model file is then refused on loading (the span "
    "test misses 0.71)"))
def test_rounded_pi_twist_dh_chain_round_trips(tmp_path):
    test_random_robots_round_trip.hypothesis.inner_test(tmp_path=tmp_path, seed=53730,
                                                        kind="dh", n=3)


def _gen3_like() -> Robot:
    """Kinova Gen3's MDH table as its vendor URDF gives it: rounded twists, the real small
    offsets d = -0.0117, -0.0128, -0.00035 m, a 6e-17 entry."""
    half = 1.5708
    rows = [RevoluteMDH(a=0.0, alpha=np.pi, d=-0.2848),
            RevoluteMDH(a=0.0, alpha=half, d=-0.0117),
            RevoluteMDH(a=0.0, alpha=-half, d=-0.4208),
            RevoluteMDH(a=6e-17, alpha=half, d=-0.0128),
            RevoluteMDH(a=0.0, alpha=-half, d=-0.3143),
            RevoluteMDH(a=0.0, alpha=half, d=-0.00035),
            RevoluteMDH(a=0.0, alpha=-half, d=-0.1674)]
    parameters = from_log_cholesky(np.random.default_rng(22).normal(size=(7, 10)))
    return Robot.from_mdh("gen3-like", rows, parameters)


def _ur5_rounded() -> Robot:
    d = (0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823)
    a = (0.0, -0.425, -0.39225, 0.0, 0.0, 0.0)
    twist = (1.5708, 0.0, 0.0, 1.5708, -1.5708, 0.0)
    rows = [RevoluteDH(d=d[k], a=a[k], alpha=twist[k]) for k in range(6)]
    parameters = from_log_cholesky(np.random.default_rng(5).normal(size=(6, 10)))
    return Robot.from_dh("ur5-rounded", rows, parameters)


def _example_arm(name: str) -> Robot:
    pytest.importorskip("dynid.robot._example_robot_data")
    from dynid.robot._example_robot_data import robots_folder

    if robots_folder() is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_robot(name)


ARMS = ("ur3", "ur5", "ur10", "example-robot-data:panda", "kinova", "xarm7", "z1", "so100",
        "so101", "talos-left-arm")


def _arm3_gravity(size: float) -> Robot:
    """arm3 under another gravity (issue 22: `identify --gravity 0 0 -1000`)."""
    return dataclasses.replace(load_robot("arm3"), gravity=np.array([0.0, 0.0, -size]))


SPECIAL = {"gen3-like": _gen3_like, "ur5-rounded": _ur5_rounded,
           "arm3-gravity-1e3": lambda: _arm3_gravity(1e3),
           "arm3-gravity-1e8": lambda: _arm3_gravity(1e8),
           "arm3-gravity-1e-3": lambda: _arm3_gravity(1e-3)}


@pytest.mark.parametrize("name", [*SPECIAL, *ARMS])
def test_deterministic_robots_round_trip(tmp_path, name):
    robot = SPECIAL.get(name, lambda: _example_arm(name))()
    n = robot.n_joints
    rng = np.random.default_rng(7)
    friction = ViscousCoulomb(np.full(n, 0.2), np.full(n, 0.3), np.full(n, 0.05))
    data = _log(robot, rng, friction, n_samples=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = identify(robot, data, friction=ViscousCoulomb.zeros(n))
    loaded = _round_trip(model, tmp_path / "ols.yaml")
    assert np.isfinite(validate_model(loaded, data, n_poses=20).rmse).all()
    carried = _round_trip(_carried(model, robot), tmp_path / "carried.yaml")
    assert carried.physical_parameters is not None
    # no friction row carries round-off of the rigid body's terms
    rigid = 10 * n
    friction_rows = carried.base.independent >= rigid
    assert not carried.base.regrouping[friction_rows, :rigid].any()


@pytest.fixture(scope="module")
def so100_log():
    """SO-100 (rounded URDF) with friction, noise-free, for every identification method."""
    robot = _example_arm("so100")
    n = robot.n_joints
    truth = ViscousCoulomb(np.full(n, 0.02), np.full(n, 0.03), np.full(n, 0.01))
    return robot, _log(robot, np.random.default_rng(3), truth, n_samples=400)


METHODS = ("cls1", "cls2", "cls3", "log-cholesky", "nls", "static", "drive-gains")


@pytest.mark.parametrize("method", METHODS)
def test_every_method_round_trips_on_a_rounded_urdf(so100_log, tmp_path, method):
    """SO-100 (issue 22: 'they miss 4.2e-07 of the regressor'): each method's model loads,
    validates, and a full-set model stays one."""
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.drive_gains import identify_drive_gains
    from dynid.identification.linear.reverse_engineering import identify_static
    from dynid.identification.nonlinear.nls import identify_nls

    robot, data = so100_log
    n = robot.n_joints
    friction = ViscousCoulomb.zeros(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in ("cls1", "cls2", "cls3", "log-cholesky"):
            model = identify_constrained(robot, data, method=method, friction=friction).model
        elif method == "nls":
            model = identify_nls(robot, data, friction="viscous-coulomb",
                                 max_iterations=20).model
        elif method == "static":
            from dynid.data.dataset import StaticData
            from dynid.dynamics import gravity_torque, mass_matrix

            q = data.q[:150]
            model = identify_static(robot, StaticData(q=q, M=mass_matrix(robot, q),
                                                      g=gravity_torque(robot, q)))
        else:
            gains = np.linspace(2.0, 4.0, n)
            currents = dataclasses.replace(data, tau=data.tau / gains, effort="current")
            model = identify_drive_gains(robot, currents, gains={1: gains[0]},
                                         friction=friction)
    loaded = _round_trip(model, tmp_path / f"{method}.yaml")
    assert np.isfinite(validate_model(loaded, data, n_poses=20).rmse).all()
    if method in ("cls1", "cls2", "cls3", "log-cholesky", "nls"):
        assert loaded.physical_parameters is not None, method
    if method == "drive-gains":
        assert_close(loaded.drive_gains, model.drive_gains)


def _corrupt(path, tmp_path, change) -> str:
    spec = yaml.safe_load(path.read_text())
    change(spec["base_parameters"]["coefficients"])
    out = tmp_path / "corrupt.yaml"
    out.write_text(yaml.safe_dump(spec, sort_keys=False))
    return str(out)


def _rename(rows):
    # the row of Ixx2 (or the first combination) named after a parameter it does not hold
    row = next(r for r in rows if len(r["terms"]) > 1)
    other = next(r["name"] for r in rows if r["name"] not in row["terms"])
    row["terms"][other] = row["terms"].pop(row["name"])
    row["name"] = other


def _edit(rows):
    # a combination's largest other term scaled by 1.01
    row = next(r for r in rows if len(r["terms"]) > 1)
    name = max((k for k in row["terms"] if k != row["name"]),
               key=lambda k: abs(row["terms"][k]))
    row["terms"][name] *= 1.01


CORRUPTIONS = {
    "deleted": (lambda rows: rows.pop(len(rows) // 2), "not a regrouping"),
    "renamed": (_rename, "not a regrouping|names a parameter twice|the term 1"),
    "duplicated": (lambda rows: rows.append(dict(rows[3])), "names a parameter twice"),
    "edited": (_edit, "not a regrouping"),
    "negative std": (lambda rows: rows[0].update(std=-1.0), r"std` must be >= 0"),
}


@pytest.mark.parametrize("robot_name", ["gen3-like", "so100"])
@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_the_loader_still_catches_a_corrupted_row(tmp_path, robot_name, corruption):
    robot = _gen3_like() if robot_name == "gen3-like" else _example_arm("so100")
    n = robot.n_joints
    data = _log(robot, np.random.default_rng(4), None, n_samples=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = identify(robot, data, friction=ViscousCoulomb.zeros(n))
    save_model(model, tmp_path / "m.yaml")
    load_model(tmp_path / "m.yaml")  # the untouched file loads
    change, message = CORRUPTIONS[corruption]
    with pytest.raises(ValueError, match=message):
        load_model(_corrupt(tmp_path / "m.yaml", tmp_path, change))


def test_a_file_without_the_recorded_rtol_still_loads(tmp_path):
    """Files written before ``base_parameters.rtol`` was recorded: the structural default."""
    robot = _example_arm("so100")
    data = _log(robot, np.random.default_rng(4), None, n_samples=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = identify(robot, data, friction=ViscousCoulomb.zeros(robot.n_joints))
    save_model(model, tmp_path / "m.yaml")
    spec = yaml.safe_load((tmp_path / "m.yaml").read_text())
    assert spec["base_parameters"].pop("rtol") == 1e-4
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert load_model(tmp_path / "old.yaml").base.rtol is None
    spec["base_parameters"]["rtol"] = 2.0
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(ValueError, match=r"`base_parameters.rtol` must be in \(0, 1\)"):
        load_model(tmp_path / "bad.yaml")


def test_what_the_std_is_round_trips_and_older_files_say_unknown(tmp_path):
    """``report.std_kind`` (tests/test_sigma_coverage.py) is kept; a file written before it was
    recorded loads with its std unlabelled ("unknown"), a value not in STD_KINDS is refused."""
    robot = _example_arm("so100")
    data = _log(robot, np.random.default_rng(4), None, n_samples=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = identify(robot, data, friction=ViscousCoulomb.zeros(robot.n_joints))
    assert model.std_kind == "covariance"
    save_model(model, tmp_path / "m.yaml")
    assert load_model(tmp_path / "m.yaml").std_kind == "covariance"
    spec = yaml.safe_load((tmp_path / "m.yaml").read_text())
    del spec["report"]["std_kind"]
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    old = load_model(tmp_path / "old.yaml")
    assert old.std_kind == "unknown"
    assert_close(old.std, model.std, rtol=1e-12)
    spec["report"]["std_kind"] = "exact"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(ValueError, match=r"`report\.std_kind` must be one of"):
        load_model(tmp_path / "bad.yaml")


def test_huge_coefficients_are_never_validated_as_consistent(tmp_path, capsys):
    """Coefficients of 1e300 (issue 22: 'validates as inf and physically consistent: yes')."""
    from dynid.cli import main
    from dynid.data.io import write_dataset

    robot = load_robot("arm3")
    data = _log(robot, np.random.default_rng(5), None, n_samples=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = identify(robot, data, friction=ViscousCoulomb.zeros(3))
    huge = dataclasses.replace(model, coefficients=np.full(model.base.rank, 1e300))
    save_model(huge, tmp_path / "huge.yaml")
    assert load_model(tmp_path / "huge.yaml").physical_parameters is None
    write_dataset(tmp_path / "log.csv", data)
    assert main(["validate", str(tmp_path / "huge.yaml"), str(tmp_path / "log.csv"),
                 "--poses", "10"]) == 2
    error = capsys.readouterr().err
    assert "cannot be validated" in error and len(error.strip().splitlines()) == 1, error
    assert "huge.yaml: " in error and "log.csv: " in error  # which model, on which log


def test_a_cls3_model_of_the_kinova_urdf_stays_a_full_set(tmp_path, capsys):
    """Issue 22: Kinova (continuous joints) identified by cls3 printed "physically consistent:
    yes", then export and validate called it a base-parameter estimate (friction rows with
    2e-17 m2 terms; the full set failing a 1e-9 test on reading)."""
    from dynid.cli import main
    from dynid.data.io import write_dataset
    from dynid.identification.constrained.cls import identify_constrained

    robot = _example_arm("kinova")
    n = robot.n_joints
    truth = ViscousCoulomb(np.full(n, 0.1), np.full(n, 0.2), np.full(n, 0.05))
    data = _log(robot, np.random.default_rng(6), truth, n_samples=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = identify_constrained(robot, data, method="cls3",
                                      friction=ViscousCoulomb.zeros(n))
    assert result.consistency.consistent
    rigid = 10 * n
    friction_rows = result.model.base.independent >= rigid
    assert not result.model.base.regrouping[friction_rows, :rigid].any()
    loaded = _round_trip(result.model, tmp_path / "cls3.yaml")
    assert_close(loaded.physical_parameters, result.parameters, rtol=1e-9, atol=1e-12)
    write_dataset(tmp_path / "log.csv", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["validate", str(tmp_path / "cls3.yaml"), str(tmp_path / "log.csv"),
                     "--poses", "20", "--json"]) == 0
        import json

        assert json.loads(capsys.readouterr().out)["physical"] is True
        assert main(["export", str(tmp_path / "cls3.yaml"), "-o",
                     str(tmp_path / "kinova.urdf")]) == 0


@pytest.mark.parametrize("name", ["arm3", "jaco2", "ur5"])
def test_derived_bounds_survive_the_round_trip(tmp_path, name):
    """A model keeps the bounds derived from its description (a table robot's robot file drops
    them, to derive them again): validate and report on a saved model still check them."""
    from dynid.identification.linear.idim import robot_model

    robot = SPECIAL.get(name, lambda: _example_arm(name))() if name == "ur5" else \
        load_robot(name)
    assert robot.bounds is not None and robot.bounds.derived
    loaded = _round_trip(robot_model(robot), tmp_path / "model.yaml")
    assert loaded.robot.bounds is not None
    for before, after in zip(robot.bounds.links, loaded.robot.bounds.links, strict=True):
        assert before.mass == after.mass
        assert_close(after.com_lower, before.com_lower)
        assert_close(after.com_upper, before.com_upper)
