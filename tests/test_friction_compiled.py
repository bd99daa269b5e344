"""The compiled friction of the closed loop (``dynid.friction._compiled``) against the models."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.friction._compiled import LAYOUTS, WIDTH, compiled_friction, evaluate, parameters
from dynid.friction.models import (
    FRICTION_MODELS,
    Arctan,
    LuGre,
    NoFriction,
    Sigmoid,
    Stribeck,
    ViscousCoulomb,
)

N = 4


def _models(rng: np.random.Generator) -> list:
    def positive(low=0.05, high=2.0):
        return rng.uniform(low, high, N)

    def free():
        return rng.uniform(-0.5, 0.5, N)

    return [
        NoFriction(N),
        ViscousCoulomb(free(), free(), free()),
        Arctan(free(), free(), free(), positive(10, 200), positive(1, 20)),
        Sigmoid(positive(), positive(1, 20), free() / 10),
        Stribeck(positive(), positive(), positive(0.01, 0.2), positive(0.5, 3.0), positive(),
                 free()),
        Stribeck(positive(), positive(), positive(0.01, 0.2), positive(0.5, 3.0), positive()),
        LuGre(positive(100, 1e4), positive(0, 2), positive(0, 1), positive(0, 1), positive(),
              positive(0.01, 0.2), free()),
        LuGre(positive(100, 1e4), positive(0, 2), positive(0, 1), np.zeros(N), positive(),
              positive(0.01, 0.2)),  # fc = 0: the floored Stribeck level at high speed
    ]


def _velocities(rng: np.random.Generator) -> np.ndarray:
    """Rest, tiny and huge speeds of both signs, and ordinary ones."""
    special = [0.0, 1e-300, -1e-300, 1e-9, -1e-9, 1e3, -1e3, 1e200, -1e200]
    return np.concatenate([special, rng.uniform(-3, 3, 40)])


def test_every_model_has_a_layout_of_its_fields():
    assert set(LAYOUTS) == set(FRICTION_MODELS)
    codes = [code for code, _ in LAYOUTS.values()]
    assert len(set(codes)) == len(codes)
    for name, (_, fields) in LAYOUTS.items():
        assert set(fields) == set(FRICTION_MODELS[name].field_names()), name
        assert len(fields) + (name == "sigmoid") <= WIDTH


@pytest.mark.parametrize("index", range(8))
def test_compiled_friction_is_the_model(index):
    rng = np.random.default_rng(index)
    model = _models(rng)[index]
    code, table = compiled_friction(model)
    assert table.shape == (N, WIDTH) and table.flags.c_contiguous
    velocities = _velocities(rng)
    states = rng.uniform(-1e-3, 1e-3, velocities.size)  # bristle deflections [rad]
    for j in range(N):
        dq = np.zeros((velocities.size, N))
        dq[:, j] = velocities
        torque, rate = np.array([evaluate(code, parameters(table, j), v, z)
                                 for v, z in zip(velocities, states, strict=True)]).T
        if model.stateful:
            z = np.zeros((velocities.size, N))
            z[:, j] = states
            with np.errstate(over="ignore", invalid="ignore"):
                expected_torque = model.torque_with_state(dq, z)[:, j]
                expected_rate = model.state_derivative(dq, z)[:, j]
        else:
            expected_torque, expected_rate = model.torque(dq)[:, j], np.zeros(velocities.size)
        finite = np.isfinite(expected_torque)  # LuGre at 1e200 rad/s overflows either way
        assert finite.sum() >= velocities.size - 2
        assert_close(torque[finite], expected_torque[finite], rtol=1e-13, atol=1e-15)
        assert_close(rate[finite], expected_rate[finite], rtol=1e-13, atol=1e-15)


def test_a_model_without_a_compiled_form_is_refused():
    class Doubled(ViscousCoulomb):
        def torque(self, dq):
            return 2 * super().torque(dq)

    with pytest.raises(TypeError, match=r"knows the friction models .* got Doubled"):
        compiled_friction(Doubled(*np.ones((3, 2))))
