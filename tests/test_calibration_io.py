"""Calibration measurement files: CSV and NPZ round trips, the column conventions (units,
joint names, quaternions, per-row noise), hostile files, a fuzz of both readers, and ROS 2
bags written with mcap-ros2-support and read back (no mocks)."""

from __future__ import annotations

import io
import time
import warnings
import zipfile

import numpy as np
import pytest
from mcap_ros2.writer import Writer
from scipy.spatial.transform import Rotation

from dynid.calibration.io import (
    MeasurementGapWarning,
    quaternion_to_rotation,
    read_measurement_bag,
    read_measurements,
    write_measurements,
)
from dynid.calibration.measurements import Measurements
from tests.conftest import assert_close
from tests.test_rosbag import HEADER_MSGDEFS, JOINT_STATE_MSGDEF

JOINTS = ("shoulder", "elbow", "wrist_1", "wrist_2")


def _set(kind: str, m: int = 12, n: int = 4, seed: int = 0) -> Measurements:
    """A random set of ``kind`` with per-row noise and awkward floats (tiny, huge, -0.0)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-3, 3, (m, n))
    q[0, 0], q[1, 0] = -0.0, 1e-300
    values = {"kind": kind, "q": q, "sigma_position": rng.uniform(1e-5, 1e-3, m)}
    if kind != "plane":
        values["position"] = rng.normal(0, 0.5, (m, 3)) * np.array([1, 1e-12, 1e2])
    if kind == "pose":
        values["rotation"] = Rotation.random(m, random_state=seed).as_matrix()
        values["sigma_rotation"] = rng.uniform(1e-4, 1e-2, m)
    if kind == "plane":
        values["plane"] = np.resize([0, 3, 7], m)  # m >= 9: 3 contacts per plane
    return Measurements(**values)


def _same(a: Measurements, b: Measurements) -> None:
    """Bit for bit: every field equal with no tolerance."""
    assert a.kind == b.kind
    for name in ("q", "sigma_position", "position", "rotation", "sigma_rotation", "plane"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            x, y = np.asarray(x), np.asarray(y)
            assert x.shape == y.shape and np.array_equal(x, y), name
            assert np.array_equal(np.signbit(x), np.signbit(y)), name  # -0.0 stays -0.0


def _csv(tmp_path, text: str, name: str = "m.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


# -- round trips ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["position", "pose", "plane"])
@pytest.mark.parametrize(("suffix", "named"), [(".csv", False), (".csv", True),
                                               (".npz", False)])  # an NPZ holds no names
def test_every_kind_reads_back_exactly(tmp_path, kind, suffix, named):
    for seed in range(5):
        original = _set(kind, m=9 + 3 * seed, seed=seed)
        path = tmp_path / f"set{suffix}"
        joints = JOINTS if named else None
        write_measurements(original, path, joints=joints)
        back = read_measurements(path, joints=joints)
        _same(back, original)
        if named:  # the header names the joints, nothing else reads them as joints
            assert path.read_text().splitlines()[0].startswith("shoulder,elbow,wrist_1,")
            with pytest.raises(ValueError, match=r"unknown column 'shoulder'.*`joints`"):
                read_measurements(path)


def test_writing_refuses_what_cannot_be_read_back(tmp_path):
    data = _set("pose")
    with pytest.raises(ValueError, match=r"an NPZ file holds no joint names"):
        write_measurements(data, tmp_path / "a.npz", joints=JOINTS)
    with pytest.raises(ValueError, match=r"`joints` names 3 joints, the measurements have 4"):
        write_measurements(data, tmp_path / "a.csv", joints=JOINTS[:3])
    with pytest.raises(ValueError, match=r"must end in \.csv or \.npz, got 'a\.txt'"):
        write_measurements(data, tmp_path / "a.txt")
    with pytest.raises(ValueError, match=r"`joints`: 'x' is a column name"):
        write_measurements(data, tmp_path / "a.csv", joints=("a", "b", "c", "x"))
    with pytest.raises(ValueError, match=r"without commas"):
        write_measurements(data, tmp_path / "a.csv", joints=("a", "b", "c", "d,e"))
    with pytest.raises(TypeError, match=r"`measurements` must be a Measurements set"):
        write_measurements({"q": 1}, tmp_path / "a.csv")
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "set.npz"
    write_measurements(_set("position"), path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        write_measurements(_set("pose"), path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["set.npz"]


# -- the column conventions -------------------------------------------------------------------

def test_quaternions_match_an_independent_conversion():
    """ROS order x, y, z, w against scipy's (also scalar last)."""
    quaternion = Rotation.random(200, random_state=1).as_quat()
    assert_close(quaternion_to_rotation(quaternion),
                 Rotation.from_quat(quaternion).as_matrix(), rtol=0, atol=1e-15)
    assert_close(quaternion_to_rotation([0, 0, np.sin(0.3), np.cos(0.3)]),
                 Rotation.from_euler("z", 0.6).as_matrix(), rtol=0, atol=1e-15)
    assert quaternion_to_rotation(np.ones((2, 5, 4)) / 2).shape == (2, 5, 3, 3)


