"""Metrics against hand computations on small arrays."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.validate import mae, relative_error_percent, rmse


def test_metrics_by_hand():
    measured = np.array([[1.0, 2.0], [3.0, 4.0]])
    predicted = np.array([[1.0, 1.0], [1.0, 4.0]])
    # errors: joint 1: 0, 2; joint 2: 1, 0
    assert_close(rmse(measured, predicted), [np.sqrt(2.0), np.sqrt(0.5)])
    assert_close(mae(measured, predicted), [1.0, 0.5])
    assert_close(relative_error_percent(measured, predicted), 100 * np.sqrt(5.0 / 30.0))


def test_shapes_must_match():
    with pytest.raises(ValueError, match="must both be"):
        rmse(np.zeros((3, 2)), np.zeros((3, 1)))
