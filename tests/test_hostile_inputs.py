"""Hostile and broken inputs: every reader and every command ends in a result or a one-line
ValueError, never another exception, never a hang, never an output file on failure.

The fuzz budget is small here (``DYNID_FUZZ_EXAMPLES``, default 12 per reader); ``make fuzz``
runs the same properties with a large one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dynid._files import atomic_write_all
from dynid._reading import FileError, parse_yaml
from dynid.cli import main
from dynid.data import Dataset, read_dataset, read_static, write_dataset
from dynid.excitation import FourierTrajectory, load_poses, load_trajectory
from dynid.friction import NoFriction
from dynid.identification import identify
from dynid.model import load_model, save_model
from dynid.robot import load_robot, load_robot_file, load_urdf, save_robot

EXAMPLES = int(os.environ.get("DYNID_FUZZ_EXAMPLES", "12"))
TIMEOUT_S = 20  # per example: a reader that takes longer hangs
COUNTS: Counter = Counter()  # tried inputs by outcome, for `make fuzz`'s summary


@pytest.fixture(scope="module", autouse=True)
def fuzz_summary():
    """With DYNID_FUZZ_REPORT=FILE, the counts of tried inputs by outcome go to FILE."""
    yield
    report = os.environ.get("DYNID_FUZZ_REPORT")
    if report:
        Path(report).write_text(json.dumps({"tried": sum(COUNTS.values()), **COUNTS},
                                           indent=2) + "\n")


@contextlib.contextmanager
def time_limit(seconds: int):
    def expired(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def outcome(read, path: Path) -> str:
    """'ok' or the one-line message of a ValueError; anything else fails the test."""
    COUNTS["other"] += 1  # until shown otherwise: an exception or hang fails the test anyway
    with time_limit(TIMEOUT_S):
        try:
            read(path)
        except ValueError as error:
            message = str(error)
            assert message and "\n" not in message, f"not one line: {message!r}"
            COUNTS["other"] -= 1
            COUNTS["clear error"] += 1
            return message
    COUNTS["other"] -= 1
    COUNTS["result"] += 1
    return "ok"


# -- valid files, one per format dynid reads ------------------------------------------------------

def _log(n_samples: int = 400, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    t = np.arange(n_samples) / 200.0
    q = np.sin(np.outer(t, [1.0, 1.3, 0.7])) + 0.01 * rng.standard_normal((n_samples, 3))
    dq = np.cos(np.outer(t, [1.0, 1.3, 0.7]))
    ddq = -q
    robot = load_robot("arm3")
    from dynid.dynamics import rnea

    return Dataset(t=t, q=q, dq=dq, ddq=ddq, tau=rnea(robot, q, dq, ddq))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("valid")
    robot = load_robot("arm3")
    save_robot(robot, folder / "robot.yaml")
    data = _log()
    write_dataset(folder / "log.csv", data)
    write_dataset(folder / "log.npz", data)
    q = data.q[:20]
    from dynid.dynamics import gravity_torque, mass_matrix

    np.savez(folder / "static.npz", q=q, M=mass_matrix(robot, q), g=gravity_torque(robot, q))
    trajectory = FourierTrajectory(a=np.zeros((3, 2)), b=0.1 * np.ones((3, 2)), q0=np.zeros(3),
                                   omega_f=2 * np.pi / 10.0)
    (folder / "trajectory.yaml").write_text(yaml.safe_dump(trajectory.to_dict()))
    np.savetxt(folder / "poses.txt", q)
    save_model(identify(robot, data), folder / "model.yaml")
    from dynid.export import export_robot

    export_robot(robot, folder / "robot.urdf")
    return {path.name: path for path in folder.iterdir()}


READERS = {
    "robot.yaml": load_robot_file,
    "model.yaml": load_model,
    "log.csv": read_dataset,
    "log.npz": read_dataset,
    "static.npz": read_static,
    "trajectory.yaml": load_trajectory,
    "poses.txt": load_poses,
    "robot.urdf": load_urdf,
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_valid_files_read(files, name):
    assert outcome(READERS[name], files[name]) == "ok"


# -- fuzzing: truncations, bit flips, inserted and random bytes -----------------------------------

@st.composite
def mutated(draw, original: bytes) -> bytes:
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "random", "replace", "blank"]))
    data = bytearray(original)
    if kind == "blank":  # whitespace and blank lines at either end, or instead of the body
        pad = draw(st.text(alphabet=" \t\r\n", min_size=1, max_size=40)).encode()
        cut = draw(st.integers(0, len(data)))
        return draw(st.sampled_from([pad + original, original + pad,
                                     bytes(data[:cut]) + pad]))
    if kind == "truncate":
        return bytes(data[:draw(st.integers(0, len(data)))])
    if kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            k = draw(st.integers(0, len(data) - 1))
            data[k] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "insert":
        k = draw(st.integers(0, len(data)))
        return bytes(data[:k] + draw(st.binary(min_size=1, max_size=64)) + data[k:])
    if kind == "replace":  # a token swapped for an extreme, wrong-typed or Unicode value
        text = original.decode("utf-8", errors="surrogateescape")
        k = draw(st.integers(0, max(len(text) - 1, 0)))
        value = draw(st.sampled_from(["1e999", "-1e308", "nan", ".inf", "null", "[]", "{}",
                                      "'x'", "1_0", "0x10", "- - -", "*a", "&a [", ":",
                                      "\t", "\x00", "010", "1:30", "yes", "off", "0o17",
                                      "2001-12-14", "!!binary AA==", "１", "٣", "²", "\u2003",
                                      "\x1c", "\u2028"]))
        return (text[:k] + value + text[k + 1:]).encode("utf-8", errors="surrogateescape")
    return draw(st.binary(max_size=4096))


@pytest.mark.parametrize("name", sorted(READERS))
def test_fuzzed_files_give_a_result_or_one_line_error(files, name, tmp_path_factory):
    original = files[name].read_bytes()
    folder = tmp_path_factory.mktemp("fuzz")
    target = folder / name

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(original))
    def check(data: bytes) -> None:
        target.write_bytes(data)
        outcome(READERS[name], target)

    check()


# -- hostile documents, each named --------------------------------------------------------------

BILLION_LAUGHS = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{b}: &{b} [*{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}]"
       for a, b in zip("abcdefgh", "bcdefghi", strict=True)]
)


# dynid's own checks are matched by their words; where PyYAML refuses the document itself, only
# the behaviour (its words change between releases: the libyaml of PyYAML 6.0.4 stops a flow
# 1000 levels deep with its own message): one line naming the file and the line
ONE_LINE = r"[^\n]*\Z"


@pytest.mark.parametrize(("text", "message"), [
    (BILLION_LAUGHS, rf"\Adoc\.yaml:\d+: (more than \d+ nodes with its aliases expanded|more "
                     rf"than 64 aliases){ONE_LINE}"),
    ("[" * 100 + "]" * 100, rf"\Adoc\.yaml:1: nested deeper than 64 levels{ONE_LINE}"),
    ("[" * 10_000 + "]" * 10_000, rf"\Adoc\.yaml:1(:\d+)?: \S{ONE_LINE}"),  # ours or libyaml's
    ("a: 1\nb: 2\na: 3\n", rf"\Adoc\.yaml:3: key 'a' appears twice{ONE_LINE}"),
    ("a: !!python/object:os.system ls\n", rf"\Adoc\.yaml:1:4: \S{ONE_LINE}"),  # no Python tags
    ("a: [1, 2\nb: 3\n", rf"\Adoc\.yaml:2:\d+: \S{ONE_LINE}"),
], ids=["billion-laughs", "nested-100", "nested-10000", "repeated-key", "python-tag",
        "unclosed-flow"])
def test_hostile_yaml_is_refused_fast(text, message):
    with time_limit(5), pytest.raises(FileError, match=message):
        parse_yaml(text, source="doc.yaml")


@pytest.mark.parametrize("reader", [load_robot_file, load_model, load_trajectory])
def test_billion_laughs_in_every_yaml_reader(tmp_path, reader):
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS)
    assert "aliases" in outcome(reader, path)


def test_special_files_are_refused_before_reading(tmp_path):
    for reader in (load_robot_file, read_dataset, load_model, load_urdf, load_poses):
        assert "not a regular file" in outcome(reader, Path("/dev/zero"))
    assert "is a folder" in outcome(load_robot_file, tmp_path)


def test_sparse_gigabyte_csv_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "sparse.csv"
    with path.open("wb") as handle:
        handle.truncate(2**30)
    assert "longer than" in outcome(read_dataset, path)


def _npz_with_header(path: Path, header: dict, payload: bytes = b"") -> None:
    from numpy.lib import format as npy

    with zipfile.ZipFile(path, "w") as archive:
        for key in ("t", "q", "dq", "tau"):
            with archive.open(f"{key}.npy", "w") as member:
                npy.write_array_header_1_0(member, header)
                member.write(payload)


def test_npz_header_that_declares_more_than_the_file_holds(tmp_path):
    path = tmp_path / "huge.npz"
    _npz_with_header(path, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 7)})
    message = outcome(read_dataset, path)
    assert "its header declares (1000000000000, 7) float64" in message
    assert "the archive member holds 0 B" in message


def test_npz_with_pickled_objects_is_refused(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, t=np.array([object()] * 3, dtype=object), q=np.zeros((3, 1)),
             dq=np.zeros((3, 1)), tau=np.zeros((3, 1)))
    assert "holds Python objects" in outcome(read_dataset, path)


def test_truncated_and_bit_flipped_npz(files, tmp_path):
    data = files["log.npz"].read_bytes()
    path = tmp_path / "bad.npz"
    path.write_bytes(data[: len(data) // 2])
    assert "not a readable NPZ" in outcome(read_dataset, path)
    flipped = bytearray(data)
    flipped[200] ^= 0x10  # inside the first array's data: a CRC error
    path.write_bytes(bytes(flipped))
    assert "corrupt" in outcome(read_dataset, path) or "Bad CRC" in outcome(read_dataset, path)
    unknown = bytearray(data)  # "version needed to extract" 10.9 in the central directory
    directory = unknown.index(b"PK\x01\x02")
    unknown[directory + 6] = 109
    path.write_bytes(bytes(unknown))
    assert "zip file version 10.9" in outcome(read_dataset, path)  # found by make fuzz


@pytest.mark.parametrize(("values", "message"), [
    ({}, "`t` is empty"),
    ({"tau": 1e300}, r"`tau` has 1e\+300 .* beyond 1e\+09"),
])
def test_degenerate_logs_are_named(tmp_path, values, message):
    n = 0 if not values else 5
    arrays = {"t": np.arange(n) / 100.0, "q": np.zeros((n, 2)), "dq": np.zeros((n, 2)),
              "tau": np.full((n, 2), values.get("tau", 0.0))}
    path = tmp_path / "log.npz"
    np.savez(path, **arrays)
    assert message and outcome(read_dataset, path) != "ok"
    with pytest.raises(ValueError, match=message):
        read_dataset(path)


def test_robot_file_schema_is_strict(files, tmp_path):
    spec = yaml.safe_load(files["robot.yaml"].read_text())
    spec["gravty"] = spec.pop("gravity")
    path = tmp_path / "misspelt.yaml"
    path.write_text(yaml.safe_dump(spec))
    assert "unknown key 'gravty'; did you mean 'gravity'?" in outcome(load_robot_file, path)
    spec = yaml.safe_load(files["robot.yaml"].read_text())
    spec["inertia"]["links"][1]["inertia"] = [1.0, 0.0, 0.0, 1.0, 0.0, 5.0]  # Izz > Ixx + Iyy
    path.write_text(yaml.safe_dump(spec))
    assert "inertia.links[1]` is not a physical body" in outcome(load_robot_file, path)


def test_pi_expressions_in_robot_files(files, tmp_path):
    text = files["robot.yaml"].read_text()
    spec = yaml.safe_load(text)
    spec["kinematics"]["joints"][1]["alpha"] = "-pi/2"
    spec["kinematics"]["joints"][2]["theta"] = "3*pi/4"
    path = tmp_path / "pi.yaml"
    path.write_text(yaml.safe_dump(spec))
    robot = load_robot_file(path)
    assert robot.table[1].alpha == -np.pi / 2
    assert robot.table[2].offset == 3 * np.pi / 4
    spec["kinematics"]["joints"][1]["alpha"] = "pi/0"
    path.write_text(yaml.safe_dump(spec))
    assert "divides by zero" in outcome(load_robot_file, path)


@pytest.mark.parametrize("edit", ["delete", "rename", "duplicate", "inf", "terms-list"])
def test_tampered_model_files_are_refused(files, tmp_path, edit):
    spec = yaml.safe_load(files["model.yaml"].read_text())
    rows = spec["base_parameters"]["coefficients"]
    if edit == "delete":
        del rows[3]
    elif edit == "rename":
        rows[3]["name"], rows[4]["name"] = rows[4]["name"], rows[3]["name"]
    elif edit == "duplicate":
        rows.append(dict(rows[0]))
    elif edit == "inf":
        rows[0]["value"] = float("inf")
    else:
        rows[0]["terms"] = list(rows[0]["terms"])
    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump(spec))
    message = outcome(load_model, path)
    assert message != "ok" and message.startswith("`path`: model.yaml: ")


def test_model_finds_its_urdf_beside_it_after_a_move(files, tmp_path):
    from dynid.data import read_dataset as read

    urdf_robot = load_urdf(files["robot.urdf"])
    first = tmp_path / "a"
    first.mkdir()
    (first / "robot.urdf").write_bytes(files["robot.urdf"].read_bytes())
    # rigid body only: the short log does not reverse every joint (Coulomb would not separate)
    model = identify(load_urdf(first / "robot.urdf"), read(files["log.npz"]),
                     friction=NoFriction(3))
    save_model(model, first / "model.yaml")
    assert yaml.safe_load((first / "model.yaml").read_text())["robot"]["urdf"] == "robot.urdf"
    moved = tmp_path / "b"
    first.rename(moved)
    loaded = load_model(moved / "model.yaml")
    assert loaded.robot.n_joints == urdf_robot.n_joints
    (moved / "robot.urdf").write_text((moved / "robot.urdf").read_text() + "\n")
    assert "changed since the model was saved" in outcome(load_model, moved / "model.yaml")


# -- outputs that never destroy -----------------------------------------------------------------

def run_cli(capsys, *argv: str) -> tuple[int, str]:
    with time_limit(60):
        try:
            status = main(list(argv))
        except SystemExit as exit_:  # argparse
            status = exit_.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


def test_outputs_that_would_destroy_are_refused_before_work(files, tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_bytes(files["log.csv"].read_bytes())
    before = log.read_bytes()
    status, err = run_cli(capsys, "simulate", "arm3", str(log), "-o", str(log))
    assert status == 2 and "is an input of this command" in err
    assert log.read_bytes() == before
    robot = tmp_path / "r.yaml"
    robot.write_bytes(files["robot.yaml"].read_bytes())
    status, err = run_cli(capsys, "excite", str(robot), "-o", str(tmp_path / "r.csv"))
    assert status == 2 and "`-o (its .yaml)`" in err and "is an input" in err
    hard = tmp_path / "hard.csv"
    os.link(log, hard)
    status, err = run_cli(capsys, "simulate", "arm3", str(log), "-o", str(hard))
    assert status == 2 and "is an input" in err
    link = tmp_path / "link.yaml"
    link.symlink_to(tmp_path / "elsewhere.yaml")
    status, err = run_cli(capsys, "identify", "arm3", str(log), "-o", str(link))
    assert status == 2 and "is a symbolic link" in err
    status, err = run_cli(capsys, "identify", "arm3", str(log), "-o", "/dev/null")
    assert status == 2 and "not a regular file" in err
    status, err = run_cli(capsys, "identify", "arm3", str(log), "-o", str(tmp_path))
    assert status == 2 and "is a folder" in err
    status, err = run_cli(capsys, "identify", "arm3", str(log), "-o", str(tmp_path / "m.txt"))
    assert status == 2 and "must end in .yaml or .yml" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.csv", "link.yaml", "log.csv",
                                                          "r.yaml"]


def test_files_written_together_appear_together(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("old a")

    def fail(tmp: Path) -> None:
        raise ValueError("the second writer fails")

    with pytest.raises(ValueError, match="second writer"):
        atomic_write_all([(first, lambda tmp: tmp.write_text("new a")), (second, fail)])
    assert first.read_text() == "old a" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temporary left
    atomic_write_all([(first, lambda tmp: tmp.write_text("new a")),
                      (second, lambda tmp: tmp.write_text("new b"))])
    assert first.read_text() == "new a" and second.read_text() == "new b"


# -- every numeric option checked before work ---------------------------------------------------

OPTIONS = [
    ("excite", "--harmonics"), ("excite", "--period"), ("excite", "--rate"),
    ("excite", "--grid-rate"), ("excite", "--starts"), ("excite", "--iterations"),
    ("excite", "--seed"), ("simulate", "--rate"), ("simulate", "--duration"),
    ("simulate", "--jitter"), ("simulate", "--drop"), ("simulate", "--noise"),
    ("identify", "--lasso"), ("identify", "--max-samples"), ("identify", "--resample"),
    ("identify", "--cutoff"), ("identify", "--order"), ("identify", "--trim"),
    ("identify", "--validate"), ("identify", "--kv"), ("validate", "--poses"),
    ("retrieve", "--restarts"), ("retrieve", "--stages"), ("demo", "--iterations"),
    ("demo", "--duration"), ("friction", "--max-samples"),
]
POSITIONALS = {"excite": ["absent.yaml", "-o", "{tmp}/t.csv"],
               "simulate": ["absent.yaml", "absent.csv", "-o", "{tmp}/s.csv"],
               "identify": ["absent.yaml", "absent.csv"],
               "validate": ["absent.yaml", "absent.csv"],
               "retrieve": ["absent.yaml", "absent.yaml"],
               "demo": ["-o", "{tmp}/demo"],
               "friction": ["absent.yaml", "absent.csv"]}


@settings(max_examples=max(EXAMPLES * 4, 40), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(option=st.sampled_from(OPTIONS),
       value=st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e308", "1e9",
                                        "1e12", "abc", "", "0x10", "1_0", "-0"]),
                       st.floats(allow_nan=True, allow_infinity=True).map(repr),
                       st.integers(-10**20, 10**20).map(str)))
def test_numeric_options_fail_cleanly_before_work(option, value, tmp_path, capsys):
    command, flag = option
    positional = [a.replace("{tmp}", str(tmp_path)) for a in POSITIONALS[command]]
    if command == "demo":  # a valid value would run the demo: keep only invalid ones
        positional += ["--rate", "-1"]
    COUNTS["other"] += 1
    status, err = run_cli(capsys, command, *positional, flag, value)
    assert status == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("dynid") and "error:" in last
    COUNTS["other"] -= 1
    COUNTS["clear error"] += 1
    assert not any(tmp_path.iterdir())


# -- the broken-file corpus through every command that reads it ---------------------------------

def _corpus(files: dict[str, Path], folder: Path) -> dict[str, Path]:
    """One file per class of the issue's corpus, each of the format a command expects."""
    folder.mkdir()
    corpus = {}
    npz = files["log.npz"].read_bytes()
    corpus["truncated.npz"] = npz[: len(npz) // 3]
    flipped = bytearray(npz)
    flipped[300] ^= 0x04
    corpus["flipped.npz"] = bytes(flipped)
    corpus["binary.csv"] = bytes(range(256)) * 8
    corpus["bomb.yaml"] = BILLION_LAUGHS.encode()
    corpus["deep.yaml"] = ("[" * 10_000 + "]" * 10_000).encode()
    corpus["broken.yaml"] = b"schema: dynid-model/1\nrobot: {name: [unclosed\n"
    model = yaml.safe_load(files["model.yaml"].read_text())
    model["base_parameters"]["coefficients"][0]["terms"] = ["m1"]
    corpus["terms-list.yaml"] = yaml.safe_dump(model).encode()
    paths = {}
    for name, data in corpus.items():
        paths[name] = folder / name
        paths[name].write_bytes(data)
    empty = folder / "empty.npz"
    np.savez(empty, t=np.zeros(0), q=np.zeros((0, 3)), dq=np.zeros((0, 3)), tau=np.zeros((0, 3)))
    one = folder / "one-sample.csv"
    one.write_text("t,q1,q2,q3,dq1,dq2,dq3,tau1,tau2,tau3\n0,0,0,0,0,0,0,1,1,1\n")
    zeros = folder / "zero-torques.npz"
    log = _log()
    np.savez(zeros, t=log.t, q=log.q, dq=log.dq, ddq=log.ddq, tau=np.zeros_like(log.tau))
    return {**paths, "empty.npz": empty, "one-sample.csv": one, "zero-torques.npz": zeros}


LOGS = ("truncated.npz", "flipped.npz", "binary.csv", "empty.npz", "one-sample.csv",
        "zero-torques.npz")
MODELS = ("bomb.yaml", "deep.yaml", "broken.yaml", "terms-list.yaml")


def _commands(files: dict[str, Path], out: Path) -> list[tuple[str, list[str]]]:
    log, model, robot = str(files["log.csv"]), str(files["model.yaml"]), "arm3"
    runs = []
    for bad in LOGS:
        runs += [(bad, ["data", "inspect", f"{{{bad}}}"]),
                 (bad, ["identify", robot, f"{{{bad}}}", "-o", str(out / "m.yaml")]),
                 (bad, ["validate", model, f"{{{bad}}}"]),
                 (bad, ["report", model, f"{{{bad}}}", "-o", str(out / "r.html")]),
                 (bad, ["payload", robot, model, f"{{{bad}}}"]),
                 (bad, ["friction", robot, f"{{{bad}}}", "--models", "sigmoid"]),
                 (bad, ["compare", robot, log, f"{{{bad}}}", "--methods", "ols", "--quiet",
                        "-o", str(out / "t.md")])]
    for bad in MODELS:
        runs += [(bad, ["validate", f"{{{bad}}}", log]),
                 (bad, ["report", f"{{{bad}}}", log, "-o", str(out / "r.html")]),
                 (bad, ["export", f"{{{bad}}}", "-o", str(out / "x.urdf")]),
                 (bad, ["retrieve", "panda", f"{{{bad}}}", "-o", str(out / "p.yaml")]),
                 (bad, ["payload", robot, f"{{{bad}}}", log]),
                 (bad, ["identify", f"{{{bad}}}", log]),
                 (bad, ["simulate", robot, f"{{{bad}}}", "-o", str(out / "s.csv")])]
    return runs


def test_broken_files_through_every_command(files, tmp_path, capsys):
    corpus = _corpus(files, tmp_path / "corpus")
    out = tmp_path / "out"
    out.mkdir()
    for bad, argv in _commands(files, out):
        argv = [str(corpus[bad]) if a == f"{{{bad}}}" else a for a in argv]
        COUNTS["other"] += 1
        status, err = run_cli(capsys, *argv)
        lines = err.strip().splitlines()
        if status == 0:  # a result: zero torques validate (relative errors undefined)
            COUNTS["result"] += 1
        else:
            assert status == 2 and len(lines) == 1 and lines[0].startswith("dynid: error: "), \
                (argv, err)
            assert not any(out.iterdir()), (argv, sorted(out.iterdir()))
            COUNTS["clear error"] += 1
        COUNTS["other"] -= 1
        for written in out.iterdir():  # a successful command's own output
            written.unlink()


# -- NPZ inflation: bounded before anything is inflated -----------------------------------------

def _deflated_log(path: Path, rows: int, joints: int, fill: float = 0.0) -> int:
    """A deflated NPZ log of constant arrays, written in 1 MiB pieces (no array of its size
    is ever allocated); returns the bytes it inflates to."""
    from numpy.lib import format as npy

    piece = np.full(1 << 17, fill).tobytes()
    total = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for key in ("t", "q", "dq", "tau"):
            shape = (rows,) if key == "t" else (rows, joints)
            left = int(np.prod(shape)) * 8
            total += left
            with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                npy.write_array_header_2_0(member, {"descr": "<f8", "fortran_order": False,
                                                    "shape": shape})
                while left:
                    member.write(piece[:min(left, len(piece))])
                    left -= min(left, len(piece))
    return total


def test_npz_bomb_is_refused_before_inflating(tmp_path, monkeypatch):
    """The issue's bomb, scaled down: 40 million rows of zeros inflate ~1000x; here 2 MiB of
    arrays against a floor lowered to 1 MiB (the ratio rule is the same at any size)."""
    import dynid._reading.npz as reading

    path = tmp_path / "bomb.npz"
    inflated = _deflated_log(path, 65_536, 3)
    assert inflated == 65_536 * 10 * 8
    ratio = inflated / path.stat().st_size
    assert ratio > reading.MAX_INFLATION_RATIO  # the file is a bomb by the rule's measure
    monkeypatch.setattr(reading, "INFLATION_FLOOR", 2**20)
    read = []
    original = reading._npy_array
    monkeypatch.setattr(reading, "_npy_array", lambda *a: read.append(a) or original(*a))
    message = outcome(read_dataset, path)
    assert message.startswith("bomb.npz: its compressed arrays would inflate to 5.0 MiB from ")
    assert f"({ratio:.0f}x), beyond the limit of 50x above 1.0 MiB" in message
    assert "save it uncompressed (np.savez)" in message
    assert not read  # refused from the headers: no array was inflated
    # below the floor the same file is read (a small constant log is no threat)
    monkeypatch.setattr(reading, "INFLATION_FLOOR", 2**23)
    assert "`t` must be strictly increasing" in outcome(read_dataset, path)
    assert len(read) == 4


def test_npz_beyond_the_memory_share_is_refused_from_its_headers(files, tmp_path,
                                                                 monkeypatch):
    import dynid._reading.limits as reading

    size = sum(a.nbytes for a in np.load(files["log.npz"]).values())
    monkeypatch.setattr(reading, "available_memory", lambda: 3 * size - 3)
    message = outcome(read_dataset, files["log.npz"])
    assert message.startswith("the arrays of log.npz (inflated) needs ")
    assert "more than a third of the memory available" in message and "--mmap" in message
    monkeypatch.setattr(reading, "available_memory", lambda: 3 * size)
    assert outcome(read_dataset, files["log.npz"]) == "ok"


def test_npz_member_that_inflates_beyond_its_declared_size(tmp_path):
    """A member whose deflate stream holds more than its zip entry declares (and its .npy
    header agrees with the declaration): zipfile stops at the declared size, the CRC fails."""
    from numpy.lib import format as npy

    path = tmp_path / "liar.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for key in ("t", "q", "dq", "tau"):
            with archive.open(f"{key}.npy", "w") as member:
                npy.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False,
                                                    "shape": (500,) if key == "t" else (500, 1)})
                member.write(np.arange(1000.0).tobytes())  # twice what the header says
        sizes = {info.filename: info.file_size for info in archive.infolist()}
    data = bytearray(path.read_bytes())
    patched = 0
    # local headers (name length at 26, name at 30, file_size at 22) and central entries
    # (name length at 28, name at 46, file_size at 24)
    for signature, length_at, name_at, size_at in ((b"PK\x03\x04", 26, 30, 22),
                                                   (b"PK\x01\x02", 28, 46, 24)):
        start = data.find(signature)
        while start >= 0:
            length = int.from_bytes(data[start + length_at:start + length_at + 2], "little")
            name = bytes(data[start + name_at:start + name_at + length]).decode()
            field = slice(start + size_at, start + size_at + 4)
            assert int.from_bytes(data[field], "little") == sizes[name]
            data[field] = (sizes[name] - 4000).to_bytes(4, "little")
            patched += 1
            start = data.find(signature, start + 4)
    assert patched == 8
    path.write_bytes(bytes(data))
    message = outcome(read_dataset, path)
    # the file, the array and zipfile's reason, on one line (not zipfile's words)
    assert re.fullmatch(r"liar\.npz: array 't' is corrupt: \S[^\n]*", message), message