def test_a_csv_of_quaternions_and_units(tmp_path):
    rng = np.random.default_rng(3)
    m = 6
    quaternion = Rotation.random(m, random_state=3).as_quat()
    quaternion[0] *= 1 + 0.9e-6  # within the tolerance: normalised
    q_deg = rng.uniform(-170, 170, (m, 2))
    xyz_mm = rng.uniform(-800, 800, (m, 3))
    rows = [[*q_deg[k], *xyz_mm[k], *quaternion[k], 0.1, 0.5] for k in range(m)]
    # columns in any order, units as suffixes, joints by name read in the order of `joints`
    header = ["elbow_deg", "shoulder_deg", "x_mm", "y_mm", "z_mm", "qx", "qy", "qz", "qw",
              "sigma_mm", "sigma_rotation_mrad"]
    text = ",".join(header) + "\n" + "\n".join(",".join(repr(float(v)) for v in row)
                                               for row in rows)
    data = read_measurements(_csv(tmp_path, text + "\n"), joints=("shoulder", "elbow"))
    assert data.kind == "pose"
    assert_close(data.q, np.radians(q_deg[:, ::-1]), rtol=1e-15, atol=0)
    assert_close(data.position, xyz_mm * 1e-3, rtol=1e-15, atol=0)
    unit = quaternion / np.linalg.norm(quaternion, axis=1, keepdims=True)
    assert_close(data.rotation, Rotation.from_quat(unit).as_matrix(), rtol=0, atol=2e-15)
    assert_close(data.sigma_position, np.full(m, 1e-4), rtol=1e-15, atol=0)
    assert_close(data.sigma_rotation, np.full(m, 5e-4), rtol=1e-15, atol=0)
    # the same file read as positions only: the orientation columns are set aside
    positions = read_measurements(_csv(tmp_path, text), joints=("shoulder", "elbow"),
                                  kind="position")
    assert positions.kind == "position" and positions.rotation is None
    assert np.array_equal(positions.position, data.position)
    # a quaternion beyond the tolerance is refused, naming the file and the measurement
    rows[2][5:9] = [value * (1 + 2e-6) for value in rows[2][5:9]]
    bad = ",".join(header) + "\n" + "\n".join(",".join(repr(float(v)) for v in row) for row in rows)
    with pytest.raises(ValueError, match=r"m\.csv: measurement 3 has a quaternion of norm "
                                         r"1\.000002.*not a unit quaternion \(within 1e-06\)"):
        read_measurements(_csv(tmp_path, bad), joints=("shoulder", "elbow"))


