"""What a log's effort column holds (``Dataset.effort``) through dynid's files and ROS 2 bags,
and logs used as they are (``prepare(..., as_is=True)``, ``--as-is``)."""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pytest
from conftest import assert_close

from dynid.cli import main
from dynid.cli._log_options import prepared, preprocessing_options
from dynid.data import Dataset, prepare, read_dataset, read_rosbag, write_dataset
from tests.test_rosbag import _states, write_bag


def _current_log(n_samples: int = 120, n_joints: int = 2, *, jitter: float = 0.0,
                 seed: int = 0) -> Dataset:
    """A log of motor currents [A] at 100 Hz, its time stamps off the grid by up to
    ``jitter`` [s]."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_samples) / 100.0 + rng.uniform(0.0, jitter, n_samples)
    w = np.linspace(0.7, 1.9, n_joints)
    q = np.sin(np.outer(t, w))
    return Dataset(t=t, q=q, dq=np.cos(np.outer(t, w)) * w, ddq=-q * w**2,
                   tau=rng.normal(0.0, 1.5, (n_samples, n_joints)), effort="current",
                   metadata={"source": "current log"})


@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_a_current_log_round_trips(tmp_path, suffix):
    data = _current_log()
    path = write_dataset(tmp_path / f"log{suffix}", data)
    back = read_dataset(path)
    assert back.effort == "current"
    assert back.metadata["units"] == {"t": "s", "q": "rad", "dq": "rad/s", "ddq": "rad/s^2",
                                      "current": "A"}
    for name in ("t", "q", "dq", "ddq", "tau"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name))
    if suffix == ".csv":
        header = path.read_text().splitlines()[0].split(",")
        assert header[5:7] == ["current1", "current2"] and "tau1" not in header
    else:
        with np.load(path) as archive:
            assert "current" in archive.files and "tau" not in archive.files
    # a torque log still writes tau
    torque = Dataset(t=data.t, q=data.q, dq=data.dq, tau=data.tau)
    again = read_dataset(write_dataset(tmp_path / f"torque{suffix}", torque))
    assert again.effort == "torque" and again.metadata["units"]["tau"] == "N m"


def _one_line_error(function, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as error:
        function(*args, **kwargs)
    assert "\n" not in str(error.value)
    return str(error.value)


def test_torques_and_currents_in_one_file_are_errors(tmp_path):
    (tmp_path / "both.csv").write_text("t,q1,dq1,tau1,current1\n0,1,2,3,4\n1,1,2,3,4\n")
    assert "has both tau and current columns" in _one_line_error(read_dataset,
                                                                 tmp_path / "both.csv")
    np.savez(tmp_path / "both.npz", t=np.arange(2.0), q=np.zeros((2, 1)), dq=np.zeros((2, 1)),
             tau=np.zeros((2, 1)), current=np.zeros((2, 1)))
    assert "has both tau and current arrays" in _one_line_error(read_dataset,
                                                                    tmp_path / "both.npz")
    (tmp_path / "short.csv").write_text("t,q1,q2,dq1,dq2,current1\n0,1,2,3,4,5\n")
    assert "got 2 q, 2 dq, 1 current" in _one_line_error(read_dataset, tmp_path / "short.csv")


def test_effort_asked_for_must_fit_the_file(tmp_path):
    data = _current_log()
    path = write_dataset(tmp_path / "log.csv", data)
    message = _one_line_error(read_dataset, path, effort="torque")
    assert "`effort` is 'torque' but log.csv has current columns" in message
    assert "must be one of torque, current" in _one_line_error(read_dataset, path,
                                                               effort="amps")
    # a tau column said to hold currents, in mA: read as currents in A
    torque = write_dataset(tmp_path / "tau.csv", Dataset(t=data.t, q=data.q, dq=data.dq,
                                                         tau=data.tau * 1e3))
    for options in ({"effort": "current", "units": "tau=mA"}, {"units": "current=mA"}):
        back = read_dataset(torque, **options)
        assert back.effort == "current" and back.metadata["units"]["current"] == "mA"
        assert_close(back.tau, data.tau, rtol=1e-15, atol=0)
    message = _one_line_error(read_dataset, torque, effort="torque", units="current=mA")
    assert "`effort` is 'torque' but `units` give `current` a unit" in message


def test_a_bags_effort_field_read_as_current(tmp_path):
    robot, t, q, dq, _ = _states(n_samples=50)
    current = np.random.default_rng(2).normal(0.0, 800.0, q.shape)  # mA
    path = tmp_path / "run.mcap"
    write_bag(path, t, q, dq, current, list(robot.joint_names))
    data = read_rosbag(path, effort="current")
    assert data.effort == "current"
    assert_close(data.tau, current, rtol=0, atol=0)
    assert read_rosbag(path).effort == "torque"
    through = read_dataset(path, joint_names=robot.joint_names, effort="current")
    assert through.effort == "current" and through.metadata["units"]["current"] == "A"
    assert_close(through.tau, current, rtol=0, atol=0)
    in_ma = read_dataset(path, units="current=mA")
    assert in_ma.effort == "current"
    assert_close(in_ma.tau, current * 1e-3, rtol=1e-15, atol=0)
    assert "must be one of torque, current" in _one_line_error(read_rosbag, path,
                                                               effort="force")
    assert main(["data", "inspect", str(path), "--effort", "current", "--json"]) == 0


def test_cli_inspect_shows_the_effort_kind(tmp_path, capsys):
    path = write_dataset(tmp_path / "log.csv", _current_log())
    assert main(["data", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "effort: motor currents [A]; read in t s, q rad, dq rad/s, ddq rad/s^2, current A" \
        in out
    assert main(["data", "inspect", str(path), "--effort", "torque"]) == 2
    assert "`effort` is 'torque'" in capsys.readouterr().err
    assert main(["data", "inspect", str(path), "--json", "--robot", "arm3"]) == 2  # 2 joints
    capsys.readouterr()
    torque = write_dataset(tmp_path / "torque.npz", Dataset(
        t=np.arange(50) / 100.0, q=np.zeros((50, 3)), dq=np.zeros((50, 3)),
        tau=np.ones((50, 3))))
    assert main(["data", "inspect", str(torque), "--json", "--robot", "arm3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["effort"] == "torque" and "tau_fraction_of_limit" in report["limits"]


def test_as_is_keeps_a_slightly_irregular_log_unchanged():
    data = _current_log(jitter=2e-4)  # steps 9.8 to 10.2 ms: irregular, resampled by default
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = prepare(data, as_is=True)
    for name in ("t", "q", "dq", "ddq", "tau"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(data, name))
    assert kept.effort == "current"
    assert kept.metadata["preprocessing"][-1].startswith("as is")
    assert "resample" in prepare(data).metadata["preprocessing"][0]  # what as_is switches off
    # a gap (a pause in logging) is kept as well, not split at
    gap = data.select(np.r_[0:40, 80:120])
    np.testing.assert_array_equal(prepare(gap, as_is=True).t, gap.t)
    assert "must carry them" in _one_line_error(
        prepare, Dataset(t=data.t, q=data.q, dq=data.dq, tau=data.tau), as_is=True)
    assert "excludes `rate`, `cutoff`" in _one_line_error(prepare, data, as_is=True,
                                                          rate=100.0, cutoff=5.0)


def test_cli_as_is(tmp_path):
    data = _current_log(jitter=2e-4)
    path = write_dataset(tmp_path / "log.csv", data)
    parser = argparse.ArgumentParser()
    preprocessing_options(parser)
    kept = prepared(parser.parse_args(["--as-is"]), str(path))
    for name in ("t", "q", "dq", "ddq", "tau"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(data, name))
    assert kept.effort == "current"
    message = _one_line_error(prepared, parser.parse_args(["--as-is", "--cutoff", "3"]),
                              str(path))
    assert message == "`--as-is` uses the log as it is: it excludes --cutoff"
    prepared_default = prepared(parser.parse_args([]), str(path))
    assert "resample" in prepared_default.metadata["preprocessing"][0]