# -- YAML 1.2 numbers: no octal, sexagesimal or yes/no surprises ---------------------------------

# plain scalars by what the YAML 1.2 core schema makes of them (yaml.org/spec/1.2.2, 10.3.2),
# each with its value worked out from the category, not from dynid's resolver
YAML_SCALARS = st.one_of(
    st.from_regex(r"\A[-+]?0[0-9]{1,6}\Z").map(lambda s: ("leading zero", s, int(s, 10))),
    st.from_regex(r"\A[-+]?[1-9][0-9]{0,12}\Z").map(lambda s: ("decimal", s, int(s, 10))),
    st.from_regex(r"\A[0-9]{1,3}(:[0-5][0-9]){1,2}\Z").map(lambda s: ("sexagesimal", s, s)),
    st.from_regex(r"\A0x[0-9a-fA-F]{1,8}\Z").map(lambda s: ("hex", s, int(s[2:], 16))),
    st.from_regex(r"\A0o[0-7]{1,8}\Z").map(lambda s: ("octal", s, int(s[2:], 8))),
    st.from_regex(r"\A0b[01]{1,8}\Z").map(lambda s: ("binary (1.1 only)", s, s)),
    st.from_regex(r"\A[0-9]{1,3}(_[0-9]{3}){1,2}\Z").map(lambda s: ("underscores", s, s)),
    st.from_regex(r"\A[0-9]{1,3}[eE][-+]?[0-9]{1,2}\Z").map(lambda s: ("exponent", s,
                                                                         float(s))),
    st.from_regex(r"\A[0-9]{1,3}\.[0-9]{0,3}\Z").map(lambda s: ("point", s, float(s))),
    st.sampled_from(["yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off",
                     "OFF", "y", "n", "Y", "N"]).map(lambda s: ("1.1 boolean", s, s)),
    st.sampled_from(["true", "True", "TRUE"]).map(lambda s: ("boolean", s, True)),
    st.sampled_from(["false", "False", "FALSE"]).map(lambda s: ("boolean", s, False)),
    st.sampled_from(["~", "null", "Null", "NULL"]).map(lambda s: ("null", s, None)),
    st.sampled_from(["2001-12-14", "2001-12-14t21:59:43.10-05:00", "=", "<<x"]).map(
        lambda s: ("1.1 other", s, s)),
)