def test_numbered_joints_keyword_noise_and_kinds(tmp_path):
    text = "q2,q1,x,y,z\n" + "\n".join(f"{k},{-k},0.{k},1,2" for k in range(5)) + "\n"
    path = _csv(tmp_path, text)
    data = read_measurements(path, sigma_position=2e-4)
    assert data.kind == "position"
    assert np.array_equal(data.q, np.c_[-np.arange(5.0), np.arange(5.0)])
    assert np.array_equal(data.sigma_position, np.full(5, 2e-4))
    per_row = read_measurements(path, sigma_position=np.arange(1, 6) * 1e-4)
    assert np.array_equal(per_row.sigma_position, np.arange(1, 6) * 1e-4)
    # numbered columns with `joints`: the count is checked
    assert read_measurements(path, joints=("a", "b"), sigma_position=1e-4).n_joints == 2
    with pytest.raises(ValueError, match=r"m\.csv has 2 joint columns, `joints` names 3"):
        read_measurements(path, joints=("a", "b", "c"), sigma_position=1e-4)
    with pytest.raises(ValueError, match=r"`sigma_position` \[m\] is missing: m\.csv has no "
                                         r"`sigma` or `sigma_position` column and the keyword"):
        read_measurements(path)
    with pytest.raises(ValueError, match=r"`kind` 'pose' needs x, y, z and an orientation; "
                                         r"the file holds position"):
        read_measurements(path, kind="pose", sigma_position=1e-4)
    with pytest.raises(ValueError, match=r"`kind` must be one of position, pose, plane"):
        read_measurements(path, kind="poses", sigma_position=1e-4)
    with pytest.raises(ValueError, match=r"`sigma_rotation`: position measurements"):
        read_measurements(path, sigma_position=1e-4, sigma_rotation=1e-3)
    noisy = _csv(tmp_path, "q1,x,y,z,sigma\n1,0,0,0,1e-4\n", "noisy.csv")
    with pytest.raises(ValueError, match=r"`sigma_position` is given twice: by noisy\.csv's "
                                         r"`sigma` or `sigma_position` and by the keyword"):
        read_measurements(noisy, sigma_position=1e-4)
    plane = _csv(tmp_path, "q1,plane\n" + "".join(f"{k},{k % 2}\n" for k in range(6)), "p.csv")
    contacts = read_measurements(plane, sigma_position=1e-4)
    assert contacts.kind == "plane" and contacts.plane.tolist() == [0, 1, 0, 1, 0, 1]
    assert contacts.plane.dtype == np.int64


@pytest.mark.parametrize(("text", "message"), [
    ("q1,x,y,z\n1,2,3,4\n", r"`sigma_position` \[m\] is missing"),  # control: sigma missing
    ("q1,x,y\n1,2,3\n", r"m\.csv has x, y but lacks z"),
    ("q1,x,y,z,qx,qy,qz\n1,2,3,4,0,0,0\n", r"m\.csv has qx, qy, qz but lacks qw"),
    ("q1,qx,qy,qz,qw\n1,0,0,0,1\n", r"m\.csv has orientations but no positions"),
    ("q1,sigma\n1,2\n", r"m\.csv holds no measurement: it needs x, y, z"),
    ("x,y,z\n1,2,3\n", r"m\.csv has no joint columns: q1\.\.qn"),
    ("q1,q3,x,y,z\n1,2,3,4,5\n", r"joint columns q1\.\.qn must be numbered from 1 without "
                                 r"gaps, got \['q1', 'q3'\]"),
    ("q1,x,y,z,plane\n1,2,3,4,0\n", r"has both plane contacts .* one kind of measurement"),
    ("q1,x,y,z,sigm\n1,2,3,4,5\n", r"unknown column 'sigm'; did you mean 'sigma'\?"),
    ("q1,x,y,z,t\n1,2,3,4,5\n", r"unknown column 't'; joint columns are q1\.\.qn, or the "
                                r"robot's joint names with `joints`"),
    ("q1,x[mm],y,z\n1,2,3,4\n", r"column 'x\[mm\]': a unit is a suffix, not brackets: write "
                                r"'x_mm'"),
    ("q1,x_cm,y,z\n1,2,3,4\n", r"column 'x_cm': unknown unit 'cm' for 'x' \(its units: m, mm\)"),
    ("q1,x,y,z,qx_deg,qy,qz,qw\n1,2,3,4,0,0,0,1\n", r"unknown unit 'deg' for 'qx' \(its "
                                                    r"units: none\)"),
    ("q1,x,x_mm,y,z\n1,2,3,4,5\n", r"columns 'x' and 'x_mm' give 'x' twice"),
    ("q1,x,y,z,sigma,sigma_position\n1,2,3,4,5,6\n", r"give 'sigma_position' twice"),
    ("q1,x,y,x\n1,2,3,4\n", r"m\.csv line 1: repeated column names \['x'\]"),
    ("q1,x,y,z,sigma\n1,2,3,4,nan\n", r"m\.csv:2:5 \(column 'sigma'\): 'nan' is not a number"),
    ("q1,x,y,z,sigma\n1,2,3,4\n", r"m\.csv:2: the row has 4 columns, the header 5"),
    ("q1,x,y,z,sigma\n1,2,3,4,-1\n",
     r"m\.csv: `sigma_position` must be a standard deviation >= MIN_SIGMA .* measurement 1"),
    ("q1,x,y,z,sigma\n", r"m\.csv has a header but no data rows"),
    ("", r"m\.csv is empty"),
    ("q1,plane,sigma\n1,0.5,1\n1,0.5,1\n1,0.5,1\n", r"m\.csv: `plane` must be \(3,\) integer"),
    ("q1,plane,sigma\n1,1e300,1\n1,1e300,1\n1,1e300,1\n", r"`plane` must be \(3,\) integer"),
    ("q01,q1,x,y,z\n1,2,3,4,5\n", r"columns 'q01' and 'q1' are the same joint"),
    ("q1,plane,sigma\n1,0,1\n1,0,1\n", r"m\.csv: `plane`: every plane needs at least 3"),
    ("q1,x,y,z,r11,r12,r13,r21,r22,r23,r31,r32,r33,sigma,sigma_rotation\n"
     "1,0,0,0,1,0,0,0,1,0,0,0,-1,1,1\n", r"m\.csv: `rotation`: measurement 1 is not a proper"),
])
def test_malformed_csv_files_are_named(tmp_path, text, message):
    with pytest.raises(ValueError, match=message) as error:
        read_measurements(_csv(tmp_path, text))
    assert "\n" not in str(error.value)


