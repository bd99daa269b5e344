"""Shared test helpers: one tolerance check, random robots and states, the reference folder,
signals as a terminal delivers them."""

from __future__ import annotations

import csv
import os
import re
import signal
from importlib import resources
from pathlib import Path
from typing import NoReturn

import numpy as np
import pinocchio as pin
import pytest
import yaml

from dynid.robot import (
    JointLimits,
    PrismaticDH,
    PrismaticMDH,
    RevoluteDH,
    RevoluteMDH,
    Robot,
    load_urdf,
    robot_from_dict,
)
from dynid.robot.inertia import (
    from_com,
    from_pseudo_inertia,
    inertia_matrix,
    physical_margin,
    pseudo_inertia,
    to_com,
)

ROOT = Path(__file__).resolve().parents[1]
# published data: what the repository may carry under its own licence (reference/: Franka's
# Apache-2.0 description), and what it may not, in ../shared/reference beside it (CI has it)
CARRIED = ROOT / "reference"
REFERENCE = ROOT.parent / "shared" / "reference"
# CI (.ci/run) has ../shared beside the clone and sets this: there a missing file fails the test
REFERENCE_REQUIRED = os.environ.get("DYNID_REFERENCE_REQUIRED") == "1"


def assert_close(actual, expected, *, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """|actual - expected| <= atol + rtol |expected| elementwise; fails on NaN or shape mismatch."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert np.isfinite(actual).all(), "actual contains NaN or inf"
    assert np.isfinite(expected).all(), "expected contains NaN or inf"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def table3_value(expression: str, parameters: np.ndarray) -> float:
    """Evaluate a printed Table III expression (J about the link origin, c the CoM, m mass)."""
    expression = re.sub(r"J([xyz]{2})(\d)", r"J\2\1", expression)  # row 14 prints "Jxz4"
    tokens = re.findall(r"J\d[xyz]{2}|m\d|c\d[xyz]|\d+\.\d+|\d+|[-+()]", expression)
    program: list[str] = []
    for token in tokens:  # implicit products: "0.632c3z m3", "0.1067(m4 + ...)"
        if program and program[-1] not in "+-(" and token not in "+-)":
            program.append("*")
        program.append(token)
    mass, com, _ = to_com(parameters)
    inertia = inertia_matrix(parameters[:, 4:])
    names: dict[str, float] = {}
    for i in range(parameters.shape[0]):
        names[f"m{i + 1}"] = mass[i]
        for a, axis in zip("xyz", range(3), strict=True):
            names[f"c{i + 1}{a}"] = com[i, axis]
            for b, other in zip("xyz", range(3), strict=True):
                names[f"J{i + 1}{a}{b}"] = inertia[i, axis, other]
    return float(eval("".join(program), {"__builtins__": {}}, names))


def table3_rows() -> list[dict]:
    """Gaz 2019 Table III, the 43 dynamic coefficients (row 2's printed typo corrected: its
    m3 inside the parenthesis, see test_gaz2019_table3_pi_of_p_hat)."""
    rows = list(csv.DictReader(reference_path(
        "panda-gaz2019", "gaz2019_tableIII_dynamic_coefficients.csv").open()))[:43]
    for row in rows:
        if row["index"] == "2":
            row["coefficient_expression"] = row["coefficient_expression"].replace(
                "0.1067(m3 +", "0.1067(")
    return rows


def table3_functional(expression: str, parameters: np.ndarray) -> np.ndarray:
    """The linear functional (p,) of a Table III expression, by exact unit steps."""
    value = table3_value(expression, parameters)
    n = parameters.size
    return np.array([table3_value(expression, parameters + np.eye(n)[k].reshape(parameters.shape))
                     - value for k in range(n)])


def gaz_reverse_engineered_model():
    """Gaz et al.'s published model of the Panda controller: the reverse-engineered
    coefficients of Table III (pi_RE) on our static base, gravity 9.80665 as in their code,
    plus their sigmoid friction (the built-in panda's)."""
    import dataclasses

    from dynid.friction.models import NoFriction
    from dynid.model.base_parameters import robot_base_parameters
    from dynid.model.linear_model import LinearModel
    from dynid.robot import load_robot

    panda = load_robot("panda")
    base = robot_base_parameters(panda, kind="static", drop_joint1_gravity=True)
    coefficients = np.zeros(base.rank)
    dropped = []  # Gaz dropped the two coefficients whose relative std exceeds 30 %
    for row in table3_rows():
        functional = table3_functional(row["coefficient_expression"], panda.parameters)
        errors = [min((np.abs(functional - g).max(), 1.0), (np.abs(functional + g).max(), -1.0))
                  for g in base.regrouping]
        match = int(np.argmin([e for e, _ in errors]))
        coefficients[match] = errors[match][1] * float(row["pi_hat_RE"])
        if float(row["pct_sigma_RE"]) > 30.0:
            dropped.append(match)
    robot = dataclasses.replace(panda, gravity=np.array([0.0, 0.0, -9.80665]))
    model = LinearModel(robot=robot, friction=NoFriction(7), base=base,
                        coefficients=coefficients, std=np.zeros(base.rank),
                        report={"dropped": sorted(dropped)})
    return model, panda.friction


def published_panda_cad() -> Robot:
    """``panda-cad`` with Franka's inertials as published: its link 4 is no physical body (the
    built-in loads the nearest one; ``inertia.physical: nearest``)."""
    spec = yaml.safe_load((resources.files("dynid.robot") / "data" / "panda-cad.yaml")
                          .read_text())
    spec["inertia"]["physical"] = False
    return robot_from_dict(spec)


def reference_path(*parts: str) -> Path:
    """A published data file: from the repository's reference/ when it carries that folder,
    else from ../shared/reference; a test that needs an absent one skips, naming the path."""
    if (CARRIED / parts[0]).is_dir():
        return CARRIED.joinpath(*parts)
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        missing_reference(f"reference data not found at {path} (../shared beside the repository)")
    return path


def missing_reference(reason: str) -> NoReturn:
    """Skip a test whose data lies outside the repository and is absent, saying what is
    missing; a failure where it must be there (DYNID_REFERENCE_REQUIRED=1, as in CI)."""
    if REFERENCE_REQUIRED:
        pytest.fail(f"{reason}; DYNID_REFERENCE_REQUIRED=1 says it must be there")
    pytest.skip(reason)


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def random_link_parameters(rng: np.random.Generator, n: int) -> np.ndarray:
    """Physically consistent (n, 10): each link a solid box, rotated, off-centre."""
    params = []
    for _ in range(n):
        mass = rng.uniform(0.3, 5.0)
        box = rng.uniform(0.02, 0.4, size=3)
        principal = mass / 12 * np.array([box[1] ** 2 + box[2] ** 2, box[0] ** 2 + box[2] ** 2,
                                          box[0] ** 2 + box[1] ** 2])
        rot = random_rotation(rng)
        inertia = rot @ np.diag(principal) @ rot.T
        params.append(from_com(mass, rng.uniform(-0.2, 0.2, size=3), inertia))
    return np.array(params)


def random_gravity(rng: np.random.Generator) -> np.ndarray:
    direction = rng.standard_normal(3)
    return 9.81 * direction / np.linalg.norm(direction)


def random_table_robot(rng: np.random.Generator, convention: str, n: int,
                       prismatic: float = 0.3) -> Robot:
    """A random MDH or DH chain with random physical parameters, gravity and offsets."""
    rows = []
    for i in range(n):
        a, d = rng.uniform(-0.5, 0.5, size=2)
        alpha, theta, offset = rng.uniform(-np.pi, np.pi, size=3)
        is_prismatic = (i == n // 2 and prismatic > 0) or rng.uniform() < prismatic
        if convention == "mdh":
            row = (PrismaticMDH(a=a, alpha=alpha, theta=theta, offset=offset) if is_prismatic
                   else RevoluteMDH(a=a, alpha=alpha, d=d, offset=offset))
        else:
            row = (PrismaticDH(theta=theta, a=a, alpha=alpha, offset=offset) if is_prismatic
                   else RevoluteDH(d=d, a=a, alpha=alpha, offset=offset))
        rows.append(row)
    build = Robot.from_mdh if convention == "mdh" else Robot.from_dh
    return build(f"random-{convention}", rows, random_link_parameters(rng, n),
                 gravity=random_gravity(rng), limits=JointLimits.unbounded(n))


def _origin(rng: np.random.Generator) -> str:
    xyz = " ".join(f"{v:.17g}" for v in rng.uniform(-0.4, 0.4, size=3))
    rpy = " ".join(f"{v:.17g}" for v in rng.uniform(-np.pi, np.pi, size=3))
    return f'<origin xyz="{xyz}" rpy="{rpy}"/>'


def _inertial(rng: np.random.Generator) -> str:
    mass = rng.uniform(0.3, 4.0)
    box = rng.uniform(0.02, 0.4, size=3)
    ixx, iyy, izz = mass / 12 * np.array([box[1] ** 2 + box[2] ** 2, box[0] ** 2 + box[2] ** 2,
                                          box[0] ** 2 + box[1] ** 2])
    return (f'<inertial>{_origin(rng)}<mass value="{mass:.17g}"/>'
            f'<inertia ixx="{ixx:.17g}" ixy="0" ixz="0" iyy="{iyy:.17g}" iyz="0" '
            f'izz="{izz:.17g}"/></inertial>')


def random_urdf(rng: np.random.Generator, n: int, *, fixed: bool = True) -> str:
    """A random serial URDF: revolute, continuous and prismatic joints with random axes
    (aligned and unaligned), plus fixed joints carrying extra links (merged by the parser).
    With n >= 3 there is always one prismatic joint and one unaligned axis."""
    links = ['<link name="base"/>']
    joints = []
    parent = "base"
    for i in range(n):
        kind = "prismatic" if i == 1 else rng.choice(["revolute", "continuous", "prismatic"])
        aligned = i != 2 and rng.uniform() < 0.5
        axis = np.eye(3)[rng.integers(3)] if aligned else rng.standard_normal(3)
        axis = axis / np.linalg.norm(axis)
        limit = ('<limit lower="-2" upper="2" effort="50" velocity="3"/>'
                 if kind != "continuous" else '<limit effort="50" velocity="3"/>')
        child = f"link{i + 1}"
        joints.append(
            f'<joint name="j{i + 1}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{_origin(rng)}'
            f'<axis xyz="{" ".join(f"{v:.17g}" for v in axis)}"/>{limit}</joint>'
        )
        links.append(f'<link name="{child}">{_inertial(rng)}</link>')
        parent = child
        if fixed and rng.uniform() < 0.5:
            extra = f"extra{i + 1}"
            joints.append(f'<joint name="fix{i + 1}" type="fixed"><parent link="{child}"/>'
                          f'<child link="{extra}"/>{_origin(rng)}</joint>')
            links.append(f'<link name="{extra}">{_inertial(rng)}</link>')
    return f'<robot name="random">{"".join(links)}{"".join(joints)}</robot>'


def random_urdf_robot(rng: np.random.Generator, n: int, tmp_path: Path) -> tuple[Robot, str]:
    text = random_urdf(rng, n)
    path = tmp_path / f"random{rng.integers(1_000_000)}.urdf"
    path.write_text(text)
    return load_urdf(path), text


def pinocchio_from_urdf(text: str) -> pin.Model:
    return pin.buildModelFromXML(text)


def random_states(rng: np.random.Generator, n_samples: int, n: int):
    return rng.uniform(-np.pi, np.pi, (n_samples, n)), *rng.standard_normal((2, n_samples, n))


def pinocchio_q(model: pin.Model, q: np.ndarray) -> np.ndarray:
    """Our joint values -> pinocchio configuration (continuous joints take cos, sin)."""
    out = []
    for j in range(1, model.njoints):
        value = q[j - 1]
        out.extend([np.cos(value), np.sin(value)] if model.joints[j].nq == 2 else [value])
    return np.array(out)


# -- signals ------------------------------------------------------------------------------------
# A test run started as a background job of a script (`make test > log 2>&1 &`: a shell without
# job control starts it with SIGINT ignored) or under nohup (SIGHUP ignored) hands the ignored
# signals down to every child. dynid honours an ignored signal (whoever started it asked it not
# to be interrupted by that one); the tests that signal a command undo it for their child, and
# in this process for the test that interrupts itself.
SIGNALS_SENT = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def default_signals() -> None:
    """The ``preexec_fn`` of a child that a test signals: SIGINT, SIGTERM and SIGHUP at their
    default action, as a command started at a terminal has them."""
    for signum in SIGNALS_SENT:
        signal.signal(signum, signal.SIG_DFL)


@pytest.fixture
def interrupts_delivered():
    """SIGINT raises KeyboardInterrupt in this process (Python's own handler) for the test,
    even where the test run inherited it ignored; the disposition before it, after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


@pytest.fixture(scope="session")
def cluster():
    """A Dask LocalCluster of 2 worker processes (one thread each) and its client."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local, \
            distributed.Client(local) as client:
        yield client


def with_physical_margin(parameters: np.ndarray, margin: float) -> np.ndarray:
    """The link 10-vector moved along its pseudo-inertia's lowest eigenvector until its
    physical margin is ``margin`` (the lowest eigenvalue over the largest entry)."""
    j = pseudo_inertia(parameters)
    values, vectors = np.linalg.eigh(j)
    v = vectors[:, 0]
    # the largest entry changes a little with the shift: iterate to the target
    shifted = j
    for _ in range(50):
        scale = np.abs(shifted).max()
        shifted = j + (margin * scale - values[0]) * np.outer(v, v)
    out = from_pseudo_inertia(shifted)
    assert_close(physical_margin(out), margin, rtol=1e-6)
    return out


def table_row(convention: str, prismatic: bool, *, a: float, d: float, alpha: float,
              theta: float):
    """One MDH or DH row: revolute (``theta`` its joint variable, ``d`` kept) or prismatic
    (``d`` its joint variable, ``theta`` kept)."""
    if convention == "mdh":
        return (PrismaticMDH(a=a, alpha=alpha, theta=theta) if prismatic
                else RevoluteMDH(a=a, alpha=alpha, d=d))
    return (PrismaticDH(theta=theta, a=a, alpha=alpha) if prismatic
            else RevoluteDH(d=d, a=a, alpha=alpha))
