"""Dataset: shapes, time stamps and values checked on construction."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.data import Dataset


def _arrays(n=5, joints=2):
    return dict(t=np.arange(n) * 0.001, q=np.zeros((n, joints)), dq=np.zeros((n, joints)),
                tau=np.zeros((n, joints)))


def test_valid_dataset_and_selection():
    data = Dataset(**_arrays(), metadata={"robot": "arm3"})
    assert (data.n_samples, data.n_joints) == (5, 2)
    part = data.select(slice(1, 3))
    assert part.n_samples == 2 and part.metadata["robot"] == "arm3"
    assert not data.q.flags.writeable
    arrays = _arrays()
    Dataset(**arrays)
    assert arrays["q"].flags.writeable  # the caller's arrays are copied, not frozen


@pytest.mark.parametrize(("edit", "message"), [
    (lambda a: a.update(t=np.array([0.0, 0.1, 0.1, 0.2, 0.3])), "strictly increasing"),
    (lambda a: a.update(t=np.array([0.0, 0.2, 0.1, 0.3, 0.4])), r"t\[2\] = 0.1 follows"),
    (lambda a: a.update(q=np.zeros((4, 2))), r"`q` must have shape \(5, n\)"),
    (lambda a: a.update(tau=np.zeros((5, 3))), "`tau` must have 2 joints"),
    (lambda a: a["dq"].__setitem__((1, 1), np.nan), "`dq` contains NaN"),
    (lambda a: a.update(tau=None), "`tau` is required"),
])
def test_bad_datasets(edit, message):
    arrays = _arrays()
    edit(arrays)
    with pytest.raises(ValueError, match=message):
        Dataset(**arrays)