@settings(max_examples=max(EXAMPLES * 10, 120), deadline=None, derandomize=True,
          database=None)
@given(YAML_SCALARS)
def test_yaml_plain_scalars_are_read_as_yaml_1_2(scalar):
    category, text, expected = scalar
    got = parse_yaml(f"value: {text}\nlist: [{text}]\n", source="doc.yaml")
    for value in (got["value"], got["list"][0]):
        assert type(value) is type(expected) and value == expected, (category, text, value)


@pytest.mark.parametrize(("text", "message"), [
    ("a: !!int 1:30", "doc.yaml:1:4: '1:30' is not a YAML 1.2 integer"),
    ("a: !!bool yes", "doc.yaml:1:4: 'yes' is not a YAML 1.2 boolean"),
    ("a: !!float 1_0", "doc.yaml:1:4: '1_0' is not a YAML 1.2 float"),
    ("a: !!timestamp 2001-12-14", r"^doc\.yaml:1:4: \S[^\n]*$"),
    ("a: !!binary aGVsbG8=", r"^doc\.yaml:1:4: \S[^\n]*$"),
    ("10: a\n010: b\n", "doc.yaml:2:1: key 10 appears twice in one mapping .first at line 1"),
])
def test_yaml_explicit_tags_and_retyped_keys(text, message):
    with pytest.raises(FileError, match=message):
        parse_yaml(text, source="doc.yaml")


