"""Friction models: linear ones are their regressor times their coefficients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.friction import Arctan, NoFriction, Sigmoid, ViscousCoulomb, friction_from_dict
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
