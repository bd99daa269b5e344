"""ROS 2 bags: real MCAP files written with mcap-ros2-support and read back (no mocks)."""

from __future__ import annotations

import numpy as np
import pytest
from mcap_ros2.writer import Writer

from dynid.data import read_dataset, read_rosbag
from dynid.dynamics import rnea
from dynid.robot import load_robot
from tests.conftest import assert_close

# a std_msgs/Header's definitions, as a message that holds one carries them
HEADER_MSGDEFS = """================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""
JOINT_STATE_MSGDEF = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
""" + HEADER_MSGDEFS
STRING_MSGDEF = "string data\n"


def _states(n_samples: int = 300, rate: float = 500.0, seed: int = 0):
    robot = load_robot("arm3")
    rng = np.random.default_rng(seed)
    t = 1_700_000_000.0 + np.arange(n_samples) / rate  # Unix time, as a recorder stamps
    t = t + rng.uniform(0, 2e-4, n_samples)  # jitter
    w = np.array([1.0, 1.7, 0.6])
    q = np.sin(np.outer(t - t[0], w))
    dq = np.cos(np.outer(t - t[0], w)) * w
    tau = rnea(robot, q, dq, -q * w**2)
    return robot, t, q, dq, tau


def write_bag(path, t, q, dq, tau, names, *, topic="/joint_states", shuffle=False,
              extra_joint=False, other_topic=False, seed=0):
    rng = np.random.default_rng(seed)
    with path.open("wb") as stream:
        writer = Writer(stream)
        schema = writer.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE_MSGDEF)
        if other_topic:
            text = writer.register_msgdef("std_msgs/msg/String", STRING_MSGDEF)
            writer.write_message("/chatter", text, {"data": "hello"}, log_time=1)
        for k, stamp in enumerate(t):
            order = rng.permutation(len(names)) if shuffle else np.arange(len(names))
            message_names = [names[j] for j in order]
            position, velocity, effort = (list(a[k, order]) for a in (q, dq, tau))
            if extra_joint:  # a gripper joint the arm does not have
                message_names.append("finger")
                position, velocity, effort = [*position, 0.01], [*velocity, 0.0], [*effort, 1.0]
            sec = int(stamp)
            writer.write_message(topic, schema, {
                "header": {"stamp": {"sec": sec, "nanosec": round((stamp - sec) * 1e9)},
                           "frame_id": ""},
                "name": message_names, "position": position, "velocity": velocity,
                "effort": effort}, log_time=int(stamp * 1e9))
        writer.finish()


def test_joint_states_read_back_exactly(tmp_path):
    robot, t, q, dq, tau = _states()
    path = tmp_path / "run.mcap"
    write_bag(path, t, q, dq, tau, list(robot.joint_names), shuffle=True, extra_joint=True,
              other_topic=True)
    data = read_rosbag(path, joints=robot.joint_names)
    assert data.n_samples == t.size and data.metadata["topic"] == "/joint_states"
    assert_close(data.t, t, rtol=0, atol=2e-9)  # nanosecond stamps
    assert_close(data.q, q, rtol=0, atol=0)
    assert_close(data.dq, dq, rtol=0, atol=0)
    assert_close(data.tau, tau, rtol=0, atol=0)
    assert data.metadata["joint_names"] == list(robot.joint_names)
    same = read_dataset(path, joint_names=robot.joint_names)  # the one reader of every log
    assert_close(same.q, q, rtol=0, atol=0)


def test_a_bag_feeds_identification(tmp_path, capsys):
    from dynid.cli import main

    robot, t, q, dq, tau = _states(n_samples=3000)
    path = tmp_path / "run.mcap"
    write_bag(path, t, q, dq, tau, list(robot.joint_names))
    assert main(["data", "inspect", str(path)]) == 0
    assert "3000 samples" in capsys.readouterr().out.replace(",", "")


@pytest.mark.parametrize(("edit", "message"), [
    ({"topic": "/other"}, r"has no sensor_msgs/msg/JointState topic \(its topics: /chatter"),
    ({"names": ["a", "b", "c"]}, r"lacks the joints \['joint1', 'joint2', 'joint3'\]"),
])
def test_bags_that_do_not_fit_are_named(tmp_path, edit, message):
    robot, t, q, dq, tau = _states(n_samples=20)
    path = tmp_path / "run.mcap"
    if "topic" in edit:  # the only JointState topic is not the one asked for
        with path.open("wb") as stream:
            writer = Writer(stream)
            text = writer.register_msgdef("std_msgs/msg/String", STRING_MSGDEF)
            writer.write_message("/chatter", text, {"data": "hello"}, log_time=1)
            writer.finish()
    else:
        write_bag(path, t, q, dq, tau, edit["names"])
    with pytest.raises(ValueError, match=message):
        read_rosbag(path, joints=robot.joint_names)