def test_yaml_numbers_in_the_readers_fields(files, tmp_path):
    """``1:30`` (90 in YAML 1.1) and ``yes`` (true) are strings, refused by field name; ``010``
    (8 in YAML 1.1) is ten."""
    text = files["robot.yaml"].read_text()
    assert "d: 0.3," in text
    path = tmp_path / "robot.yaml"
    for value, result in (("1:30", "`kinematics.joints[0].d` must be a number, got '1:30'"),
                          ("yes", "`kinematics.joints[0].d` must be a number, got 'yes'"),
                          ("010", "ok")):
        path.write_text(text.replace("d: 0.3,", f"d: {value},", 1))
        assert outcome(load_robot_file, path).endswith(result) or result == "ok"
    assert load_robot_file(path).table[0].d == 10.0


YAML_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
              st.floats(allow_nan=False), st.text(max_size=12),
              st.from_regex(r"\A(0[0-7]{1,3}|[0-9]:[0-5][0-9]|0x1F|0o7|1e5|yes|off|1_0)\Z")),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=max(EXAMPLES * 10, 120), deadline=None, derandomize=True,
          database=None)
@given(YAML_VALUES)
def test_dump_yaml_reads_back_the_same_in_yaml_1_1_and_1_2(value):
    from dynid._reading import dump_yaml

    text = dump_yaml(value)
    assert parse_yaml(text) == value
    assert yaml.safe_load(text) == value


