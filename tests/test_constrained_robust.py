"""Physically consistent IRLS, ridge and elastic net (CLS-3 with the estimators' weights or
penalty): consistent, equal to the unconstrained estimate when the truth is well inside the
constraints, robust to spikes where CLS-3 is not; the contract; bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dynid.excitation.optimize import random_fourier
from dynid.identification.constrained.cls import identify_constrained
from dynid.identification.constrained.robust import METHODS, identify_consistent
from dynid.identification.estimate import Problem
from dynid.identification.linear.idim import identify
from dynid.identification.linear.regularised import ElasticNet, Ridge
from dynid.identification.linear.robust import IRLS, TLS
from dynid.model.consistency import check_consistency
from dynid.robot import load_robot
from dynid.robot.inertia import from_com, to_com
from dynid.simulate.twin import SensorModel, simulate_open_loop


@pytest.fixture(scope="module")
def inside():
    """arm3 with thick links (its own are rods, on the triangle inequality's edge): every
    constraint holds with room, and a rich, lightly noisy log."""
    robot = load_robot("arm3")
    com = np.array([to_com(link)[1] for link in robot.parameters])
    inertia = np.array([[0.008, 0, 0, 0.005, 0, 0.008], [0.006, 0, 0, 0.02, 0, 0.02],
                        [0.006, 0, 0, 0.02, 0, 0.02]])
    truth = robot.with_parameters(from_com(np.ones(3), com, inertia))
    assert check_consistency(truth.parameters, truth.bounds).consistent
    log = simulate_open_loop(truth, random_fourier(truth, seed=3), duration=10.0, rate=200.0,
                             sensor=SensorModel(torque_noise_std=0.02), seed=1)
    return truth, log


@pytest.mark.parametrize("make", [lambda: Ridge(alpha=1.0),
                                  lambda: ElasticNet(alpha=1.0, l1_ratio=0.5),
                                  lambda: IRLS(loss="huber"), lambda: IRLS(loss="tukey")],
                         ids=["ridge", "elastic-net", "irls-huber", "irls-tukey"])
def test_consistent_and_the_unconstrained_estimate_inside_the_constraints(inside, make):
    truth, log = inside
    result = identify_consistent(truth, log, estimator=make())
    assert result.success and result.consistency.consistent
    assert check_consistency(result.parameters, truth.bounds).consistent
    unconstrained = identify(truth, log, estimator=make())
    yardstick = identify(truth, log).std  # OLS's: the elastic net's zeros have std 0
    difference = np.abs(result.model.coefficients - unconstrained.coefficients) / yardstick
    assert difference.max() < 0.1, difference.max()  # Clarabel's precision: ~1e-7 objective
    estimator = make()
    if not isinstance(estimator, IRLS):  # the penalised objective: the same minimum
        w = unconstrained.base_regressor(log.q, log.dq, log.ddq)
        w, y = w.reshape(-1, w.shape[-1]), np.asarray(log.tau).ravel()
        alpha, l1 = estimator.alpha, estimator.l1_ratio

        def objective(x):
            return (0.5 * np.sum((w @ x - y) ** 2)
                    + alpha * (l1 * np.abs(x).sum() + 0.5 * (1 - l1) * x @ x))

        least = objective(unconstrained.coefficients)
        assert least <= objective(result.model.coefficients) <= least * (1 + 1e-5)
    assert result.method == f"pc-{make().name}"
    assert result.model.report["method"] == result.method


def test_pc_irls_ignores_spikes_that_pull_cls3(inside):
    truth, log = inside
    rng = np.random.default_rng(11)
    tau = np.asarray(log.tau).copy()
    mask = rng.random(tau.shape) < 0.05
    tau[mask] += rng.choice([-1.0, 1.0], mask.sum()) * rng.uniform(2.0, 5.0, mask.sum())
    spiked = dataclasses.replace(log, tau=tau)
    clean = identify_constrained(truth, log, weight=0.0).model.coefficients
    cls3 = identify_constrained(truth, spiked, weight=0.0).model.coefficients
    robust = identify_consistent(truth, spiked, estimator=IRLS(loss="tukey"))
    assert robust.consistency.consistent
    assert robust.model.report["rejected"] == [int(k) for k in mask.sum(axis=0)]
    assert (np.linalg.norm(robust.model.coefficients - clean)
            < 0.2 * np.linalg.norm(cls3 - clean))


def test_methods_follow_the_contract(inside):
    truth, log = inside
    names = {method.name: method for method in METHODS}
    assert set(names) == {"pc-irls-huber", "pc-irls-tukey", "pc-ridge", "pc-elastic-net"}
    assert all(m.family == "constrained" and m.consistent for m in METHODS)
    estimate = names["pc-ridge"].fit(Problem(truth, (log,)), alpha=10.0)
    assert estimate.converged and estimate.parameters.shape == (3, 10)
    assert estimate.details["consistent"]


def test_bad_inputs_name_the_argument(inside):
    truth, log = inside
    with pytest.raises(ValueError, match=r"`estimator`.*TLS"):
        identify_consistent(truth, log, estimator=TLS())
    with pytest.raises(ValueError, match="`alpha`"):
        identify_consistent(truth, log, estimator=Ridge(alpha=-1.0))
    with pytest.raises(ValueError, match="`l1_ratio`"):
        identify_consistent(truth, log, estimator=ElasticNet(l1_ratio=2.0))
    with pytest.raises(ValueError, match="`loss`"):
        identify_consistent(truth, log, estimator=IRLS(loss="l1"))
    with pytest.raises(ValueError, match="`weight`"):
        identify_consistent(truth, log, estimator=Ridge(), weight=-1.0)


def test_a_problem_compiled_once_solves_new_data_as_a_fresh_one(inside):
    """PC-IRLS and PC-DIDIM solve one CLS-3 problem on new rows again and again: kept in
    ``reuse``, it is compiled once and each solve only sets the data and the prior — with the
    solution a freshly built problem gives, and a prior that moves (weight > 0) followed."""
    from dynid.identification._stream import fold_logs
    from dynid.identification.constrained.cls import _convex, _Problem, checked_setup
    from dynid.identification.retrieval.retrieve import parameter_scale

    truth, log = inside
    bounds, _, prior = checked_setup(truth, None, None, None)
    template = identify(truth, log)
    problem = _Problem(robot=truth, base=template.base, n_deviations=0, bounds=bounds,
                       prior=prior, regulariser="euclidean", method="cls3", n_rotor=0)
    stacked = fold_logs(template, [log], 0).stacked()
    operator = stacked[:-1, :-1] @ template.base.regrouping
    z = stacked[:-1, -1]
    scale = parameter_scale(bounds)
    reuse: dict = {}
    compiled = None
    rng = np.random.default_rng(0)
    for k, weight in enumerate((0.0, 0.0, 0.3, 0.3)):
        rows = operator * (1 + 0.05 * rng.standard_normal(operator.shape[0]))[:, None]
        moved = dataclasses.replace(problem, prior=prior * (1 + 0.1 * k))
        kept = _convex(moved, rows, z, scale, weight, "cls3", reuse=reuse)
        fresh = _convex(moved, rows, z, scale, weight, "cls3")
        if k in (1, 3):  # the same shape, weight and constraints: the same cvxpy problem
            assert reuse["problem"][-1] is compiled
        compiled = reuse["problem"][-1]
        # weight 0: the full parameters the data leave free are any consistent ones; what
        # the data determine (the base coefficients) is one; weight > 0: all of it is one
        if weight == 0:
            kept_, fresh_ = (template.base.regrouping @ np.concatenate([p[0].ravel(), p[1]])
                             for p in (kept, fresh))
        else:
            kept_, fresh_ = kept[0], fresh[0]
        # Clarabel stops at ~1e-8 of the objective: flat directions agree to ~1e-4
        np.testing.assert_allclose(kept_, fresh_, rtol=1e-3, atol=1e-4 * np.abs(fresh_).max())
