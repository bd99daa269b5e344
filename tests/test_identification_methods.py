"""The one estimator contract: every registered method, called through ``Method.fit`` on a
``Problem``, returns an ``Estimate`` whose model predicts the truth's torques; a problem that
lacks what a method needs is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.excitation import random_fourier
from dynid.identification import (
    FAMILIES,
    IDENTIFICATION_METHODS,
    Estimate,
    Method,
    Problem,
    find_method,
)
from dynid.robot import load_robot
from dynid.simulate import SensorModel, simulate_open_loop


@pytest.fixture(scope="module")
def arm3_log():
    robot = load_robot("arm3")
    log = simulate_open_loop(robot, random_fourier(robot, seed=3), duration=4.0, rate=200.0,
                             sensor=SensorModel(torque_noise_std=1e-3))
    return robot, log


def _direct_methods():
    """The methods that fit a whole log at once from it alone (accelerations and efforts);
    NLS is left to its own tests (its friction is not the log's), the recursive methods are
    checked below."""
    return [name for name, m in IDENTIFICATION_METHODS.items()
            if m.needs <= {"ddq", "effort"} and m.family in ("linear", "constrained")]


@pytest.mark.parametrize("name", _direct_methods())
def test_every_direct_method_predicts_torques_to_the_noise(arm3_log, name):
    robot, log = arm3_log
    columns = find_method("ols").fit(Problem(robot, log)).model.coefficients.size
    options = ({"regressor_noise": np.full(columns, 1e-9), "torque_noise": 1e-3}
               if name == "ml" else {"alpha": 1e-9} if name.endswith(("ridge", "net")) else {})
    estimate = find_method(name).fit(Problem(robot, log), **options)
    assert isinstance(estimate, Estimate)
    assert estimate.method == name and estimate.converged
    assert estimate.seconds > 0
    predicted = estimate.model.predict(log.q, log.dq, log.ddq)
    error = np.linalg.norm(predicted - log.tau) / np.linalg.norm(log.tau)
    assert error < 2e-3, f"{name}: relative torque error {error:.2e}"
    if IDENTIFICATION_METHODS[name].consistent:
        assert estimate.parameters is not None and estimate.parameters.shape == (3, 10)


def test_registry_lists_families_and_citations():
    for name, m in IDENTIFICATION_METHODS.items():
        assert m.citation, name  # the name and the family are checked where a Method is made


def test_a_missing_need_is_refused_by_name(arm3_log):
    robot, log = arm3_log
    no_ddq = log.__class__(t=log.t, q=log.q, dq=log.dq, tau=log.tau)
    with pytest.raises(ValueError, match=r"'ols' needs measured or differentiated accel"):
        find_method("ols").fit(Problem(robot, no_ddq))
    needy = Method("needy", "simulation", False, frozenset({"reference", "controller"}),
                   "test", lambda problem: None)
    with pytest.raises(ValueError, match=r"reference trajectory of each log.*controller"):
        needy.fit(Problem(robot, log))


def test_unknown_names_and_bad_problems_are_refused(arm3_log):
    robot, log = arm3_log
    with pytest.raises(ValueError, match="unknown method 'olss': choose among"):
        find_method("olss")
    with pytest.raises(ValueError, match=r"`start` must be finite link parameters of shape "
                                         r"\(3, 10\)"):
        Problem(robot, log, start=np.zeros((2, 10)))
    with pytest.raises(ValueError, match="`start` must be finite"):
        Problem(robot, log, start=np.full((3, 10), np.nan))
    with pytest.raises(ValueError, match="`references` must be one for all logs or one per log"):
        Problem(robot, [log, log], references=[None, None, None])
    with pytest.raises(ValueError, match="`logs` must be a Dataset"):
        Problem(robot, [])
    with pytest.raises(ValueError, match="`family` must be one of"):
        Method("x", "magic", False, frozenset(), "", lambda problem: None)
    with pytest.raises(ValueError, match="`needs` must be among"):
        Method("x", "linear", False, frozenset({"telepathy"}), "", lambda problem: None)


def test_every_family_is_registered():
    assert {m.family for m in IDENTIFICATION_METHODS.values()} == set(FAMILIES)