def test_what_dynid_writes_reads_the_same_in_yaml_1_1_and_1_2(files, tmp_path):
    """Every YAML file dynid writes or ships types each scalar alike under YAML 1.1 (PyYAML's
    own loader, other tools) and YAML 1.2 (dynid's): nothing it writes changes meaning."""
    from dynid.excitation import save_trajectory

    shipped = sorted((Path(__file__).parents[1] / "src/dynid/robot/data").glob("*.yaml"))
    assert len(shipped) >= 4
    trajectory = load_trajectory(files["trajectory.yaml"])
    save_trajectory(tmp_path / "excite.csv", trajectory, duration=10.0, rate=100.0,
                    extra={"note": "yes", "count": "010"}, allow_moving_ends=True)
    assert load_trajectory(tmp_path / "excite.yaml").to_dict() == trajectory.to_dict()
    for path in [files["robot.yaml"], files["model.yaml"], files["trajectory.yaml"],
                 tmp_path / "excite.yaml", *shipped]:
        text = path.read_text()
        assert repr(parse_yaml(text)) == repr(yaml.safe_load(text)), path.name


# -- CSV cells and column names in other digits and spaces ---------------------------------------

ODD_CHARACTERS = "０１２３٠١٢३²³¹⁰₁½\u00a0\u2003\u3000\x1c\x1f\x85\u2028\x0b\x0c\ufeffe+-._"
CSV_CELLS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-10**6, 10**6).map(str),
    st.text(alphabet="0123456789" + ODD_CHARACTERS, min_size=1, max_size=6),
)