def test_joint_names_mixed_or_missing(tmp_path):
    joints = ("a", "b")
    with pytest.raises(ValueError, match=r"joint columns named after `joints` and numbered"):
        read_measurements(_csv(tmp_path, "a,q2,x,y,z,sigma\n1,2,3,4,5,6\n"), joints=joints)
    with pytest.raises(ValueError, match=r"lacks the columns of the joints \['b'\]"):
        read_measurements(_csv(tmp_path, "a,x,y,z,sigma\n1,2,3,4,5\n"), joints=joints)
    with pytest.raises(ValueError, match=r"`joints` names a joint twice: \['a'\]"):
        read_measurements(_csv(tmp_path, "a,x,y,z,sigma\n1,2,3,4,5\n"), joints=("a", "a"))
    with pytest.raises(TypeError, match=r"`joints` must be a sequence of joint names"):
        read_measurements(_csv(tmp_path, "a,x,y,z,sigma\n1,2,3,4,5\n"), joints="ab")
    # q01 is joint 1, spelt so
    assert read_measurements(_csv(tmp_path, "q01,x,y,z,sigma\n7,3,4,5,1\n")).q.tolist() == [[7.0]]
    # a joint whose name ends like a unit is still that joint (exact names first)
    data = read_measurements(_csv(tmp_path, "j_mm,x,y,z,sigma\n1,2,3,4,5\n"), joints=("j_mm",))
    assert data.q.tolist() == [[1.0]]


@pytest.mark.parametrize(("arrays", "message"), [
    ({"position": np.zeros((4, 3))}, r"lacks arrays \['q'\]"),
    ({"q": np.zeros(4), "position": np.zeros((4, 3))}, r"array `q` must be \(m, n\)"),
    ({"q": np.zeros((4, 2)), "position": np.zeros((4, 2))},
     r"array `position` must have shape \(4, 3\) for 4 measurements, got \(4, 2\)"),
    ({"q": np.zeros((4, 2)), "position": np.zeros((4, 3)), "quaternion": np.zeros((3, 4))},
     r"array `quaternion` must have shape \(4, 4\)"),
    ({"q": np.zeros((4, 2)), "position": np.full((4, 3), np.nan)},
     r"array `position` holds NaN or inf \(first at \(0, 0\)\)"),
    ({"q": np.zeros((4, 2)), "position": np.zeros((4, 3)), "quaternion": np.ones((4, 4)),
      "sigma_position": 1.0, "sigma_rotation": 1.0}, r"measurement 1 has a quaternion of norm 2"),
    ({"q": np.zeros((4, 2)), "position": np.zeros((4, 3)), "quaternion": np.ones((4, 4)) / 2,
      "rotation": np.tile(np.eye(3), (4, 1, 1))}, r"both `rotation` and `quaternion`"),
    ({"q": np.zeros((4, 2)), "position": np.zeros((4, 3)), "sigma_position": np.ones(3)},
     r"s\.npz: `sigma_position` must be a scalar or one value per measurement \(4,\)"),
    ({"q": np.zeros((4, 2), dtype=bool), "position": np.zeros((4, 3)), "sigma_position": 1.0},
     r"s\.npz: `q` must be real numbers"),
    ({"q": np.array([["a", "b"]]), "position": np.zeros((1, 3))},
     r"array 'q' must hold real numbers"),
    ({"q": np.zeros((4, 2)), "position": np.zeros((4, 3), dtype=object)},
     r"array 'position' holds Python objects"),
])
def test_malformed_npz_files_are_named(tmp_path, arrays, message):
    path = tmp_path / "s.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=message) as error:
        read_measurements(path)
    assert "\n" not in str(error.value) and "s.npz" in str(error.value)


