"""Stribeck and LuGre with a constant offset ``fo`` per joint (issue 12, part 6): fitted with
the other parameters, it makes the friction comparison fair on torque sensors with an offset
(the sigmoid's ``phi3`` otherwise wins it by absorbing the offset); old files without ``fo``
still load."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.excitation.optimize import random_fourier
from dynid.friction.fit import fit_friction
from dynid.friction.models import LuGre, NoFriction, Stribeck, friction_from_dict
from dynid.identification.linear.idim import identify
from dynid.identification.nonlinear.nls import compare_friction
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop

NOISE = 0.02  # N m
STRIBECK = Stribeck(fc=[0.3, 0.5], fs=[0.2, 0.15], vs=[0.05, 0.1], ks=[1.0, 1.5],
                    fv=[0.1, 0.25], fo=[0.15, -0.2])
LUGRE = LuGre(sigma0=[800.0, 1500.0], sigma1=[1.0, 2.0], sigma2=[0.1, 0.25], fc=[0.3, 0.5],
              fs=[0.5, 0.7], vs=[0.05, 0.1], fo=[0.15, -0.2])


@pytest.fixture(scope="module")
def motion():
    """Two joints' velocities (sums of sines through zero, both signs), 8 s at 500 Hz."""
    t = np.arange(0.0, 8.0, 2e-3)
    dq = np.stack([0.6 * np.sin(1.3 * t) + 0.3 * np.sin(3.7 * t + 0.4),
                   0.8 * np.sin(0.9 * t + 1.0) + 0.2 * np.sin(5.1 * t)], axis=1)
    return t, dq


def _noisy(model, t, dq, seed=0):
    noise = NOISE * np.random.default_rng(seed).standard_normal(dq.shape)
    return model.torque_along(t, dq) + noise


def test_offset_adds_a_constant_torque(motion):
    t, dq = motion
    for model in (STRIBECK, LUGRE):
        plain = model.from_per_joint(model.per_joint()[:, :-1])  # fo left out: zeros
        assert_close(plain.fo, np.zeros(2), atol=0.0)
        assert_close(model.torque(dq) - plain.torque(dq), np.broadcast_to(model.fo, dq.shape))
        assert_close(model.torque_along(t, dq) - plain.torque_along(t, dq),
                     np.broadcast_to(model.fo, dq.shape))
    z = np.full(2, 1e-4)  # the state does not see the offset
    assert_close(LUGRE.state_derivative(dq[:5], z), (LUGRE.from_per_joint(
        LUGRE.per_joint()[:, :-1])).state_derivative(dq[:5], z), atol=0.0)


@pytest.mark.parametrize(("truth", "tolerance"), [(STRIBECK, 0.15), (LUGRE, 0.05)],
                         ids=["stribeck", "lugre"])
def test_fit_recovers_the_offset_and_the_rest(motion, truth, tolerance):
    t, dq = motion
    fit = fit_friction(truth.name, dq, _noisy(truth, t, dq), t=t if truth.stateful else None)
    assert fit.success.all(), fit.messages
    names = truth.field_names()
    assert names[-1] == "fo" and truth.KINDS["fo"] == "free"
    # offsets to within a few noise standard errors: absolute, as they may be zero
    assert_close(fit.model.fo, truth.fo, atol=5e-3)
    errors = np.abs(fit.model.per_joint() / truth.per_joint() - 1)
    if truth.stateful:  # bristle damping shows only around the few reversals
        errors = np.delete(errors, names.index("sigma1"), axis=1)
    assert errors.max() < tolerance, dict(zip(names, errors.max(axis=0), strict=False))
    assert fit.rmse == pytest.approx(np.full(2, NOISE), rel=0.05)  # down to the noise


def test_an_offset_free_start_is_fitted_its_offset(motion):
    """A start model written before the offset (fo left out, zeros) gets it fitted: "free"."""
    t, dq = motion
    start = Stribeck(fc=[0.2, 0.2], fs=[0.1, 0.1], vs=[0.05, 0.05], ks=[1.0, 1.0],
                     fv=[0.1, 0.1])
    fit = fit_friction(start, dq, _noisy(STRIBECK, t, dq))
    assert_close(fit.model.fo, STRIBECK.fo, atol=5e-3)