@settings(max_examples=max(EXAMPLES * 10, 120), deadline=None, derandomize=True,
          database=None)
@given(st.lists(st.lists(CSV_CELLS, min_size=3, max_size=3), min_size=1, max_size=6))
def test_csv_cells_convert_exactly_or_are_named(tmp_path_factory, rows):
    """Every cell is read as Python reads an ASCII decimal, or the first one that is not is
    named by file:line:column; Unicode digits (Python's float() takes ``１`` and ``٣``) never
    reach a number silently nor a traceback."""
    from dynid._reading import read_csv

    path = tmp_path_factory.mktemp("csv") / "cells.csv"
    lines = ["a,b,c"] + [",".join(row) for row in rows]
    path.write_bytes(("\n".join(lines) + "\n").encode())
    ascii_number = r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*"
    import re

    def good(cell: str) -> bool:
        return bool(re.fullmatch(ascii_number, cell, re.ASCII)) and np.isfinite(float(cell))

    with time_limit(TIMEOUT_S):
        try:
            _, values = read_csv(path)
        except FileError as error:
            message = str(error)
            assert "\n" not in message
            bad = [(k, j) for k, row in enumerate(rows) for j, cell in enumerate(row)
                   if not good(cell)]
            if not any(line.strip() for line in lines[1:]) or not bad:
                return  # whitespace-only rows (no data), or a row split by a Unicode newline
            k, j = bad[0]
            assert message.startswith(f"cells.csv:{k + 2}:{j + 1} (column "), message
            return
    assert all(good(cell) for row in rows for cell in row)
    kept = [row for row in rows if ",".join(row).strip()]
    np.testing.assert_array_equal(values, [[float(cell) for cell in row] for row in kept])


