"""ROS 2 bags: ``sensor_msgs/msg/JointState`` messages of an MCAP file (the default storage of
``ros2 bag record``) as a Dataset.

Each message's ``name`` maps its ``position``, ``velocity`` and ``effort`` to joints, so the
order may change from message to message and other joints (a gripper's) may be present: the
joints asked for (``joints``, by name; default: those of the first message, in its order) are
picked out of every message. Time stamps are the messages' header stamps (the recording time
where a publisher leaves them zero); a log at an irregular rate is resampled by
``dynid.data.prepare``. Efforts are read as joint torques [N m] (revolute) or forces [N], or,
with ``effort="current"``, as motor currents [A] (``Dataset.effort``).

Read with the ``mcap`` and ``mcap-ros2-support`` libraries; the file is checked like every
other input (``dynid._reading``), and a corrupt bag is a one-line error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from dynid import _reading
from dynid._reading import MAX_TABLE_BYTES, FileError, check_allocation, regular_file
from dynid.data.dataset import EFFORTS, Dataset

__all__ = ["JOINT_STATE", "read_bag", "read_rosbag"]

JOINT_STATE = "sensor_msgs/msg/JointState"


def bag_file(path: Path) -> Path | None:
    """The MCAP file ``path`` names: itself (``.mcap``), or the one ``.mcap`` in the folder
    ``ros2 bag record`` writes; None when ``path`` is neither (a folder without one). A SQLite
    bag, or a folder of several, is a ValueError."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".db3":
        raise ValueError(f"`path`: {path.name} is a SQLite ROS 2 bag; dynid reads MCAP bags "
                         "(convert with `ros2 bag convert`, or record with `-s mcap`)")
    if suffix == ".mcap":
        return path
    if not path.is_dir():
        return None
    bags = sorted(path.glob("*.mcap"))
    if len(bags) > 1:
        raise ValueError(f"`path`: the bag folder {path.name} holds {len(bags)} MCAP files "
                         f"({', '.join(b.name for b in bags)}); give one of them")
    return bags[0] if bags else None


def stamp_seconds(stamp, record) -> float:
    """A message's header stamp [s], or its log time where the stamp is zero (unset)."""
    seconds = stamp.sec + 1e-9 * stamp.nanosec
    return seconds if seconds > 0 else record.log_time * 1e-9


def read_rosbag(path: str | Path, *, topic: str | None = None,
                joints: Sequence[str] | None = None, effort: str = "torque") -> Dataset:
    """The ``JointState`` messages of ``topic`` (default: the bag's only JointState topic)
    for ``joints`` (names; default: the first message's) as a Dataset ``t, q, dq, tau``;
    ``effort`` says what the messages' ``effort`` field holds: ``"torque"`` [N m] or
    ``"current"`` [A] (``dynid.data.EFFORTS``)."""
    if effort not in EFFORTS:
        raise ValueError(f"`effort` must be one of {', '.join(EFFORTS)} (what the bag's effort "
                         f"field holds), got {effort!r:.60}")

    def read(reader, summary, name: str):
        chosen = _topic(summary, topic, name)
        return chosen, _rows(reader.iter_decoded_messages(topics=[chosen]), joints, name,
                             chosen)

    path = regular_file(path, "ROS 2 bag")
    chosen, rows = read_bag(path, read)
    times, q, dq, tau, names = rows
    order = np.argsort(times, kind="stable")
    return Dataset(t=np.asarray(times)[order], q=np.asarray(q)[order], dq=np.asarray(dq)[order],
                   tau=np.asarray(tau)[order], effort=effort,
                   metadata={"source": str(path), "format": "ros2 bag", "topic": chosen,
                             "joint_names": list(names)})


T = TypeVar("T")


def read_bag(path: str | Path, read: Callable[[Any, Any, str], T]) -> T:
    """``read(reader, summary, name)`` on an MCAP bag opened with every check of this module:
    a regular file within ``MAX_TABLE_BYTES``, a summary section, chunks that inflate to no
    more than they declare and within ``MAX_INFLATION_RATIO`` of the file (``reader``: an
    mcap reader decoding ROS 2 messages; ``name``: the file's name for messages). What the
    third-party parser raises on a corrupt or unexpected file (inside ``read`` too) becomes
    one ``FileError`` line naming the file; ``read`` should return plain data and build
    validated objects after, so that their errors are not taken for a corrupt bag."""
    from mcap.exceptions import McapError
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    path = regular_file(path, "ROS 2 bag")
    check_allocation(path.stat().st_size, f"ROS 2 bag {str(path)!r}", MAX_TABLE_BYTES)
    name = path.name
    try:
        with path.open("rb") as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            summary = reader.get_summary()
            if summary is None:
                raise FileError(f"{name} has no summary section (an unfinished recording?); "
                                "reindex it with `ros2 bag reindex` or `mcap recover`")
            _check_inflation(summary, path)
            _check_chunks(stream, summary, name)
            return read(reader, summary, name)
    except FileError:
        raise
    except (McapError, OSError, ValueError, KeyError, IndexError, EOFError, TypeError,
            AttributeError, NotImplementedError, RuntimeError) as error:
        # the third-party parser's view of a corrupt or unexpected file, as one line
        detail = " ".join(str(error).split()) or type(error).__name__
        raise FileError(f"{name} is not a readable MCAP bag: {detail}") from None


# the decoded messages (Python lists of floats) take about this many times their bytes in
# the bag's uncompressed chunks (a 7-joint JointState: ~250 bytes serialized, ~900 decoded)
DECODED_PER_BYTE = 4


