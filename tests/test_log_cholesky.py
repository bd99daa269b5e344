"""Log-Cholesky least squares inside the bounds
(``dynid.identification.constrained.log_cholesky``): every coordinate vector is a consistent
body inside the CoM boxes, mass bounds and total-mass range; the analytic Jacobian; and on twin
data with bounds tight around the truth, where the same fit without them leaves the boxes, the
method stays inside and fits as well as CLS-3."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification.constrained.cls import identify_constrained
from dynid.identification.constrained.log_cholesky import BoundedLogCholesky, fit_log_cholesky
from dynid.model.consistency import check_consistency
from dynid.robot import load_robot
from dynid.robot.bounds import LinkBounds, ParameterBounds
from dynid.robot.inertia import MASS, from_com, pseudo_inertia, to_com
from dynid.simulate.twin import SensorModel, simulate_open_loop


def _odd_bounds() -> ParameterBounds:
    """Three links: a total-mass range narrower than the links' sum, one link of fixed mass,
    a CoM box flat in z, a box off the origin."""
    return ParameterBounds((
        LinkBounds(mass=(0.0, 10.0), com_lower=[-0.05, -0.05, -0.4], com_upper=[0.05, 0.05, 0.05]),
        LinkBounds(mass=(2.0, 2.0), com_lower=[-0.1, 0.0, 0.02], com_upper=[0.1, 0.2, 0.02]),
        LinkBounds(mass=(0.5, 3.0), com_lower=[0.3, 0.1, 0.1], com_upper=[0.31, 0.2, 0.3])),
        total_mass=(4.0, 6.0))


def _free_bounds() -> ParameterBounds:
    """The same links without a total-mass range."""
    odd = _odd_bounds()
    return ParameterBounds(odd.links)


BOUNDS = {"panda": load_robot("panda").bounds, "odd": _odd_bounds(), "free": _free_bounds()}


@pytest.mark.parametrize("name", BOUNDS)
@pytest.mark.parametrize("spread", [0.1, 1.0, 6.0])  # the sigmoids and exps saturate at 6
def test_every_coordinate_vector_is_a_consistent_body_inside_the_bounds(name, spread):
    bounds = BOUNDS[name]
    coordinates = BoundedLogCholesky.from_bounds(bounds)
    assert (coordinates.total is None) == (bounds.total_mass is None)
    rng = np.random.default_rng(7)
    for _ in range(20):
        parameters = coordinates.parameters(spread * rng.standard_normal(coordinates.size))
        if spread <= 1.0:  # further out, bodies thin as e^-18 m are positive up to round-off
            assert np.linalg.eigvalsh(pseudo_inertia(parameters))[:, 0].min() > 0
        report = check_consistency(parameters, bounds)
        assert report.consistent and report.within_bounds, report.lines()
        masses = parameters[:, MASS]
        for link, mass in zip(bounds.links, masses, strict=True):
            assert link.mass[0] <= mass <= link.mass[1]
        if bounds.total_mass is not None:
            low, high = bounds.total_mass
            assert low * (1 - 1e-12) <= masses.sum() <= high * (1 + 1e-12)


@pytest.mark.parametrize("name", BOUNDS)
def test_coordinates_of_an_inner_body_give_it_back(name):
    bounds = BOUNDS[name]
    coordinates = BoundedLogCholesky.from_bounds(bounds)
    parameters = coordinates.parameters(
        np.random.default_rng(3).uniform(-2, 2, coordinates.size))
    again = coordinates.parameters(coordinates.coordinates(parameters))
    np.testing.assert_allclose(again, parameters, rtol=1e-9, atol=1e-12)


def test_a_start_on_the_bounds_is_drawn_inside():
    """CLS-3's optimum lies on the bounds: a massless link, a CoM on its box's face, a flat
    body (singular covariance), the total mass at its limit. The start is a consistent body
    strictly inside, close to it."""
    bounds = _odd_bounds()
    coordinates = BoundedLogCholesky.from_bounds(bounds)
    flat = from_com(2.0, [0.1, 0.2, 0.02], [0.01, 0.0, 0.0, 0.02, 0.0, 0.03])  # I_xx + I_yy = I_zz
    start = np.stack([np.zeros(10), flat, from_com(3.0, [0.31, 0.15, 0.2], np.eye(3) * 1e-3)])
    theta = coordinates.coordinates(start)
    assert np.isfinite(theta).all()
    parameters = coordinates.parameters(theta)
    assert np.linalg.eigvalsh(pseudo_inertia(parameters))[:, 0].min() > 0
    report = check_consistency(parameters, bounds)
    assert report.consistent and report.within_bounds
    np.testing.assert_allclose(parameters[1:], start[1:], rtol=0.0, atol=0.01)


@pytest.mark.parametrize("name", BOUNDS)
def test_jacobian_matches_central_differences(name):
    coordinates = BoundedLogCholesky.from_bounds(BOUNDS[name])
    theta = np.random.default_rng(5).uniform(-2, 2, coordinates.size)
    analytic = coordinates.jacobian(theta)
    numeric = np.empty_like(analytic)
    for k in range(theta.size):
        step = np.zeros(theta.size)
        step[k] = 1e-6
        numeric[:, k] = (coordinates.parameters(theta + step).ravel()
                         - coordinates.parameters(theta - step).ravel()) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=0.0, atol=1e-7 * np.abs(numeric).max())


def test_bounds_without_an_open_region_are_refused():
    links = _odd_bounds().links
    high = sum(link.mass[1] for link in links)
    with pytest.raises(ValueError, match="no open region"):
        BoundedLogCholesky.from_bounds(ParameterBounds(links, total_mass=(high, high + 1.0)))


def test_the_status_says_why_it_stopped():
    """A synthetic compressed problem: optimal with room to converge; with one evaluation the
    status names scipy's reason."""
    bounds = _odd_bounds()
    rng = np.random.default_rng(2)
    operator = rng.standard_normal((40, 33))  # 30 link parameters and 3 friction coefficients
    truth = BoundedLogCholesky.from_bounds(bounds).parameters(rng.standard_normal(31))
    z = operator @ np.concatenate([truth.ravel(), [0.1, 0.2, 0.3]])
    kwargs = {"scale": np.ones(30), "prior": truth, "weight": 1e-3}
    start = truth * 1.02
    parameters, friction, status = fit_log_cholesky(operator, z, start, np.zeros(3), bounds,
                                                    **kwargs)
    assert status == "optimal"
    np.testing.assert_allclose(parameters, truth, atol=1e-5)
    np.testing.assert_allclose(friction, [0.1, 0.2, 0.3], atol=1e-5)
    _, _, status = fit_log_cholesky(operator, z, start, np.zeros(3), bounds, max_nfev=1,
                                    **kwargs)
    assert status.startswith("stopped after 1 evaluations: The maximum number")