@pytest.mark.parametrize("name", ["q²", "q١", "q１", "q₁", "q½"])
def test_column_names_with_other_digits_are_not_joints(tmp_path, name):
    path = tmp_path / "log.csv"
    path.write_text(f"t,{name},dq1,tau1\n" + "".join(f"{k / 100},0,0,0\n" for k in range(20)))
    assert "got 0 q, 1 dq, 1 tau" in outcome(read_dataset, path)
    mapped = outcome(lambda p: read_dataset(p, columns="t=t,q=q*,dq=dq*,tau=tau*"), path)
    assert "name different joints" in mapped


@settings(max_examples=max(EXAMPLES * 10, 120), deadline=None, derandomize=True,
          database=None)
@given(st.lists(st.lists(CSV_CELLS, min_size=2, max_size=2), min_size=1, max_size=5),
       st.sampled_from([" ", "\t", ",", ", "]), st.sampled_from(["\n", "\r\n", "\r"]))
def test_text_tables_convert_exactly_or_name_the_line(rows, separator, newline):
    """Pose and Panda log files (``parse_numbers``): ASCII decimals between ASCII separators,
    each read as Python reads it, else the line is named; a Unicode space or line separator
    neither splits a value nor a line."""
    import re

    from dynid._reading import parse_numbers

    text = newline.join(separator.join(row) for row in rows) + newline
    values_of = [[v for v in re.split(r"[ \t\f\v,]+", separator.join(row)) if v]
                 for row in rows]
    ascii_number = r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*"
    good = all(re.fullmatch(ascii_number, v, re.ASCII) and np.isfinite(float(v))
               for values in values_of for v in values)
    kept = [values for values in values_of if values]
    try:
        table = parse_numbers(text, "poses.txt")
    except FileError as error:
        message = str(error)
        assert message.startswith("poses.txt") and "\n" not in message
        assert not good or not kept or len({len(v) for v in kept}) > 1, message
        return
    assert good and kept
    np.testing.assert_array_equal(table, [[float(v) for v in values] for values in kept])