def test_an_npz_of_quaternions_and_scalar_noise(tmp_path):
    quaternion = Rotation.random(5, random_state=2).as_quat()
    path = tmp_path / "s.npz"
    np.savez(path, q=np.zeros((5, 3)), position=np.ones((5, 3)), quaternion=quaternion,
             sigma_position=1e-4, sigma_rotation=1e-3)
    data = read_measurements(path, joints=("a", "b", "c"))
    assert_close(data.rotation, Rotation.from_quat(quaternion).as_matrix(), rtol=0, atol=2e-15)
    assert np.array_equal(data.sigma_rotation, np.full(5, 1e-3))
    with pytest.raises(ValueError, match=r"s\.npz: array `q` has 3 joints, `joints` names 2"):
        read_measurements(path, joints=("a", "b"))


def test_files_that_are_not_measurement_files(tmp_path, monkeypatch):
    import dynid._reading.limits as reading

    with pytest.raises(ValueError, match=r"'m\.json' has the suffix '\.json'; measurement "
                                         r"files are \.csv or \.npz"):
        read_measurements(tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"measurement file '.*nothing\.csv' does not exist"):
        read_measurements(tmp_path / "nothing.csv")
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(ValueError, match=r"folder\.csv' is a folder, not a file"):
        read_measurements(tmp_path / "folder.csv")
    path = tmp_path / "set.csv"
    write_measurements(_set("position"), path)
    # a file beyond the memory this machine has is refused from its size, before reading
    monkeypatch.setattr(reading, "available_memory", lambda: 2 * path.stat().st_size - 2)
    with pytest.raises(ValueError, match=r"set\.csv' needs .*, more than half of the memory"):
        read_measurements(path)
    monkeypatch.undo()
    (tmp_path / "binary.csv").write_bytes(b"q1,x,y,z\n\xff\xfe\x00\n")
    with pytest.raises(ValueError, match=r"binary\.csv is not UTF-8 text"):
        read_measurements(tmp_path / "binary.csv")
    npz = tmp_path / "set.npz"
    write_measurements(_set("pose"), npz)
    data = npz.read_bytes()
    for cut in (len(data) - 30, len(data) // 2, 100, 0):
        npz.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=r"set\.npz") as error:
            read_measurements(npz)
        assert "\n" not in str(error.value)


def test_a_compressed_npz_bomb_is_refused_before_inflating(tmp_path, monkeypatch):
    import dynid._reading.npz as reading

    path = tmp_path / "bomb.npz"
    m = 200_000
    np.savez_compressed(path, q=np.zeros((m, 7)), position=np.zeros((m, 3)),
                        sigma_position=np.ones(m))
    ratio = 8 * m * 11 / path.stat().st_size
    assert ratio > 100
    monkeypatch.setattr(reading, "INFLATION_FLOOR", 2**16)
    with pytest.raises(ValueError, match=r"bomb\.npz: its compressed arrays would inflate .* "
                                         r"a compression bomb"):
        read_measurements(path)


# -- fuzz -------------------------------------------------------------------------------------

def _mutations(data: bytes, rng: np.random.Generator, count: int):
    """Random byte flips, insertions, deletions and truncations of ``data``."""
    for _ in range(count):
        mutated = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            what = rng.integers(4)
            at = int(rng.integers(len(mutated))) if mutated else 0
            if what == 0 and mutated:
                mutated[at] = int(rng.integers(256))
            elif what == 1:
                mutated.insert(at, int(rng.choice(list(b",\n.-e0x[_\x00\xff"))))
            elif what == 2 and mutated:
                del mutated[at]
            else:
                mutated = mutated[:at]
        yield bytes(mutated)


