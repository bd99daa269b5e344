"""``prepare_pieces``: ``prepare`` of a log of any length, piece by piece from overlapping
windows, equal to ``prepare`` on the whole log (1e-10 of each field's size), in the memory of
a piece; ``prepare_to_file`` and ``dynid data prepare`` write it for ``identify --mmap``."""

from __future__ import annotations

import json
import tracemalloc
import warnings

import numpy as np
import pytest
from conftest import assert_close

import dynid.data._stream_prepare as stream_prepare
from dynid.cli import main
from dynid.data import (
    Dataset,
    GapWarning,
    concatenate,
    prepare,
    prepare_pieces,
    prepare_to_file,
    read_dataset,
    write_dataset,
    write_log_pieces,
)

RATE = 1000.0


def _log(n: int = 20_000, *, joints: int = 2, irregular: bool = False, ddq: bool = False,
         seed: int = 0, start: float = 0.0) -> Dataset:
    """A noisy raw log of slow sines, ``n`` samples at about ``RATE``."""
    rng = np.random.default_rng(seed)
    t = start + np.arange(n) / RATE
    if irregular:
        t = t + rng.uniform(-0.3, 0.3, n) / RATE
    omega = 2 * np.pi * np.linspace(0.2, 0.9, joints)
    phase = omega * t[:, None]
    fields = {"q": np.sin(phase) + 1e-3 * rng.standard_normal((n, joints)),
              "dq": omega * np.cos(phase) + 1e-2 * rng.standard_normal((n, joints)),
              "tau": 5 * np.sin(phase + 1) + 0.1 * rng.standard_normal((n, joints))}
    if ddq:
        fields["ddq"] = -omega**2 * np.sin(phase) + 0.1 * rng.standard_normal((n, joints))
    return Dataset(t=t, **fields, metadata={"source": "raw.npz"})


def _streamed(data: Dataset, piece_samples: int | None = None, **options) -> list[Dataset]:
    pieces = list(prepare_pieces(data, piece_samples=piece_samples, **options))
    limit = piece_samples or stream_prepare.PIECE_SAMPLES
    assert all(0 < piece.n_samples <= limit for piece in pieces)
    return pieces


def _assert_as_prepared(pieces: list[Dataset], whole: Dataset) -> None:
    """The pieces joined are ``whole``: the same time stamps, fields to 1e-10 of each field's
    largest value, the same metadata."""
    joined = concatenate(pieces)
    assert np.array_equal(joined.t, whole.t)
    for name in ("q", "dq", "ddq", "tau"):
        expected = getattr(whole, name)
        if expected is None:
            assert getattr(joined, name) is None, name
            continue
        assert_close(getattr(joined, name), expected, rtol=0,
                     atol=1e-10 * np.abs(expected).max())
    assert all(piece.metadata == whole.metadata for piece in pieces)


@pytest.fixture(scope="module")
def raw() -> Dataset:
    return _log(40_000)


@pytest.fixture(scope="module")
def prepared(raw) -> Dataset:
    return prepare(raw, cutoff=5.0)  # fixed: the piece sizes below are sized to its overlap


@pytest.mark.parametrize("piece", ["divides", "does not divide", "one sample at the end",
                                   "one piece"])
def test_a_uniform_log_is_filtered_differentiated_and_trimmed_as_prepare_does(raw, prepared,
                                                                              piece):
    kept = prepared.n_samples  # 39000 (0.5 s trimmed at each end)
    piece_samples = {"divides": kept // 6, "does not divide": 6001,
                     "one sample at the end": kept - 1, "one piece": kept}[piece]
    pieces = _streamed(raw, piece_samples, cutoff=5.0)
    assert [p.n_samples for p in pieces][-1] == (1 if piece == "one sample at the end" else
                                                 kept - (len(pieces) - 1) * piece_samples)
    _assert_as_prepared(pieces, prepared)
    assert prepared.metadata["preprocessing"][:3] == [
        "butterworth order 4 cutoff 5 Hz", "ddq from dq", "trimmed 0.5 s / 0.5 s"]
    assert prepared.metadata["preprocessing"][3].startswith("friction fits leave out")


def test_the_cutoff_chosen_from_the_spectrum_is_prepares(raw):
    whole = prepare(raw)
    chosen = float(whole.metadata["preprocessing"][0].split()[4])
    assert 1.0 < chosen < 5.0  # sines up to 0.9 Hz, noisy velocities
    assert "chosen from the log's spectrum" in whole.metadata["preprocessing"][0]
    _assert_as_prepared(_streamed(raw, 20_000), whole)


def test_a_steep_filter_and_a_low_cutoff_agree_too(raw):
    # Gaz et al.'s 1 Hz (an overlap of 12 s of samples) and a 10th-order filter
    _assert_as_prepared(_streamed(raw, 30_000, cutoff=1.0, trim_seconds=1.0),
                        prepare(raw, cutoff=1.0, trim_seconds=1.0))
    _assert_as_prepared(_streamed(raw, 4000, cutoff=20.0, order=10),
                        prepare(raw, cutoff=20.0, order=10))