@settings(max_examples=max(EXAMPLES * 2, 24), deadline=None, derandomize=True, database=None)
@given(rows=st.integers(1, 30_000), joints=st.integers(1, 4), constant=st.booleans(),
       compressed=st.booleans())
@example(rows=20_000, joints=3, constant=True, compressed=True)  # a bomb
@example(rows=20_000, joints=3, constant=True, compressed=False)  # the same, stored: read
@example(rows=20_000, joints=3, constant=False, compressed=True)  # a log
def test_npz_inflation_is_bounded_before_reading(tmp_path_factory, rows, joints, constant,
                                                 compressed):
    """Any NPZ log: a compressed one whose arrays would inflate beyond ``MAX_INFLATION_RATIO``
    times its size (and the floor, lowered here to 64 KiB) is refused before an array is
    inflated; every other is read (or refused for what its values are, never for its size)."""
    from unittest import mock

    import dynid._reading.npz as reading

    rng = np.random.default_rng(rows)
    values = np.zeros((rows, joints)) if constant else rng.standard_normal((rows, joints))
    arrays = {"t": np.arange(rows) / 100.0, "q": values, "dq": values, "tau": values}
    path = tmp_path_factory.mktemp("npz") / "log.npz"
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    inflated = sum(a.nbytes for a in arrays.values())
    bomb = compressed and inflated > max(2**16, reading.MAX_INFLATION_RATIO
                                         * path.stat().st_size)
    read = []
    original = reading._npy_array
    with mock.patch.object(reading, "INFLATION_FLOOR", 2**16), \
            mock.patch.object(reading, "_npy_array",
                              lambda *a: read.append(a) or original(*a)):
        message = outcome(read_dataset, path)
    if bomb:
        assert "compressed arrays would inflate to" in message and not read, message
    else:
        assert "inflate" not in message and len(read) == 4, message


# -- the benchmark's stored runs (issue 31) -------------------------------------------------------

STORED_RUN = {"profile": "standardNoise", "method": "ols", "family": "linear", "draw": None,
              "key": "draw-all", "ok": True, "seconds": 0.18, "converged": True,
              "status": "least squares", "iterations": 1, "parameter_error": 0.23,
              "signed_error": [0.1, -0.2, None], "coefficient_names": ["a", "b", "c"],
              "torque_error": 0.08, "torque_rms": 0.4}
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3), max_leaves=6)


@st.composite
def stored_runs(draw) -> bytes:
    """A stored run as a killed worker, a full disk, a bad sector or a hand edit leaves it:
    truncated, bytes overwritten, a field gone, a field of another kind, another JSON value."""
    record = dict(STORED_RUN, ok=draw(st.booleans()))
    text = json.dumps(record).encode()
    how = draw(st.sampled_from(["truncated", "bytes", "dropped", "retyped", "other"]))
    if how == "truncated":
        return text[:draw(st.integers(0, len(text) - 1))]
    if how == "bytes":
        k = draw(st.integers(0, len(text) - 1))
        return text[:k] + draw(st.binary(min_size=1, max_size=4)) + text[k + 1:]
    if how == "dropped":
        record.pop(draw(st.sampled_from(sorted(record))))
    elif how == "retyped":
        record[draw(st.sampled_from(sorted(record)))] = draw(JSON_VALUES)
    else:
        return json.dumps(draw(JSON_VALUES)).encode()
    return json.dumps(record).encode()


def test_stored_benchmark_runs_give_a_record_or_an_error_naming_the_file(tmp_path_factory):
    """What the stored-run reader accepts, the table summarises; what it refuses is one line
    naming the file (never a KeyError or a JSON parser's position without the file)."""
    from dynid.benchmark.runner import read_record
    from dynid.benchmark.table import summarise

    path = tmp_path_factory.mktemp("runs") / "draw-all.json"

    @settings(max_examples=max(EXAMPLES, 60), deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(stored_runs())
    @example(b"")
    @example(b'{"profile": "sta')
    @example(json.dumps({k: v for k, v in STORED_RUN.items() if k != "profile"}).encode())
    @example(b'\xff' + json.dumps(STORED_RUN).encode())
    @example(b"[" * 100_000)
    def check(data: bytes) -> None:
        path.write_bytes(data)
        message = outcome(lambda p: read_record(p, "standardNoise", "ols", "draw-all"), path)
        if message == "ok":
            summarise([read_record(path, "standardNoise", "ols", "draw-all")], draws=2)
        else:
            assert str(path) in message, message

    check()