@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_fuzzed_files_raise_only_value_errors(tmp_path, suffix):
    """Random damage to a valid file: it reads (a damage that keeps it valid), or raises a
    ValueError naming the file, on one line; never another exception, never a hang."""
    rng = np.random.default_rng(20)
    outcomes = {"read": 0, "refused": 0}
    start = time.perf_counter()
    for kind in ("position", "pose", "plane"):
        source = tmp_path / f"source{suffix}"
        write_measurements(_set(kind, m=9, n=3, seed=1), source)
        if suffix == ".npz":  # a compressed archive too: the inflating paths
            buffer = io.BytesIO()
            with zipfile.ZipFile(source) as plain, \
                    zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
                for info in plain.infolist():
                    packed.writestr(info.filename, plain.read(info))
            variants = [source.read_bytes(), buffer.getvalue()]
        else:
            variants = [source.read_bytes()]
        for data in variants:
            for mutated in _mutations(data, rng, 150):
                path = tmp_path / f"fuzzed{suffix}"
                path.write_bytes(mutated)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("error")  # no RuntimeWarning on bad casts either
                        read_measurements(path)
                    outcomes["read"] += 1
                except ValueError as error:
                    assert "fuzzed" in str(error) and "\n" not in str(error), str(error)
                    outcomes["refused"] += 1
    assert time.perf_counter() - start < 20
    assert outcomes["refused"] > 100  # the damage was real


# -- ROS 2 bags -------------------------------------------------------------------------------

_QUATERNION_DEF = "=" * 80 + """
MSG: geometry_msgs/Quaternion
float64 x
float64 y
float64 z
float64 w
"""
_POSE_DEFS = """================================================================================
MSG: geometry_msgs/Pose
Point position
Quaternion orientation
================================================================================
MSG: geometry_msgs/Point
float64 x
float64 y
float64 z
""" + _QUATERNION_DEF
MSGDEFS = {
    "geometry_msgs/msg/PoseStamped": "std_msgs/Header header\nPose pose\n" + HEADER_MSGDEFS
    + _POSE_DEFS,
    "geometry_msgs/msg/PoseWithCovarianceStamped":
        "std_msgs/Header header\nPoseWithCovariance pose\n" + HEADER_MSGDEFS
        + "================================================================================\n"
          "MSG: geometry_msgs/PoseWithCovariance\nPose pose\nfloat64[36] covariance\n"
        + _POSE_DEFS,
    "geometry_msgs/msg/TransformStamped":
        "std_msgs/Header header\nstring child_frame_id\nTransform transform\n" + HEADER_MSGDEFS
        + """================================================================================
MSG: geometry_msgs/Transform
Vector3 translation
Quaternion rotation
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
""" + _QUATERNION_DEF,
}


def _stamp(t: float) -> dict:
    sec = int(t)
    return {"sec": sec, "nanosec": round((t - sec) * 1e9)}


def _pose_message(kind: str, t: float, frame) -> dict:
    point = dict(zip("xyz", frame[:3], strict=True))
    turn = dict(zip("xyzw", frame[3:], strict=True))
    header = {"stamp": _stamp(t), "frame_id": "mocap"}
    if kind.endswith("TransformStamped"):
        return {"header": header, "child_frame_id": "tool",
                "transform": {"translation": point, "rotation": turn}}
    pose = {"position": point, "orientation": turn}
    if kind.endswith("PoseWithCovarianceStamped"):
        return {"header": header, "pose": {"pose": pose, "covariance": [0.0] * 36}}
    return {"header": header, "pose": pose}


def write_measurement_bag(path, joint_t, q, names, pose_t, frames, *,
                          pose_kind="geometry_msgs/msg/PoseStamped", pose_topics=("/tool",)):
    with path.open("wb") as stream:
        writer = Writer(stream)
        state = writer.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE_MSGDEF)
        pose = writer.register_msgdef(pose_kind, MSGDEFS[pose_kind])
        events = [(t, 0, k) for k, t in enumerate(joint_t)] + \
            [(t, 1, k) for k, t in enumerate(pose_t)]
        for t, which, k in sorted(events):
            if which == 0:  # positions only: velocity and effort left empty, as ROS allows
                writer.write_message("/joint_states", state, {
                    "header": {"stamp": _stamp(t), "frame_id": ""}, "name": list(names),
                    "position": list(q[k]), "velocity": [], "effort": []},
                    log_time=int(t * 1e9))
            else:
                for topic in pose_topics:
                    writer.write_message(topic, pose, _pose_message(pose_kind, t, frames[k]),
                                         log_time=int(t * 1e9))
        writer.finish()


def _bag_data(n_poses=40, seed=0):
    """Joint readings at 200 Hz moving linearly in time (so that linear interpolation is
    exact), poses at ~30 Hz at stamps between them, some before and after the joint data."""
    rng = np.random.default_rng(seed)
    t0 = 1_700_000_000.0
    joint_t = t0 + np.arange(400) / 200.0
    slope, offset = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    q = offset + np.outer(joint_t - t0, slope)
    pose_t = t0 + 0.0137 + np.arange(n_poses) / 30.0
    pose_t[0] = t0 - 0.05  # before the joints start: dropped
    quaternion = Rotation.random(n_poses, random_state=seed).as_quat()
    frames = np.c_[rng.normal(0, 0.5, (n_poses, 3)), quaternion]
    return joint_t, q, pose_t, frames, (lambda t: offset + np.outer(t - t0, slope))


