"""Every friction model's closed-form parameter Jacobian against central finite differences
(random models, random velocities); LuGre's along a random time series, its state's
sensitivities carried by the compiled recursion."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.friction.models import (
    Arctan,
    LuGre,
    NoFriction,
    Sigmoid,
    Stribeck,
    ViscousCoulomb,
)

N_JOINTS = 4


def _random_model(name: str, rng: np.random.Generator):
    u = lambda low, high: rng.uniform(low, high, N_JOINTS)  # noqa: E731
    if name == "viscous-coulomb":
        return ViscousCoulomb(u(-0.5, 0.5), u(-1, 1), u(-0.3, 0.3))
    if name == "arctan":
        return Arctan(u(-1, 1), u(-0.5, 0.5), u(0, 0.4), u(20, 200), u(2, 20))
    if name == "sigmoid":
        return Sigmoid(u(0.2, 2.0), u(5, 60), u(-0.05, 0.05))
    if name == "stribeck":
        return Stribeck(u(0.1, 1.0), u(0.05, 0.5), u(0.02, 0.2), u(0.5, 2.5), u(0, 0.4),
                        u(-0.2, 0.2))
    return LuGre(u(300, 3000), u(0.2, 3.0), u(0, 0.4), u(0.1, 0.8), u(0.2, 1.2), u(0.02, 0.2),
                 u(-0.2, 0.2))


def _central(function, model, step=1e-6):
    """``(*, n, k)`` by central differences on every field of every joint at once (a joint's
    torque depends on its own fields only)."""
    table = model.per_joint()
    columns = []
    for field in range(table.shape[1]):
        h = step * np.maximum(np.abs(table[:, field]), 1e-3)
        up, down = table.copy(), table.copy()
        up[:, field] += h
        down[:, field] -= h
        columns.append((function(model.from_per_joint(up))
                        - function(model.from_per_joint(down))) / (2 * h))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("name", ["viscous-coulomb", "arctan", "sigmoid", "stribeck", "lugre"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parameter_jacobian_matches_central_differences(name, seed):
    rng = np.random.default_rng(seed)
    model = _random_model(name, rng)
    # velocities spanning rest, the Stribeck region and fast motion (and exact zeros)
    dq = rng.normal(scale=0.3, size=(200, N_JOINTS)) * rng.choice([0.05, 1.0, 5.0],
                                                                  size=(200, 1))
    dq[:3] = 0.0
    exact = model.parameter_jacobian(dq)
    assert exact.shape == (200, N_JOINTS, len(model.field_names()))
    numeric = _central(lambda m: m.torque(dq), model)
    np.testing.assert_allclose(exact, numeric, rtol=1e-5, atol=1e-7)
    # odd batch shapes: (), (2, 3)
    assert model.parameter_jacobian(dq[5]).shape == exact.shape[1:]
    assert model.parameter_jacobian(dq[:6].reshape(2, 3, N_JOINTS)).shape == (
        2, 3, *exact.shape[1:])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lugre_state_sensitivities_along_a_time_series(seed):
    rng = np.random.default_rng(seed)
    model = _random_model("lugre", rng)
    t = np.cumsum(rng.uniform(0.5e-3, 1.5e-3, 800))
    phase = rng.uniform(0, 2 * np.pi, N_JOINTS)
    dq = 0.4 * np.sin(2 * np.pi * 0.7 * t[:, None] + phase) + 0.01 * rng.normal(
        size=(t.size, N_JOINTS))
    torque, exact = model.torque_and_jacobian_along(t, dq)
    np.testing.assert_allclose(torque, model.torque_along(t, dq), rtol=1e-12, atol=1e-12)
    numeric = _central(lambda m: m.torque_along(t, dq), model, step=1e-7)
    np.testing.assert_allclose(exact, numeric, rtol=1e-5, atol=1e-6)


def test_static_models_torque_and_jacobian_along_is_the_static_pair():
    rng = np.random.default_rng(4)
    model = _random_model("stribeck", rng)
    dq = rng.normal(size=(30, N_JOINTS))
    torque, jacobian = model.torque_and_jacobian_along(np.arange(30.0), dq)
    np.testing.assert_array_equal(torque, model.torque(dq))
    np.testing.assert_array_equal(jacobian, model.parameter_jacobian(dq))
    assert NoFriction(3).parameter_jacobian(np.zeros((5, 3))).shape == (5, 3, 0)