def _tight_bounds(robot, mass=0.15, com=0.01, total=0.02) -> ParameterBounds:
    """Masses within +-15 %, CoMs within +-1 cm of the truth, the total within +-2 %."""
    masses, coms, _ = to_com(robot.parameters)
    return ParameterBounds(
        tuple(LinkBounds(mass=((1 - mass) * m, (1 + mass) * m), com_lower=c - com,
                         com_upper=c + com) for m, c in zip(masses, coms, strict=True)),
        total_mass=((1 - total) * masses.sum(), (1 + total) * masses.sum()))


def test_stays_inside_tight_bounds_where_the_fit_leaves_them():
    """Short, slow, noisy twin data and the CAD prior (2.5 kg for a 0.65 kg link 2): with the
    wide bounds of the robot file the fit leaves the boxes around the truth; with those boxes
    as the bounds log-Cholesky stays physically consistent inside them, and fits as well as
    CLS-3 on the same problem (whose global optimum it approaches from inside). The times of
    both are printed: pytest -s shows them."""
    friction = ViscousCoulomb(np.full(7, 0.1), np.full(7, 0.2), np.full(7, -0.05))
    truth = load_robot("panda").with_friction(friction)
    data = simulate_open_loop(truth, random_fourier(truth, seed=5, margin=0.3), duration=10.0,
                              rate=100.0, sensor=SensorModel(torque_noise_std=0.5), seed=1)
    cad = load_robot("panda-cad").parameters
    tight = _tight_bounds(truth)
    wide = identify_constrained(truth, data, method="log-cholesky", prior=cad)
    assert wide.consistency.consistent
    assert not check_consistency(wide.parameters, tight).within_bounds
    cls3 = identify_constrained(truth, data, method="cls3", bounds=tight, prior=cad)
    result = identify_constrained(truth, data, method="log-cholesky", bounds=tight, prior=cad)
    print(f"\ntight bounds: CLS-3 {cls3.seconds:.2f} s, {cls3.relative_error_percent:.4f} %; "
          f"log-Cholesky {result.seconds:.2f} s (CLS-3 start included), "
          f"{result.relative_error_percent:.4f} %, {result.status}")
    assert result.success, result.status
    report = check_consistency(result.parameters, tight)
    assert report.consistent and report.within_bounds, report.lines()
    assert np.linalg.eigvalsh(pseudo_inertia(result.parameters))[:, 0].min() > 0
    assert result.relative_error_percent <= 1.001 * cls3.relative_error_percent