@pytest.mark.parametrize("pose_kind", list(MSGDEFS))
def test_bag_poses_paired_with_interpolated_joints(tmp_path, pose_kind):
    joint_t, q, pose_t, frames, truth = _bag_data()
    path = tmp_path / "calib.mcap"
    names = ["j1", "j2", "j3"]
    write_measurement_bag(path, joint_t, q[:, ::-1], names[::-1], pose_t, frames,
                          pose_kind=pose_kind)
    with pytest.warns(MeasurementGapWarning, match=r"calib\.mcap: 1 of 40 poses on /tool "
                                                   r"dropped"):
        data = read_measurement_bag(path, joints=names, sigma_position=1e-4,
                                    sigma_rotation=1e-3)
    assert data.kind == "pose" and len(data) == 39
    kept = pose_t[1:]
    stamps = np.array([s["sec"] + 1e-9 * s["nanosec"] for s in map(_stamp, kept)])
    assert_close(data.q, truth(stamps), rtol=0, atol=1e-12)  # linear in t: exact
    assert_close(data.position, frames[1:, :3], rtol=0, atol=0)
    assert_close(data.rotation, Rotation.from_quat(frames[1:, 3:]).as_matrix(), rtol=0,
                 atol=2e-15)
    with pytest.warns(MeasurementGapWarning, match=r"1 of 40 poses"):
        positions = read_measurement_bag(path, joints=names, sigma_position=1e-4,
                                         kind="position", max_gap=1.0)
    assert positions.kind == "position" and positions.rotation is None
    assert len(positions) == 39  # a wider gap: still no extrapolation before the first reading


ABC = ["a", "b", "c"]


def test_bag_gaps_and_choices(tmp_path):
    joint_t, q, pose_t, frames, _ = _bag_data()
    path = tmp_path / "calib.mcap"
    keep = (joint_t < joint_t[0] + 0.5) | (joint_t > joint_t[0] + 0.8)  # a 0.3 s hole
    write_measurement_bag(path, joint_t[keep], q[keep], ["a", "b", "c"], pose_t, frames,
                          pose_topics=("/tool", "/tool_copy"))
    with pytest.raises(ValueError, match=r"several geometry_msgs/msg/PoseStamped or .* topics "
                                         r"\['/tool', '/tool_copy'\]: choose one with "
                                         r"`pose_topic`"):
        read_measurement_bag(path, joints=ABC, sigma_position=1e-4, sigma_rotation=1e-3)
    in_hole = ((pose_t > joint_t[0] + 0.5 - 0.01) & (pose_t < joint_t[0] + 0.8 + 0.01)).sum()
    with pytest.warns(MeasurementGapWarning, match=rf"{in_hole + 1} of 40 poses"):
        data = read_measurement_bag(path, joints=ABC, pose_topic="/tool_copy",
                                    sigma_position=1e-4,
                                    sigma_rotation=1e-3)
    assert len(data) == 40 - in_hole - 1 and data.n_joints == 3
    with pytest.raises(ValueError, match=r"`pose_topic` '/joint_states' is a "
                                         r"sensor_msgs/msg/JointState topic"):
        read_measurement_bag(path, joints=ABC, pose_topic="/joint_states",
                             sigma_position=1e-4, sigma_rotation=1e-3)
    with pytest.raises(ValueError, match=r"`sigma_rotation` \[rad\] is missing"):
        read_measurement_bag(path, joints=ABC, pose_topic="/tool", sigma_position=1e-4)
    with pytest.raises(ValueError, match=r"`joints` must name the robot's joints"):
        read_measurement_bag(path, joints=None, pose_topic="/tool", sigma_position=1e-4,
                             sigma_rotation=1e-3)
    with pytest.raises(TypeError, match="joints"):
        read_measurement_bag(path, pose_topic="/tool", sigma_position=1e-4,  # type: ignore
                             sigma_rotation=1e-3)
    with pytest.raises(ValueError, match=r"`max_gap` must be a positive number"):
        read_measurement_bag(path, joints=ABC, pose_topic="/tool", sigma_position=1e-4,
                             sigma_rotation=1, max_gap=0)
    with pytest.raises(ValueError, match=r"`kind` must be 'pose' or 'position'"):
        read_measurement_bag(path, joints=ABC, pose_topic="/tool", sigma_position=1e-4,
                             kind="plane")
    with pytest.raises(ValueError, match=r"lacks the joints \['j9'\]"):
        read_measurement_bag(path, pose_topic="/tool", joints=["a", "j9"], sigma_position=1e-4,
                             sigma_rotation=1e-3)
    # poses on another clock than the joints: every one dropped is an error
    late = tmp_path / "late.mcap"
    write_measurement_bag(late, joint_t, q, ["a", "b", "c"], pose_t + 100.0, frames)
    with pytest.raises(ValueError, match=r"late\.mcap: no pose on /tool has joint readings on "
                                         r"/joint_states within `max_gap` = 0\.01 s .* share a "
                                         r"clock\?"):
        read_measurement_bag(late, joints=["a", "b", "c"], sigma_position=1e-4, sigma_rotation=1e-3)


