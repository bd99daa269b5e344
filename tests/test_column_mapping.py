"""CSV logs read through a column mapping (``read_dataset(..., columns=..., units=...)``): real
files in other layouts and units, read back in SI; every bad mapping is a one-line error."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from conftest import assert_close

from dynid.cli import main
from dynid.data import read_dataset
from dynid.data.io import column_mapping, unit_mapping


def _truth(n_samples: int = 200, n_joints: int = 3, rate: float = 250.0, seed: int = 0):
    """A log in SI: t [s], q [rad], dq [rad/s], ddq [rad/s^2], currents [A]."""
    rng = np.random.default_rng(seed)
    t = 12.0 + np.arange(n_samples) / rate
    w = rng.uniform(0.5, 2.0, n_joints)
    q = np.sin(np.outer(t, w))
    dq = np.cos(np.outer(t, w)) * w
    ddq = -q * w**2
    current = rng.normal(0.0, 2.0, (n_samples, n_joints))
    return t, q, dq, ddq, current


def _write(path, columns: dict[str, np.ndarray]) -> None:
    """A CSV whose header is the keys of ``columns``, in that order."""
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(columns)
        for row in zip(*columns.values(), strict=True):
            writer.writerow([repr(float(v)) for v in row])


def _robot_csv(path, labels=None, order=None, *, n_joints: int = 3, gripper: bool = False,
               seed: int = 0):
    """A robot's own CSV: ms time stamps, degrees, mA, columns dynid does not use, joints
    labelled ``labels`` (default 1..n) written in ``order``; with ``gripper``, a
    ``pos_gripper`` column that ``pos_*`` matches too."""
    t, q, dq, ddq, current = _truth(n_joints=n_joints, seed=seed)
    labels = labels or [str(j + 1) for j in range(n_joints)]
    order = order if order is not None else range(n_joints)
    columns = {"counter": np.arange(t.size, dtype=float), "time": t * 1e3}
    for prefix, values, scale in (("pos_", q, 180 / np.pi), ("vel_", dq, 180 / np.pi),
                                  ("acc_", ddq, 180 / np.pi), ("cur_", current, 1e3)):
        for j in order:
            columns[f"{prefix}{labels[j]}"] = values[:, j] * scale
    if gripper:
        columns["pos_gripper"] = np.full(t.size, 0.02)
    columns["temperature"] = np.full(t.size, 31.5)
    columns["status_word"] = np.zeros(t.size)
    _write(path, columns)
    return t, q, dq, ddq, current


MAPPING = "t=time,q=pos_*,dq=vel_*,ddq=acc_*,current=cur_*"
UNITS = "t=ms,q=deg,dq=deg/s,ddq=deg/s^2,current=mA"


def test_a_robots_csv_in_degrees_milliamperes_and_milliseconds_reads_in_si(tmp_path):
    path = tmp_path / "robot.csv"
    t, q, dq, ddq, current = _robot_csv(path)
    data = read_dataset(path, columns=MAPPING, units=UNITS)
    assert data.effort == "current" and data.n_joints == 3
    assert_close(data.t, t, rtol=1e-15, atol=0)
    assert_close(data.q, q, rtol=1e-14, atol=1e-15)
    assert_close(data.dq, dq, rtol=1e-14, atol=1e-15)
    assert_close(data.ddq, ddq, rtol=1e-14, atol=1e-15)
    assert_close(data.tau, current, rtol=1e-14, atol=1e-16)
    assert data.metadata["units"] == {"t": "ms", "q": "deg", "dq": "deg/s", "ddq": "deg/s^2",
                                      "current": "mA"}
    # the same mapping as a Python mapping with the units inside
    same = read_dataset(path, columns={"t": {"column": "time", "unit": "ms"},
                                       "q": {"columns": "pos_*", "unit": "deg"},
                                       "dq": {"columns": "vel_*", "unit": "deg/s"},
                                       "ddq": {"columns": "acc_*", "unit": "deg/s²"},
                                       "current": {"columns": "cur_*", "unit": "mA"}})
    np.testing.assert_array_equal(same.tau, data.tau)
    np.testing.assert_array_equal(same.ddq, data.ddq)


def test_a_yaml_mapping_file(tmp_path):
    path = tmp_path / "robot.csv"
    t, q, _, _, current = _robot_csv(path)
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text('t: {column: time, unit: ms}\nq: {columns: "pos_*", unit: deg}\n'
                       'dq: {columns: [vel_1, vel_2, vel_3], unit: deg/s}\n'
                       'current: {columns: "cur_*", unit: mA}\n')
    data = read_dataset(path, columns=mapping, joint_names=None)
    assert data.effort == "current" and data.ddq is None
    assert_close(data.t, t, rtol=1e-15, atol=0)
    assert_close(data.q, q, rtol=1e-14, atol=1e-15)
    assert_close(data.tau, current, rtol=1e-14, atol=1e-16)
    assert column_mapping(str(mapping))["dq"].columns == ("vel_1", "vel_2", "vel_3")
    mapping.write_text("t: {column: time}\nq: {columns: pos_*, units: deg}\n")
    with pytest.raises(ValueError, match="unknown key 'units'; did you mean 'unit'"):
        read_dataset(path, columns=mapping)


def test_numbered_columns_in_natural_order(tmp_path):
    """pos_2 before pos_10, whatever order the file has them in."""
    n = 11
    path = tmp_path / "robot.csv"
    order = np.random.default_rng(3).permutation(n)
    t, q, dq, _, current = _robot_csv(path, n_joints=n, order=order)
    header = path.read_text().splitlines()[0].split(",")
    assert header.index("pos_10") < header.index("pos_2")  # the file's order is not the joints'
    data = read_dataset(path, columns="t=time,q=pos_*,dq=vel_*,tau=cur_*",
                        units="t=ms,q=deg,dq=deg/s")
    assert data.effort == "torque" and data.n_joints == n
    assert_close(data.t, t, rtol=1e-15, atol=0)
    assert_close(data.q, q, rtol=1e-14, atol=1e-15)
    assert_close(data.dq, dq, rtol=1e-14, atol=1e-15)
    assert_close(data.tau, current * 1e3, rtol=1e-15, atol=0)  # tau: taken as N m


def test_named_columns_follow_joint_names(tmp_path):
    names = ["shoulder", "elbow", "wrist"]
    path = tmp_path / "robot.csv"
    # written wrist, shoulder, elbow; pos_gripper is another joint's, ignored by name
    t, q, dq, _, current = _robot_csv(path, labels=names, order=[2, 0, 1], gripper=True)
    data = read_dataset(path, columns="t=time,q=pos_*,dq=vel_*,current=cur_*",
                        units="t=ms,q=deg,dq=deg/s,current=mA", joint_names=names)
    assert_close(data.t, t, rtol=1e-15, atol=0)
    assert_close(data.q, q, rtol=1e-14, atol=1e-15)
    assert_close(data.dq, dq, rtol=1e-14, atol=1e-15)
    assert_close(data.tau, current, rtol=1e-14, atol=1e-16)
    assert data.metadata["joint_names"] == names
    # without joint names: natural order of the names (elbow, shoulder, wrist)
    _robot_csv(tmp_path / "arm.csv", labels=names, order=[2, 0, 1])
    plain = read_dataset(tmp_path / "arm.csv", columns="t=time,q=pos_*,dq=vel_*,tau=cur_*")
    assert_close(plain.q, (q * (180 / np.pi))[:, [1, 0, 2]], rtol=1e-15, atol=0)  # degrees
    assert plain.metadata["joint_names"] == ["elbow", "shoulder", "wrist"]


def _one_line_error(function, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as error:
        function(*args, **kwargs)
    message = str(error.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("columns", "units", "joints", "words"), [
    ("t=time,q=position_*,dq=vel_*,tau=cur_*", None, None,
     ["`q` pattern 'position_*' matches no column", "its columns: counter, time, pos_1"]),
    ("t=time,q=pos_*,dq=vel_*,tau=cur_*", None, None,
     ["different joint counts", "q 4", "dq 3"]),
    ("t=time,q=pos_[1-3],dq=vel_*,tau=cur_*", None, None, ["needs exactly one `*`"]),
    ("t=clock,q=pos_*,dq=vel_*,tau=cur_*", None, None, ["'clock'", "lacks"]),
    ("t=time,q=pos_*,dq=vel_*,torque=cur_*", None, None,
     ["unknown field 'torque'", "t, q, dq, ddq, tau, current"]),
    ("t=time,q=pos_*,dq=vel_*,tau=cur_*,current=cur_*", None, None,
     ["maps both `tau` and `current`"]),
    ("t=time,q=pos_*", None, None, ["lacks tau (or current)", "dq and ddq are optional"]),
    ("t=time,q=pos_*,dq", None, None, ["'dq' is not FIELD=PATTERN"]),
    ("t=time,q=pos_*,dq=pos_*,tau=cur_*", None, None, ["mapped to both `q` and `dq`"]),
    (MAPPING, "q=degree", None, ["unknown unit 'degree' for `q`", "rad, deg"]),
    (MAPPING, "q=deg/s", None, ["unknown unit 'deg/s' for `q`"]),
    (MAPPING, "velocity=deg/s", None, ["unknown field 'velocity'"]),
    (MAPPING, "tau=N m,current=A", None, ["both `tau` and `current`"]),
    ("t=time,q=acc_*,dq=vel_*,tau=cur_*", "tau=mA", None, ["mA is a current's unit"]),
    ("t=time,q=vel_*,dq=acc_*,tau=cur_*", None, ["a", "b"],
     ["matches 3 columns", "`joint_names` names 2 joints"]),
])
def test_bad_mappings_are_one_line_errors(tmp_path, columns, units, joints, words):
    path = tmp_path / "robot.csv"
    _robot_csv(path, gripper=True)  # pos_* also matches pos_gripper: 4 q columns, 3 dq
    message = _one_line_error(read_dataset, path, columns=columns, units=units,
                              joint_names=joints)
    for word in words:
        assert word in message, message


def test_missing_joint_names_are_named(tmp_path):
    path = tmp_path / "robot.csv"
    _robot_csv(path, labels=["a", "b", "c"])
    message = _one_line_error(read_dataset, path, columns="t=time,q=pos_*,dq=vel_*,tau=cur_*",
                              joint_names=["a", "b", "d"])
    assert "no column for the joints d of `joint_names`" in message


def test_a_long_header_is_listed_truncated(tmp_path):
    path = tmp_path / "wide.csv"
    _write(path, {f"signal_{k}": np.arange(3.0) for k in range(40)})
    message = _one_line_error(read_dataset, path, columns="t=time,q=pos_*,dq=vel_*,tau=cur_*")
    assert "signal_0, signal_1" in message and "(28 more)" in message


def test_mappings_apply_to_csv_only_and_text_forms_are_checked(tmp_path):
    np.savez(tmp_path / "log.npz", t=np.arange(3.0), q=np.zeros((3, 1)), dq=np.zeros((3, 1)),
             tau=np.zeros((3, 1)))
    assert "maps the columns of a CSV log" in _one_line_error(
        read_dataset, tmp_path / "log.npz", columns=MAPPING)
    assert "a .yaml file" in _one_line_error(column_mapping, "mapping.txt")
    assert "is empty" in _one_line_error(unit_mapping, " , ")
    assert "gives `q` twice" in _one_line_error(unit_mapping, "q=deg,q=rad")
    assert unit_mapping("tau=Nm,t=µs") == {"tau": "N m", "t": "us"}


def test_units_given_twice_must_agree(tmp_path):
    path = tmp_path / "robot.csv"
    _robot_csv(path)
    columns = {"t": "time", "q": {"columns": "vel_*", "unit": "deg"}, "dq": "acc_*",
               "tau": "cur_*"}
    assert "given twice: deg in `columns`, rad in `units`" in _one_line_error(
        read_dataset, path, columns=columns, units="q=rad")


def test_cli_inspect_reads_a_mapped_csv(tmp_path, capsys):
    path = tmp_path / "robot.csv"
    t, _, _, _, current = _robot_csv(path, labels=["a", "b", "c"])
    argv = ["data", "inspect", str(path), "--columns", "t=time,q=pos_*,dq=vel_*,current=cur_*",
            "--units", "t=ms,q=deg,dq=deg/s,current=mA"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["effort"] == "current" and report["n_samples"] == t.size
    assert report["units"] == {"t": "ms", "q": "deg", "dq": "deg/s", "current": "mA"}
    assert_close(report["range"]["tau_abs_max"], np.abs(current).max(axis=0), rtol=1e-13)
    assert_close(report["rate_hz"], 250.0, rtol=1e-9)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "effort: motor currents [A]; read in t ms, q deg, dq deg/s, current mA" in out
    assert "|i| max" in out
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text('t: {column: time, unit: ms}\nq: {columns: "pos_*", unit: deg}\n'
                       'dq: {columns: "vel_*", unit: deg/s}\ntau: {columns: "cur_*"}\n')
    assert main(["data", "inspect", str(path), "--columns", str(mapping), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["effort"] == "torque"
    assert main(["data", "inspect", str(path), "--columns", "t=time,q=pos_*"]) == 2
    assert "lacks tau (or current)" in capsys.readouterr().err