@pytest.mark.parametrize("rate", [None, 400.0])
def test_an_irregular_log_is_resampled_on_prepares_grid(rate):
    raw = _log(irregular=True, seed=1, start=1234.5)  # an offset that rounds the grid
    whole = prepare(raw, rate=rate, cutoff=5.0)
    assert whole.metadata["preprocessing"][0].startswith("resample")
    _assert_as_prepared(_streamed(raw, 3001 if rate else 6000, rate=rate, cutoff=5.0), whole)


def test_a_log_with_gaps_is_prepared_segment_by_segment():
    first, short, last = _log(9000, seed=2), _log(200, seed=3, start=9.5), \
        _log(8000, seed=4, start=11.0)
    raw = concatenate([first, short, last])  # gaps of 0.5 s and 1.3 s; 200 samples too short
    with pytest.warns(GapWarning) as expected:
        whole = prepare(raw, cutoff=5.0)
    with pytest.warns(GapWarning) as streamed:
        pieces = _streamed(raw, 6000, cutoff=5.0)
    assert [str(w.message) for w in streamed] == [str(w.message) for w in expected]
    assert "split at 2 gap(s)" in str(expected[0].message)
    assert "200 samples in segments too short to prepare dropped" in str(expected[0].message)
    _assert_as_prepared(pieces, whole)
    too_short = concatenate([short, _log(100, seed=5, start=20.0)])
    with pytest.raises(ValueError, match="no segment is long enough") as error:
        prepare(too_short)
    with pytest.raises(ValueError) as streamed_error:
        prepare_pieces(too_short)
    assert str(streamed_error.value) == str(error.value)


def test_a_log_with_accelerations_is_filtered_only_when_asked():
    raw = _log(ddq=True, seed=6)
    _assert_as_prepared(_streamed(raw, 5000, cutoff=10.0), prepare(raw, cutoff=10.0))
    as_it_is = _streamed(raw, 7000)  # no step: the log's own samples, its own metadata
    _assert_as_prepared(as_it_is, prepare(raw))
    assert "preprocessing" not in as_it_is[0].metadata
    for name in ("t", "q", "dq", "ddq", "tau"):
        assert np.array_equal(np.concatenate([getattr(p, name) for p in as_it_is]),
                              getattr(raw, name))
    _assert_as_prepared(_streamed(raw, 5000, trim_seconds=2.0, rate=500.0, cutoff=5.0),
                        prepare(raw, trim_seconds=2.0, rate=500.0, cutoff=5.0))


def test_a_memory_mapped_log_streams_in_the_memory_of_a_piece(tmp_path):
    n, joints, block = 2_000_000, 2, 250_000

    def blocks():
        for start in range(0, n, block):
            piece = _log(block, joints=joints, seed=start, start=start / RATE)
            yield piece
    raw = read_dataset(write_log_pieces(tmp_path / "raw.npz", blocks()), mmap=True)
    assert isinstance(raw.q, np.memmap)
    tracemalloc.start()
    try:
        count, last = 0, -np.inf
        for piece in prepare_pieces(raw):
            assert piece.t[0] > last and np.isfinite(piece.ddq).all()
            count, last = count + piece.n_samples, piece.t[-1]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n - 1000  # 0.5 s at each end: as `prepare` keeps
    # `prepare` returns the prepared log in memory: t and q, dq, ddq, tau of every sample
    whole_at_least = count * (1 + 4 * joints) * 8
    assert whole_at_least > 5 * peak, (whole_at_least, peak)
    assert peak < 40e6, peak


