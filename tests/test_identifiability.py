"""Base parameters by pivoted QR with a relative tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, random_table_robot

from dynid.model.base_parameters import (
    base_parameters,
    robot_base_parameters,
    structural_regressor,
)


@pytest.mark.parametrize("method", ["rref", "qr"])
def test_full_rank_regressor_keeps_every_parameter(rng, method):
    """FIGAROH returns zero base parameters for a full-rank regressor; we keep all of them."""
    w = rng.standard_normal((50, 6)) * np.logspace(-3, 3, 6)
    base = base_parameters(w, method=method)
    assert base.rank == 6
    assert_close(base.regrouping, np.eye(6), atol=1e-12)
    assert set(base.classification().values()) == {"alone"}


def test_known_structure_is_recovered(rng):
    """Columns: a, b, zero, a + 2b, c  ->  rank 3, p3 unidentifiable, p4 regrouped."""
    a, b, c = rng.standard_normal((3, 40))
    w = np.stack([a, b, np.zeros(40), a + 2 * b, c], axis=1)
    base = base_parameters(w, names=["p1", "p2", "p3", "p4", "p5"])
    assert base.rank == 3
    classes = base.classification()
    assert classes["p3"] == "unidentifiable"
    assert classes["p5"] == "alone"
    assert {classes["p1"], classes["p2"], classes["p4"]} == {"combination"}
    pi = rng.standard_normal(5)
    assert_close(base.reduce(w) @ base.base(pi), w @ pi, atol=1e-12)


def test_tolerance_is_relative_to_the_data(rng):
    robot = random_table_robot(rng, "mdh", 5)
    w = structural_regressor(robot)
    ranks = {base_parameters(w * scale).rank for scale in (1e-6, 1.0, 1e6)}
    assert len(ranks) == 1


def test_base_regressor_reproduces_torques_on_random_robots(rng):
    for convention in ("mdh", "dh"):
        robot = random_table_robot(rng, convention, 6, prismatic=0.3)
        base = robot_base_parameters(robot)
        w = structural_regressor(robot, seed=5)
        pi = robot.parameters.ravel()
        assert_close(base.reduce(w) @ base.base(pi), w @ pi, rtol=1e-9, atol=1e-9)
        assert np.linalg.matrix_rank(base.reduce(w)) == base.rank


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least as many rows as parameters"):
        base_parameters(np.ones((2, 5)))
    with pytest.raises(ValueError, match="all zeros"):
        base_parameters(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="`rtol` must be in"):
        base_parameters(np.eye(3), rtol=2.0)
    with pytest.raises(ValueError, match="`names` must have 3 entries"):
        base_parameters(np.eye(3), names=["a"])
