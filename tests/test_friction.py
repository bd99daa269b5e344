"""Friction models: linear ones are their regressor times their coefficients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.friction.models import (
    Arctan,
    LuGre,
    NoFriction,
    Sigmoid,
    Stribeck,
    ViscousCoulomb,
    friction_from_dict,
)
from dynid.robot import load_robot


def test_linear_models_equal_regressor_times_coefficients(rng):
    dq = rng.standard_normal((50, 3))
    for model in (ViscousCoulomb([0.1, 0.2, 0.3], [0.5, 0.4, 0.3], [0.0, -0.1, 0.1]),
                  load_robot("arm3").friction):
        y = model.regressor(dq)
        assert y.shape == (50, 3, 9)
        assert_close(y @ model.coefficients, model.torque(dq))
        assert len(model.coefficient_names()) == 9


def test_viscous_coulomb_by_hand():
    model = ViscousCoulomb([0.5], [2.0], [0.1])
    assert_close(model.torque([[-1.0], [0.0], [2.0]]), [[-2.4], [0.1], [3.1]])
    assert_close(ViscousCoulomb.from_coefficients([0.5, 2.0, 0.1], 1).coefficients,
                 model.coefficients)


def test_sigmoid_is_gaz_eq25():
    model = Sigmoid([1.0], [5.0], [0.1])
    dq = np.array([[0.0], [0.3], [-100.0]])
    expected = 1 / (1 + np.exp(-5 * (dq + 0.1))) - 1 / (1 + np.exp(-5 * 0.1))
    assert_close(model.torque(dq), expected)
    assert model.torque([[0.0]])[0, 0] == pytest.approx(0.0, abs=1e-15)
    assert np.isfinite(model.torque([[1e6], [-1e6]])).all()


def test_arctan_stiction_then_coulomb():
    model = Arctan([2.0], [-0.3], [0.0], [100.0], [10.0])
    slow = model.torque(np.linspace(0.001, 1.0, 1000)[:, None])[:, 0]
    fast = model.torque([[1000.0]])[0, 0]
    assert fast == pytest.approx(1.7, abs=0.01)  # Coulomb = stiction + (Coulomb - stiction)
    assert slow.max() > fast + 0.01  # the Stribeck hump: friction above Coulomb at low speed
    assert model.torque([[0.0]])[0, 0] == 0.0


def test_from_dict_and_errors():
    assert isinstance(friction_from_dict(None, 3), NoFriction)
    assert isinstance(friction_from_dict({"model": "none"}, 3), NoFriction)
    with pytest.raises(ValueError, match="must have 2 values per key"):
        friction_from_dict({"model": "sigmoid",
                            "parameters": {"phi1": [1.0], "phi2": [1.0], "phi3": [1.0]}}, 2)
    with pytest.raises(ValueError, match="`dq` must have shape"):
        Sigmoid([1.0], [1.0], [1.0]).torque(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="one length per joint"):
        ViscousCoulomb([1.0, 2.0], [1.0], [1.0])


def test_stribeck_is_gilbert_eq13():
    model = Stribeck(fc=[0.3], fs=[0.2], vs=[0.05], ks=[1.0], fv=[0.1])
    dq = np.array([[0.0], [0.02], [-0.5]])
    # ks = 1: Gilbert's printed exp(-|dq| ks / vs) with their vs / ks = 0.05
    expected = np.sign(dq) * (0.3 + 0.2 * np.exp(-np.abs(dq) / 0.05)) + 0.1 * dq
    assert_close(model.torque(dq), expected)
    assert model.torque([[1e-9]])[0, 0] == pytest.approx(0.5, abs=1e-6)  # stiction at rest
    with pytest.raises(ValueError, match="`vs` and `ks` must be > 0"):
        Stribeck(fc=[0.3], fs=[0.2], vs=[0.0], ks=[1.0], fv=[0.1])


def test_per_joint_table_round_trips():
    for model in (Stribeck([0.3, 0.4], [0.2, 0.1], [0.05, 0.1], [1.0, 2.0], [0.1, 0.2]),
                  Sigmoid([1.0, 2.0], [5.0, 6.0], [0.1, 0.0]),
                  load_robot("panda").friction):
        table = model.per_joint()
        assert table.shape == (model.n_joints, len(model.field_names()))
        assert_close(model.from_per_joint(table).per_joint(), table, atol=0.0)
        assert type(model.from_per_joint(table)) is type(model)
        assert set(model.KINDS) == set(model.field_names())


def test_lugre_state_is_stable_and_accurate_at_1khz():
    """Stiff bristles (sigma0 = 1e5 N m/rad: explicit Euler at 1 ms diverges) integrate stably
    at 1 kHz with the exact exponential step; a soft joint matches a 1 MHz Euler reference."""
    model = LuGre(sigma0=[1e3, 1e5], sigma1=[1.0, 30.0], sigma2=[0.1, 0.1], fc=[0.3, 0.3],
                  fs=[0.5, 0.5], vs=[0.05, 0.05])
    t = np.arange(0.0, 2.0, 1e-3)
    dq = np.repeat(0.2 * np.sin(2 * np.pi * t)[:, None], 2, axis=1)
    z = model.states_along(t, dq)
    assert np.isfinite(z).all()
    assert (np.abs(z) <= 0.5 / np.array([1e3, 1e5]) * (1 + 1e-12)).all()  # |z| <= fs / sigma0
    fine_t = np.arange(0.0, 2.0, 1e-6)
    fine_dq = 0.2 * np.sin(2 * np.pi * fine_t)
    level = 0.3 + 0.2 * np.exp(-((fine_dq / 0.05) ** 2))
    reference, state = np.empty(fine_t.size), 0.0
    for k in range(fine_t.size):
        reference[k] = state
        state += 1e-6 * (fine_dq[k] - 1e3 * abs(fine_dq[k]) * state / level[k])
    picked = reference[np.round(t / 1e-6).astype(int)]
    assert np.abs(z[:, 0] - picked).max() < 1e-3 * np.abs(reference).max()
    # away from reversals the state follows its steady state (lagging by ~ s / (sigma0 |dq|)):
    # close to the static curve
    moving = np.abs(dq[:, 0]) > 0.1
    assert_close(model.torque_along(t, dq)[moving], model.torque(dq)[moving], rtol=1e-2)
    with pytest.raises(ValueError, match="`t` must be strictly increasing"):
        model.states_along(t[::-1], dq)


def test_lugre_without_coulomb_level_stays_finite_at_high_speed():
    """fc = 0 (allowed): the Stribeck curve underflows far beyond vs; no division by zero."""
    model = LuGre(sigma0=[1e3], sigma1=[1.0], sigma2=[0.1], fc=[0.0], fs=[0.5], vs=[0.02])
    t = np.linspace(0.0, 1.0, 1001)
    dq = np.linspace(-3.0, 3.0, 1001)[:, None]
    assert np.isfinite(model.torque_along(t, dq)).all()
    assert np.isfinite(model.torque(dq)).all()