def test_the_command_prepares_a_file_that_identify_streams(tmp_path, capsys):
    from dynid.excitation.optimize import random_fourier
    from dynid.identification import identify
    from dynid.robot import load_robot
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    robot = load_robot("panda")
    twin = simulate_open_loop(robot, random_fourier(robot, seed=3), duration=30.0, rate=500.0,
                              sensor=SensorModel(torque_noise_std=0.1), seed=3)
    raw = Dataset(t=twin.t, q=twin.q, dq=twin.dq, tau=twin.tau)  # no ddq: a raw log
    raw_path = write_dataset(tmp_path / "raw.npz", raw)
    out = tmp_path / "prepared.npz"
    assert main(["data", "prepare", str(raw_path), "-o", str(out), "--mmap", "--json",
                 "--cutoff", "4", "--trim", "1"]) == 0
    summary = json.loads(capsys.readouterr().out)
    expected = prepare(raw, cutoff=4.0, trim_seconds=1.0)
    assert summary["n_samples"] == expected.n_samples
    assert summary["preprocessing"] == expected.metadata["preprocessing"]
    written = read_dataset(out, mmap=True)
    _assert_as_prepared([Dataset(t=np.array(written.t), q=np.array(written.q),
                                 dq=np.array(written.dq), ddq=np.array(written.ddq),
                                 tau=np.array(written.tau), metadata=expected.metadata)],
                        expected)
    assert main(["identify", "panda", str(out), "--as-is", "--mmap", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert_close(np.array([row["value"] for row in payload["coefficients"]]),
                 identify(robot, expected, structure="auto").coefficients, rtol=1e-8,
                 atol=1e-10)  # the command's default structure: chosen from the data
    # the output is refused before any work where it would destroy the input
    assert main(["data", "prepare", str(raw_path), "-o", str(raw_path)]) == 2
    assert "is an input of this command" in capsys.readouterr().err
    assert main(["data", "prepare", str(raw_path), "-o", str(tmp_path / "p.csv")]) == 2
    assert "must end in .npz" in capsys.readouterr().err


def test_ctrl_c_leaves_no_file(tmp_path, monkeypatch):
    window, calls = stream_prepare._window, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return window(*args)
    monkeypatch.setattr(stream_prepare, "_window", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prepare_to_file(_log(), tmp_path / "prepared.npz", piece_samples=6000, cutoff=5.0)
    assert len(calls) == 3
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary pieces


def test_hostile_files_are_refused_as_prepare_refuses_them(tmp_path, capsys):
    path = write_dataset(tmp_path / "raw.npz", _log(2000))
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    nan = _log(2000)
    q = np.array(nan.q)
    q[1234, 1] = np.nan
    np.savez(tmp_path / "nan.npz", t=nan.t, q=q, dq=nan.dq, tau=nan.tau)
    for name in ("truncated.npz", "nan.npz"):
        with pytest.raises(ValueError) as error:
            read_dataset(tmp_path / name)  # what `prepare`'s caller meets
        for mmap in ([], ["--mmap"]):
            out = tmp_path / "out.npz"
            assert main(["data", "prepare", str(tmp_path / name), "-o", str(out), *mmap]) == 2
            message = capsys.readouterr().err
            assert message.startswith("dynid: error: ") and not out.exists()
            if not mmap:
                assert message.strip() == f"dynid: error: {error.value}"
        if name == "nan.npz":
            assert "NaN" in str(error.value) and "NaN" in message and "row" in message


@pytest.mark.parametrize("options", [
    {"cutoff": 600.0}, {"order": 11}, {"order": 2.0}, {"trim_seconds": 21.0},
    {"trim_seconds": -1.0}, {"rate": -5.0}, {"rate": 0.01}])
def test_bad_options_fail_with_prepares_errors(raw, options):
    with pytest.raises(ValueError) as expected:
        prepare(raw, **options)
    with pytest.raises(ValueError) as streamed:
        prepare_pieces(raw, **options)  # before any piece
    assert str(streamed.value) == str(expected.value)
    short = raw.select(slice(0, 9))
    with pytest.raises(ValueError, match="needs at least 10") as too_short:
        prepare_pieces(short)
    with pytest.raises(ValueError) as whole_short:
        prepare(short)
    assert str(too_short.value) == str(whole_short.value)


def test_piece_samples_is_checked(raw):
    for bad in (10, 0, -3):
        with pytest.raises(ValueError, match="`piece_samples` must be at least 64"):
            prepare_pieces(raw, piece_samples=bad)
    with pytest.raises(ValueError, match=r"`piece_samples` must be at least twice the filter's "
                                         r"overlap of \d+ samples"):
        prepare_pieces(raw, piece_samples=1000)  # 5 Hz at 1 kHz: an overlap near 2000
    for bad in (5000.0, True, "5000"):
        with pytest.raises(TypeError, match="`piece_samples` must be an integer"):
            prepare_pieces(raw, piece_samples=bad)
    with pytest.raises(TypeError, match="`data` must be a Dataset"):
        prepare_pieces({"t": raw.t})


def test_the_median_step_is_numpys_exactly():
    rng = np.random.default_rng(7)
    for n in (3, 4, 1001, 150_001):
        t = np.cumsum(rng.uniform(0.2e-3, 1.8e-3, n)) + rng.uniform(0, 1e6)
        times = stream_prepare._LogTimes(Dataset(t=t, q=t[:, None], dq=t[:, None],
                                                 tau=t[:, None]), 0, n)
        assert stream_prepare._median_step(times) == float(np.median(np.diff(t)))
    grid = stream_prepare._GridTimes(np.float64(1234.5), 997.0, 200_001)
    t = grid.chunk(0, grid.n)
    assert stream_prepare._median_step(grid) == float(np.median(np.diff(t)))
    assert [grid.search(t[k], side) for k in (0, 77, 200_000) for side in ("left", "right")] \
        == [int(np.searchsorted(t, t[k], side)) for k in (0, 77, 200_000)
            for side in ("left", "right")]


def test_no_warning_for_a_log_without_gaps(raw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        next(iter(prepare_pieces(raw)))


def test_progress_lines_count_the_samples_prepared(raw, prepared):
    lines: list[str] = []
    pieces = prepare_pieces(raw, piece_samples=6001, progress=lines.append, cutoff=5.0)
    assert lines == []  # planning reports nothing; the pieces do
    assert sum(piece.n_samples for piece in pieces) == prepared.n_samples
    assert lines[-1].startswith(f"preparing the log (samples): {prepared.n_samples}/"
                                f"{prepared.n_samples} (100 %)")