def test_truncated_bag_is_one_line(tmp_path):
    robot, t, q, dq, tau = _states(n_samples=200)
    path = tmp_path / "run.mcap"
    write_bag(path, t, q, dq, tau, list(robot.joint_names))
    data = path.read_bytes()
    for cut in (len(data) // 2, 10, 0):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError) as error:
            read_rosbag(path)
        assert "\n" not in str(error.value)


def test_a_bag_bomb_is_refused_from_its_chunk_index(tmp_path, monkeypatch):
    """Issue 22's bound on inflation, for bags: a recording of constants (every message the
    same) compresses far beyond any log; its chunk index declares what it would decompress
    to, and that is checked before a chunk is decompressed (floor lowered: the rule is the
    same at any size)."""
    import dynid._reading.npz as reading

    n = 20_000
    zeros = np.zeros((n, 3))
    path = tmp_path / "bomb.mcap"
    write_bag(path, 1.0 + np.arange(n) * 1e-3, zeros, zeros, zeros, ["a", "b", "c"])
    from mcap.reader import make_reader

    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    inflated = sum(index.uncompressed_size for index in summary.chunk_indexes)
    ratio = inflated / path.stat().st_size
    assert ratio > 4  # constants compress
    monkeypatch.setattr(reading, "INFLATION_FLOOR", 2**16)
    monkeypatch.setattr(reading, "MAX_INFLATION_RATIO", 4)
    import mcap.reader

    def never(*args, **kwargs):
        raise AssertionError("a message was decoded")

    monkeypatch.setattr(mcap.reader.SeekingReader, "iter_decoded_messages", never)
    with pytest.raises(ValueError, match=rf"bomb\.mcap: its chunks would decompress to .* "
                                         rf"\({ratio:.0f}x\), beyond the limit of 4x above "
                                         r"64\.0 KiB: a compression bomb"):
        read_rosbag(path)
    monkeypatch.undo()
    assert read_rosbag(path).n_samples == n


@pytest.mark.parametrize("compression", ["zstd", "lz4"])
def test_a_chunk_that_inflates_beyond_its_declared_size(tmp_path, compression):
    """A chunk whose record and index declare fewer bytes than its data inflate to: the mcap
    reader would allocate what the zstd frame states, or inflate an lz4 frame to its end;
    dynid refuses it first, naming the chunk."""
    import struct

    from mcap.reader import make_reader
    from mcap.writer import CompressionType
    from mcap_ros2.writer import Writer as RosWriter

    robot, t, q, dq, tau = _states(n_samples=200)
    path = tmp_path / "liar.mcap"
    with path.open("wb") as stream:
        writer = RosWriter(stream, compression=CompressionType[compression.upper()])
        schema = writer.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE_MSGDEF)
        for k, stamp in enumerate(t):
            sec = int(stamp)
            writer.write_message("/joint_states", schema, {
                "header": {"stamp": {"sec": sec, "nanosec": round((stamp - sec) * 1e9)},
                           "frame_id": ""}, "name": list(robot.joint_names),
                "position": list(q[k]), "velocity": list(dq[k]), "effort": list(tau[k])},
                log_time=int(stamp * 1e9))
        writer.finish()
    assert read_rosbag(path).n_samples == 200
    with path.open("rb") as stream:
        index = make_reader(stream).get_summary().chunk_indexes[0]
    data = bytearray(path.read_bytes())
    smaller = index.uncompressed_size // 2
    record = index.chunk_start_offset + 1 + 8 + 16  # opcode, length, start and end times
    assert struct.unpack_from("<Q", data, record)[0] == index.uncompressed_size
    struct.pack_into("<Q", data, record, smaller)
    sizes = struct.pack("<QQ", index.compressed_size, index.uncompressed_size)
    assert data.count(sizes) == 1  # the chunk index's compressed and uncompressed sizes
    at = data.index(sizes)
    struct.pack_into("<Q", data, at + 8, smaller)
    path.write_bytes(bytes(data))
    more = "more than " if compression == "lz4" else ""
    with pytest.raises(ValueError, match=rf"liar\.mcap: the chunk at byte "
                                         rf"{index.chunk_start_offset} would decompress to "
                                         rf"{more}\d+ bytes, it declares {smaller}"):
        read_rosbag(path)
