"""The pieces of the NLS fit (``dynid.identification.nonlinear.nls``): the closed-form derivatives
of the link parameters, the bounded Levenberg-Marquardt solver and its stopping word, the start
at the linear friction, and the fit never ending above the consistent linear solution."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.excitation.optimize import random_fourier
from dynid.friction.fit import line_start
from dynid.friction.models import ViscousCoulomb
from dynid.identification.constrained.cls import identify_constrained
from dynid.identification.nonlinear import nls
from dynid.identification.nonlinear.nls import identify_nls
from dynid.metrics import rmse
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop


def _random_chi(rng, n=4):
    chi = rng.normal(scale=0.2, size=(n, 10))
    chi[:, 0] = rng.uniform(0.3, 4.0, n)
    return chi


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_link_parameter_slope_matches_central_differences(seed):
    chi = _random_chi(np.random.default_rng(seed))
    parameters, slope = nls._link_parameters_and_slope(chi)
    np.testing.assert_array_equal(parameters, nls._link_parameters(chi))
    numeric = np.empty_like(slope)
    for u in range(10):
        h = 1e-6
        up, down = chi.copy(), chi.copy()
        up[:, u] += h
        down[:, u] -= h
        numeric[:, :, u] = (nls._link_parameters(up) - nls._link_parameters(down)) / (2 * h)
    np.testing.assert_allclose(slope, numeric, rtol=1e-7, atol=1e-8)


def test_link_second_is_the_positive_part_of_the_weighted_hessian():
    rng = np.random.default_rng(3)
    chi = _random_chi(rng, n=3)
    weights = rng.normal(size=(3, 10))
    second = nls._link_second(chi, weights)
    # the Hessian of w . pi(chi) by central differences of the function itself
    hessian = np.empty((3, 10, 10))
    h = 1e-4
    def value(u, v, du, dv):
        moved = chi.copy()
        moved[:, u] += du
        moved[:, v] += dv
        return np.einsum("ki,ki->k", weights, nls._link_parameters(moved))

    for u in range(10):
        for v in range(10):
            hessian[:, u, v] = (value(u, v, h, h) - value(u, v, h, -h) - value(u, v, -h, h)
                                + value(u, v, -h, -h)) / (4 * h * h)
    values, vectors = np.linalg.eigh(hessian)
    positive = vectors @ (np.maximum(values, 0)[..., None] * np.swapaxes(vectors, 1, 2))
    np.testing.assert_allclose(second, positive, rtol=1e-5, atol=1e-6)
    assert (np.linalg.eigvalsh(second) >= -1e-10).all()


def _quadratic(center, matrix):
    """A cost ``|L (x - center)|^2`` with its exact model, for the solver alone."""
    def evaluate(x, normal):
        away = x - center
        cost = float(away @ matrix @ away)
        return (cost, matrix @ away, matrix) if normal else cost
    return evaluate


def test_levenberg_marquardt_stops_on_a_tolerance_and_respects_bounds():
    rng = np.random.default_rng(5)
    factor = rng.normal(size=(6, 4))
    matrix = factor.T @ factor
    center = np.array([1.0, -2.0, 0.5, 3.0])
    lower = np.array([-np.inf, -1.0, -np.inf, -np.inf])  # the second unknown held at -1
    upper = np.full(4, np.inf)
    solution = nls._levenberg_marquardt(_quadratic(center, matrix), np.zeros(4), lower, upper,
                                        100)
    assert solution.success and solution.status.startswith("converged: ")
    assert solution.x[1] == -1.0
    # the optimum over the others with x1 on its bound
    free = [0, 2, 3]
    expected = center[free] - np.linalg.solve(matrix[np.ix_(free, free)],
                                              matrix[free, 1] * (-1.0 - center[1]))
    np.testing.assert_allclose(solution.x[free], expected, rtol=1e-6, atol=1e-8)
    assert solution.cost <= solution.start_cost


def test_levenberg_marquardt_says_when_the_budget_ran_out():
    def rosenbrock(x, normal):
        r = np.array([10 * (x[1] - x[0] ** 2), 1 - x[0]])
        jac = np.array([[-20 * x[0], 10.0], [-1.0, 0.0]])
        return (float(r @ r), jac.T @ r, jac.T @ jac) if normal else float(r @ r)
    lower, upper = np.full(2, -np.inf), np.full(2, np.inf)
    short = nls._levenberg_marquardt(rosenbrock, np.array([-1.2, 1.0]), lower, upper, 2)
    assert not short.success and "budget of 2 iterations" in short.status
    full = nls._levenberg_marquardt(rosenbrock, np.array([-1.2, 1.0]), lower, upper, 500)
    assert full.success
    np.testing.assert_allclose(full.x, [1.0, 1.0], atol=1e-6)


def test_line_start_reproduces_the_linear_friction():
    rng = np.random.default_rng(7)
    dq = rng.normal(scale=0.5, size=(300, 3))
    line = np.array([[0.2, 0.5, 0.05], [0.1, 0.3, -0.1], [0.0, 0.8, 0.2]])  # fv, fc, fo
    expected = ViscousCoulomb(*line.T).torque(dq)
    for name in ("viscous-coulomb", "stribeck", "lugre"):  # LuGre: in steady state
        np.testing.assert_allclose(line_start(name, line, dq).torque(dq), expected,
                                   rtol=1e-12, atol=1e-12)
    shaped = line_start("stribeck", line, dq, stiction=0.5)
    np.testing.assert_allclose(shaped.fs, 0.5 * line[:, 1])
    with pytest.raises(ValueError, match=r"`line` must be finite with shape \(3, 3\)"):
        line_start("stribeck", line[:2], dq)
    with pytest.raises(ValueError, match="`stiction` must be >= 0"):
        line_start("lugre", line, dq, stiction=-1.0)


@pytest.fixture(scope="module")
def noisy_panda():
    robot = load_robot("panda")
    data = simulate_open_loop(robot, random_fourier(robot, seed=3), duration=15.0, rate=100.0,
                              sensor=SensorModel(torque_noise_std=0.05), seed=3)
    return robot, data


@pytest.mark.parametrize("friction", ["stribeck", "lugre"])
def test_nls_never_ends_above_the_linear_start(noisy_panda, friction):
    """The cls3 + viscous-Coulomb fit is where NLS starts (Stribeck and LuGre can reproduce
    it): on the samples fitted, the NLS sum of squares is at most the linear one's, and the
    fit stops on a tolerance."""
    robot, data = noisy_panda
    linear = identify_constrained(robot, data, method="cls3",
                                  friction=ViscousCoulomb.zeros(robot.n_joints))
    linear_sum = float(np.sum(rmse(data.tau, linear.model.predict(data.q, data.dq,
                                                                    data.ddq)) ** 2))
    result = identify_nls(robot, data, friction=friction)
    assert result.success, result.status
    assert result.n_samples_fitted == data.n_samples
    assert float(np.sum(result.rmse**2)) <= linear_sum * (1 + 1e-9)
    assert result.consistency.consistent and result.consistency.within_bounds
    assert result.model.report["start"].startswith("cls3")


def test_an_explicit_start_is_used(noisy_panda):
    robot, data = noisy_panda
    cad = load_robot("panda-cad").parameters
    result = identify_nls(robot, data, friction="viscous-coulomb", start=cad, max_iterations=1)
    # one iteration from the CAD body: still near it, far from the cls3 start
    assert not result.success and "budget of 1 iterations" in result.status
    assert np.abs(result.parameters[:, 0] - cad[:, 0]).max() < 0.5
    with pytest.raises(ValueError, match="`max_iterations` must be an integer >= 1"):
        identify_nls(robot, data, max_iterations=0)