def test_stribeck_with_offset_beats_the_sigmoid_on_a_biased_sensor():
    """arm3 with Stribeck friction (no offset of its own) logged by a torque sensor with a
    constant bias per joint; each model fitted on the residual of the exact rigid body (so
    that only the friction models are compared): Stribeck's offset takes the bias, and its
    validation error is the noise, below the sigmoid's."""
    truth = load_robot("arm3").with_friction(Stribeck(
        fc=[0.4, 0.3, 0.2], fs=[0.2, 0.15, 0.1], vs=[0.05, 0.05, 0.1], ks=[1.0, 1.0, 1.0],
        fv=[0.3, 0.2, 0.1]))
    bias = np.array([0.3, -0.25, 0.2])
    sensor = SensorModel(torque_noise_std=NOISE, torque_bias=bias)
    data, check = (simulate_open_loop(truth, random_fourier(truth, seed=seed), duration=10.0,
                                      rate=200.0, sensor=sensor, seed=seed) for seed in (1, 2))
    body = truth.with_friction(NoFriction(3))
    exact = simulate_open_loop(body, random_fourier(truth, seed=3), duration=10.0, rate=200.0)
    rigid = identify(body, exact, friction=NoFriction(3))
    table = compare_friction(truth, data, check, models=("none", "sigmoid", "stribeck"),
                             method="residual", rigid=rigid)
    none, sigmoid, stribeck = table.rmse_validation.mean(axis=1)
    assert stribeck <= sigmoid < none
    assert stribeck < 0.5 * sigmoid  # the sigmoid has no viscous term
    assert table.rmse_validation[2] == pytest.approx(np.full(3, NOISE), rel=0.1)  # the noise
    assert_close(table.fits[2].model.fo, bias, atol=5e-3)


def test_old_dict_without_offset_loads_and_new_dicts_round_trip():
    for model in (STRIBECK, LUGRE):
        spec = model.to_dict()
        assert spec["parameters"]["fo"] == model.fo.tolist()  # written now: with the offset
        back = friction_from_dict(spec, 2)
        assert type(back) is type(model)
        assert_close(back.per_joint(), model.per_joint(), atol=0.0)
        old = {"model": spec["model"],
               "parameters": {k: v for k, v in spec["parameters"].items() if k != "fo"}}
        loaded = friction_from_dict(old, 2)
        assert_close(loaded.fo, np.zeros(2), atol=0.0)
        assert_close(loaded.per_joint()[:, :-1], model.per_joint()[:, :-1], atol=0.0)


def test_bad_offsets_are_named():
    spec = STRIBECK.to_dict()
    with pytest.raises(ValueError, match=r"`friction.parameters` for model 'stribeck' must "
                                         r"have keys .*fo optional"):
        friction_from_dict({"model": "stribeck",
                            "parameters": {**spec["parameters"], "offset": [0.0, 0.0]}}, 2)
    with pytest.raises(ValueError, match=r"`friction.parameters` for model 'lugre'"):
        friction_from_dict({"model": "lugre", "parameters": {"fo": [0.0, 0.0]}}, 2)
    with pytest.raises(ValueError, match=r"`friction.parameters.fo` must be a list"):
        friction_from_dict({"model": "stribeck",
                            "parameters": {**spec["parameters"], "fo": None}}, 2)
    with pytest.raises(ValueError, match=r"`stribeck.fo`"):
        friction_from_dict({"model": "stribeck",
                            "parameters": {**spec["parameters"], "fo": [0.0, np.nan]}}, 2)
    with pytest.raises(ValueError, match="one length per joint"):
        LuGre(sigma0=[1e3], sigma1=[1.0], sigma2=[0.1], fc=[0.3], fs=[0.5], vs=[0.05],
              fo=[0.0, 0.1])
