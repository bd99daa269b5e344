"""Dataset: shapes, time stamps and values checked on construction."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.data.dataset import Dataset, sample_count, sample_times


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


def _twin(ddq: bool = True) -> Dataset:
    from dynid.excitation.optimize import random_fourier
    from dynid.robot import load_robot
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    robot = load_robot("arm3")
    data = simulate_open_loop(robot, random_fourier(robot), duration=1.0, rate=50.0,
                              sensor=SensorModel(torque_noise_std=0.1))
    return data if ddq else Dataset(t=data.t, q=data.q, dq=data.dq, tau=data.tau)


@pytest.mark.parametrize("suffix", [".csv", ".npz"])
@pytest.mark.parametrize("with_ddq", [True, False])
def test_write_and_read_back(tmp_path, suffix, with_ddq):
    from dynid.data.io import read_dataset, write_dataset

    data = _twin(with_ddq)
    path = write_dataset(tmp_path / f"log{suffix}", data)
    back = read_dataset(path)
    for name in ("t", "q", "dq", "tau"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name))
    assert (back.ddq is None) == (not with_ddq)


@pytest.mark.parametrize(("text", "message"), [
    ("t,q1,dq1,tau1\n0,1,2\n", "bad.csv:2: the row has 3 columns, the header 4"),
    ("t,q1,dq1,tau1\n0,1,x,3\n", r"bad.csv:2:3 \(column 'dq1'\): 'x' is not a number"),
    ("t,q1,dq1,tau1\n0,1,2,nan\n", r"bad.csv:2:4 \(column 'tau1'\): 'nan' is not a number"),
    ("t,q1,dq1,tau1\n0,1_0,2,3\n", r"bad.csv:2:2 \(column 'q1'\): '1_0' is not a number"),
    ("t,q1,dq1,tau1\n0,1,2,1e999\n", r"bad.csv:2:4 \(column 'tau1'\): '1e999' overflows"),
    ("t,q1,dq1,tau1\n0,1,２,3\n", r"bad.csv:2:3 \(column 'dq1'\): '２' is not a number; "
                                   "write plain ASCII decimals"),
    ("t,q1,dq1,tau1\n0,1,2,3\n\u0661,1,2,3\n", r"bad.csv:3:1 \(column 't'\): '\u0661'"),
    ("t,q1,dq1,tau1\n0,1,2,3\n0,1,2,3\n", "`t` must be strictly increasing"),
    ("t,q1,q2,dq1,dq2,tau1\n0,1,2,3,4,5\n", "same n; got 2 q, 2 dq, 1 tau"),
    ("q1,dq1,tau1\n1,2,3\n", "has no `t` column"),
    ("t,q1,q3,dq1,dq2,tau1,tau2\n0,1,2,3,4,5,6\n", "without gaps"),
    ("t,q1,dq1,tau1,extra\n0,1,2,3,4\n", "expected 4"),
    ("t,q1,dq1,tau1\n", "a header but no data rows"),
    ("t,q1,dq1,tau1\n\n \n\n", "a header but no data rows"),
])
def test_malformed_csv(tmp_path, text, message):
    from dynid.data.io import read_dataset

    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_dataset(path)


def test_npz_missing_array(tmp_path):
    from dynid.data.io import read_dataset

    np.savez(tmp_path / "bad.npz", t=np.arange(3.0), q=np.zeros((3, 1)))
    with pytest.raises(ValueError, match=r"lacks arrays \['tau'\]"):  # dq: derived
        read_dataset(tmp_path / "bad.npz")


def test_static_csv_and_npz(tmp_path):
    from dynid.data.io import read_static

    rows, cols = np.tril_indices(2)
    q = np.array([[0.1, 0.2], [0.3, 0.4]])
    mass = np.array([[[2.0, 0.5], [0.5, 1.0]], [[3.0, 0.1], [0.1, 1.5]]])
    g = np.array([[1.0, 2.0], [3.0, 4.0]])
    header = "q1,q2," + ",".join(f"M{i + 1}{j + 1}" for i, j in zip(rows, cols, strict=True))
    lines = [header + ",g1,g2"]
    for k in range(2):
        lines.append(",".join(str(v) for v in [*q[k], *mass[k][rows, cols], *g[k]]))
    (tmp_path / "s.csv").write_text("\n".join(lines) + "\n")
    from_csv = read_static(tmp_path / "s.csv")
    np.testing.assert_array_equal(from_csv.M, mass)
    np.savez(tmp_path / "s.npz", q=q, M=mass, g=g)
    np.testing.assert_array_equal(read_static(tmp_path / "s.npz").g, g)
    (tmp_path / "short.csv").write_text("q1,q2,M11,M21,g1,g2\n0,0,1,0,0,0\n")
    with pytest.raises(ValueError, match="lacks the column M22"):
        read_static(tmp_path / "short.csv")


def test_accelerations_by_differences():
    from dynid.data.dataset import with_accelerations

    data = _twin()
    estimated = with_accelerations(Dataset(t=data.t, q=data.q, dq=data.dq, tau=data.tau))
    interior = slice(1, -1)
    np.testing.assert_allclose(estimated.ddq[interior], data.ddq[interior], atol=0.05)


def test_dataset_with_the_controllers_model(tmp_path):
    from dynid.data.io import read_dataset, write_dataset
    from dynid.dynamics import gravity_torque, mass_matrix
    from dynid.robot import load_robot

    robot = load_robot("panda")
    q = np.random.default_rng(0).uniform(-1, 1, (5, 7))
    data = Dataset(t=np.arange(5.0), q=q, dq=q, tau=q, M=mass_matrix(robot, q),
                   g=gravity_torque(robot, q))
    back = read_dataset(write_dataset(tmp_path / "with_model.npz", data))
    np.testing.assert_array_equal(back.static().M, data.M)
    assert data.select(slice(0, 2)).g.shape == (2, 7)
    with pytest.raises(ValueError, match="come together"):
        Dataset(t=np.arange(5.0), q=q, dq=q, tau=q, M=data.M)
    with pytest.raises(ValueError, match=r"need the \.npz format"):
        write_dataset(tmp_path / "x.csv", data)


def test_sample_times_pieces_and_strides_are_the_whole_series():
    whole = sample_times(2.5, 1000.0, 0.25)
    assert whole.size == sample_count(2.5, 1000.0) == 2501 and whole[-1] == 0.25 + 2.5
    pieces = [sample_times(2.5, 1000.0, 0.25, rows=slice(a, a + 700)) for a in range(0, 2501, 700)]
    assert np.array_equal(np.concatenate(pieces), whole)
    for stride in (1, 3, 80, 5000):
        assert np.array_equal(sample_times(2.5, 1000.0, 0.25, rows=slice(None, None, stride)),
                              whole[::stride])