def _check_inflation(summary, path: Path) -> None:
    """The bag's chunks as their index declares them, before any is decompressed: within
    ``dynid._reading.MAX_INFLATION_RATIO`` of the file's size (beyond ``INFLATION_FLOOR``: a
    compression bomb) and, decoded, within half the available memory."""
    inflated = sum(int(index.uncompressed_size) for index in summary.chunk_indexes)
    _reading.check_inflation(inflated, path, f"{path.name}: its chunks would decompress",
                             "rewrite it without chunk compression (the mcap CLI) or record "
                             "it in pieces")
    check_allocation(DECODED_PER_BYTE * inflated,
                     f"the messages of {path.name} (decoded, ~{DECODED_PER_BYTE}x their "
                     "uncompressed bytes)", DECODED_PER_BYTE * MAX_TABLE_BYTES)


def _check_chunks(stream, summary, name: str) -> None:
    """Each compressed chunk inflates to no more than it declares (the mcap reader trusts the
    data: zstd allocates the size its frame states, lz4 inflates to the end), checked before
    any is decompressed by the reader: a zstd frame's stated size, an lz4 frame inflated
    here up to one byte past the declared size and dropped."""
    from mcap.data_stream import ReadDataStream
    from mcap.records import Chunk

    for index in summary.chunk_indexes:
        stream.seek(index.chunk_start_offset + 1 + 8)  # the opcode and the record's length
        chunk = Chunk.read(ReadDataStream(stream))
        declared = int(chunk.uncompressed_size)
        where = f"{name}: the chunk at byte {index.chunk_start_offset}"
        if declared != int(index.uncompressed_size):
            raise FileError(f"{where} declares {declared} bytes, its index "
                            f"{index.uncompressed_size}: a corrupt bag; rewrite it with the "
                            "mcap CLI (`mcap recover`)")
        inflated = None
        try:
            if chunk.compression == "zstd":
                import zstandard

                try:
                    size = zstandard.frame_content_size(chunk.data)  # -1: not stated
                except zstandard.ZstdError as error:
                    raise ValueError(error) from None
                inflated = None if size < 0 else size  # not stated: mcap's bound holds
            elif chunk.compression == "lz4":
                import lz4.frame

                inflated = len(lz4.frame.LZ4FrameDecompressor().decompress(
                    chunk.data, max_length=declared + 1))
        except ImportError:  # no codec: the mcap reader names the compression it lacks
            continue
        except (ValueError, RuntimeError) as error:  # the codec's view of corrupt data
            raise FileError(f"{where} is corrupt: {' '.join(str(error).split())}") from None
        if inflated is not None and inflated > declared:
            raise FileError(f"{where} would decompress to "
                            f"{'more than ' if chunk.compression == 'lz4' else ''}"
                            f"{inflated} bytes, it declares {declared}: a corrupt bag or a "
                            "compression bomb; dynid reads no further")


def _topic(summary, topic: str | None, name: str, kinds: Sequence[str] = (JOINT_STATE,),
           argument: str = "topic") -> str:
    """The topic to read (given as ``argument``, or the bag's only topic of one of the message
    types ``kinds``), from the bag's summary (its channels and schemas)."""
    schemas = {schema_id: schema.name for schema_id, schema in summary.schemas.items()}
    topics = {channel.topic: schemas.get(channel.schema_id, "?")
              for channel in summary.channels.values()}
    kind = " or ".join(kinds)
    states = sorted(t for t, message in topics.items() if message in kinds)
    if topic is not None:
        if topics.get(topic) not in kinds:
            what = f"is a {topics[topic]} topic" if topic in topics else "is not in the bag"
            raise FileError(f"{name}: `{argument}` {topic!r} {what}; its {kind} topics: "
                            f"{states or 'none'}")
        return topic
    if not states:
        listed = ", ".join(f"{t} ({message})" for t, message in sorted(topics.items())) or \
            "none"
        raise FileError(f"{name} has no {kind} topic (its topics: {listed})")
    if len(states) > 1:
        raise FileError(f"{name} has several {kind} topics {states}: choose one with "
                        f"`{argument}`")
    return states[0]


def _rows(messages, joints: Sequence[str] | None, name: str, topic: str,
          fields: Sequence[str] = ("position", "velocity", "effort")):
    """(times [s], then one list of rows per field of ``fields``, then the joint names) of the
    JointState ``messages``, each row the ``joints`` picked out of its message."""
    times: list[float] = []
    columns: dict[str, list] = {field: [] for field in fields}
    wanted: list[str] | None = list(joints) if joints is not None else None
    for _, _, record, message in messages:
        names = list(message.name)
        if wanted is None:
            wanted = names
            if not wanted:
                raise FileError(f"{name}: the first message on {topic} names no joint")
        index = {joint: k for k, joint in enumerate(names)}
        missing = [joint for joint in wanted if joint not in index]
        if missing:
            raise FileError(f"{name}: a message on {topic} at {record.log_time * 1e-9:.6f} s "
                            f"lacks the joints {missing} (it has {names})")
        pick = [index[joint] for joint in wanted]
        picked = {}
        for field in fields:
            values = list(getattr(message, field))
            if len(values) != len(names):
                raise FileError(f"{name}: a message on {topic} at {record.log_time * 1e-9:.6f} "
                                f"s has {len(values)} {field} values for {len(names)} joints "
                                f"(dynid needs {', '.join(fields)} for each)")
            picked[field] = [values[k] for k in pick]
        times.append(stamp_seconds(message.header.stamp, record))
        for field in fields:
            columns[field].append(picked[field])
    if not times:
        raise FileError(f"{name}: the topic {topic} holds no message")
    return times, *columns.values(), wanted