def test_bag_quaternions_and_damage(tmp_path):
    joint_t, q, pose_t, frames, _ = _bag_data(n_poses=10)
    frames[3, 3:] *= 1.01
    path = tmp_path / "calib.mcap"
    write_measurement_bag(path, joint_t, q, ["a", "b", "c"], pose_t, frames)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementGapWarning)
        with pytest.raises(ValueError, match=r"calib\.mcap: measurement 3 has a quaternion of "
                                             r"norm 1\.01"):  # the third kept pose
            read_measurement_bag(path, joints=ABC, sigma_position=1e-4, sigma_rotation=1e-3)
        positions = read_measurement_bag(path, joints=ABC, sigma_position=1e-4, kind="position")
    assert len(positions) == 9  # positions need no unit quaternion
    folder = tmp_path / "rosbag2_run"  # the folder `ros2 bag record` writes
    folder.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeasurementGapWarning)
        path = path.rename(folder / "run_0.mcap")
        assert len(read_measurement_bag(folder, joints=ABC, sigma_position=1e-4,
                                        kind="position")) == 9
        (folder / "run_1.mcap").write_bytes(b"")
        with pytest.raises(ValueError, match=r"rosbag2_run holds 2 MCAP files \(run_0\.mcap, "
                                             r"run_1\.mcap\); give one of them"):
            read_measurement_bag(folder, joints=ABC, sigma_position=1e-4, kind="position")
    with pytest.raises(ValueError, match=r"run\.db3 is a SQLite ROS 2 bag"):
        read_measurement_bag(tmp_path / "run.db3", joints=ABC, sigma_position=1e-4, kind="position")
    data = path.read_bytes()
    for cut in (len(data) // 2, 10, 0):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=r"run_0\.mcap") as error:
            read_measurement_bag(path, joints=ABC, sigma_position=1e-4, sigma_rotation=1e-3)
        assert "\n" not in str(error.value)


def test_inputs_that_would_silently_give_a_wrong_answer(tmp_path):
    """Both orientations in a CSV, unknown NPZ arrays: refused; a UTF-8 BOM: accepted."""
    both = tmp_path / "both.csv"
    both.write_text("q1,q2,q3,x,y,z,qx,qy,qz,qw,r11,r12,r13,r21,r22,r23,r31,r32,r33\n"
                    + "0.1,0.2,0.3,1,2,3,1,0,0,0,1,0,0,0,1,0,0,0,1\n" * 4)
    with pytest.raises(ValueError, match=r"both\.csv has both a quaternion .* and a rotation "
                                         r"matrix"):
        read_measurements(both, sigma_position=1e-4, sigma_rotation=1e-3)
    m = 4
    extra = tmp_path / "extra.npz"
    np.savez(extra, q=np.zeros((m, 3)), position=np.zeros((m, 3)), sigma_position=1e-4,
             quat=np.tile([0.0, 0.0, 0.0, 1.0], (m, 1)))
    with pytest.raises(ValueError, match=r"extra\.npz: unknown arrays \['quat'\].*x, y, z, w"):
        read_measurements(extra)
    bom = tmp_path / "bom.csv"
    bom.write_bytes("\ufeffq1,q2,x,y,z\n".encode() + b"0.1,0.2,1,2,3\n" * 3)
    data = read_measurements(bom, sigma_position=1e-4)
    np.testing.assert_array_equal(data.q[:, 0], 0.1)
