"""``regressor_vjp``: the contraction <W, Y> and its gradient in q, dq, ddq, against the
regressor itself and central differences of it, on random MDH / DH chains with prismatic
joints."""

import numpy as np
import pytest
from conftest import assert_close, random_states, random_table_robot

from dynid.dynamics import regressor, regressor_vjp
from dynid.robot import load_robot


def _central_difference(robot, q, dq, ddq, weight, step=1e-6):
    """d<W, Y>/d(q, dq, ddq) per sample, from the batched regressor."""
    grads = []
    for which in range(3):
        grad = np.zeros_like(q)
        for k in range(q.shape[1]):
            states = [[q.copy(), dq.copy(), ddq.copy()] for _ in range(2)]
            states[0][which][:, k] += step
            states[1][which][:, k] -= step
            plus, minus = (np.einsum("tic,tic->t", regressor(robot, *s), weight) for s in states)
            grad[:, k] = (plus - minus) / (2 * step)
        grads.append(grad)
    return grads


@pytest.mark.parametrize("convention", ["mdh", "dh"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regressor_vjp_matches_central_differences(convention, seed):
    rng = np.random.default_rng(seed)
    n = 6
    robot = random_table_robot(rng, convention, n, prismatic=0.4)
    q, dq, ddq = random_states(rng, 7, n)
    weight = rng.standard_normal((7, n, 10 * n))
    value, *grads = regressor_vjp(robot, q, dq, ddq, weight)
    assert_close(value, np.einsum("tic,tic->t", regressor(robot, q, dq, ddq), weight))
    for got, expected in zip(grads, _central_difference(robot, q, dq, ddq, weight),
                             strict=True):
        scale = np.abs(expected).max()
        assert_close(got, expected, rtol=1e-6, atol=1e-6 * scale)


def test_regressor_vjp_batch_shapes_and_gravity(rng):
    robot = random_table_robot(rng, "mdh", 4)
    q, dq, ddq = (x.reshape(3, 1, 2, 4) for x in random_states(rng, 6, 4))
    weight = rng.standard_normal((3, 1, 2, 4, 40))
    gravity = np.array([0.0, 1.0, -3.0])
    value, g_q, g_dq, g_ddq = regressor_vjp(robot, q, dq, ddq, weight, gravity=gravity)
    assert value.shape == (3, 1, 2) and g_q.shape == g_dq.shape == g_ddq.shape == (3, 1, 2, 4)
    assert_close(value, np.einsum("...ic,...ic->...",
                                  regressor(robot, q, dq, ddq, gravity=gravity), weight))
    # linear in ddq: its gradient is the unit-acceleration regressor without gravity
    unit = np.broadcast_to(np.eye(4), (3, 1, 2, 4, 4))
    for k in range(4):
        inertial = regressor(robot, q, np.zeros_like(q), unit[..., k, :], gravity=np.zeros(3))
        assert_close(g_ddq[..., k], np.einsum("...ic,...ic->...", inertial, weight),
                     rtol=1e-10, atol=1e-10)
    value0, *_ = regressor_vjp(robot, q[0, 0, 0], dq[0, 0, 0], ddq[0, 0, 0],
                               weight[0, 0, 0], gravity=gravity)
    assert value0.shape == ()
    assert_close(value0, value[0, 0, 0])


def test_regressor_vjp_parallel_batch_matches_serial(rng):
    robot = load_robot("panda")
    q, dq, ddq = random_states(rng, 5000, 7)  # above the parallel threshold
    weight = rng.standard_normal((5000, 7, 70))
    batch = regressor_vjp(robot, q, dq, ddq, weight)
    head = regressor_vjp(robot, q[:10], dq[:10], ddq[:10], weight[:10])
    for whole, part in zip(batch, head, strict=True):
        assert_close(whole[:10], part, rtol=1e-12, atol=1e-12)


def test_regressor_vjp_rejects_a_wrong_weight(rng):
    robot = random_table_robot(rng, "mdh", 3)
    q, dq, ddq = random_states(rng, 2, 3)
    with pytest.raises(ValueError, match="`weight` must have shape"):
        regressor_vjp(robot, q, dq, ddq, np.zeros((2, 3, 29)))
    with pytest.raises(ValueError, match="`weight` contains NaN"):
        regressor_vjp(robot, q, dq, ddq, np.full((2, 3, 30), np.nan))
