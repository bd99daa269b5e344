"""What a command may write (``dynid.cli._outputs.check_outputs``), checked before any work:
never a file an input stands on (the input itself, a robot file's URDF, a model's robot's
URDF; by resolved path and inode, not by spelling), never an empty name; and only path
arguments are looked up as paths (a long title is text, not "File name too long")."""

from __future__ import annotations

import os

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.excitation import FourierTrajectory


def _status(capsys, *argv: str) -> tuple[int, str]:
    try:
        status = main(list(argv))
    except SystemExit as exit_:  # argparse
        status = exit_.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


@pytest.fixture(scope="module")
def urdf_model(tmp_path_factory):
    """arm3 as a URDF, a log of it, and an OLS model whose robot is that URDF."""
    folder = tmp_path_factory.mktemp("urdf-model")
    urdf = folder / "arm3.urdf"
    trajectory = folder / "trajectory.yaml"
    trajectory.write_text(yaml.safe_dump(FourierTrajectory(
        a=0.4 * np.ones((3, 3)), b=0.2 * np.ones((3, 3)), q0=np.zeros(3),
        omega_f=2 * np.pi / 5).to_dict()))
    assert main(["export", "arm3", "-o", str(urdf)]) == 0
    assert main(["simulate", str(urdf), str(trajectory), "-o", str(folder / "log.csv"),
                 "--duration", "10", "--rate", "200", "--noise", "0.01", "--seed", "1"]) == 0
    assert main(["identify", str(urdf), str(folder / "log.csv"), "-o",
                 str(folder / "model.yaml")]) == 0
    assert main(["export", str(urdf), "-o", str(folder / "robot.yaml")]) == 0
    return folder


def _contents(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("source", ["robot.yaml", "model.yaml"])
def test_outputs_never_overwrite_the_urdf_an_input_stands_on(urdf_model, tmp_path, capsys,
                                                             source):
    folder = urdf_model
    before = _contents(folder)
    (folder / "sub").mkdir(exist_ok=True)
    hard = tmp_path / "hard.urdf"
    os.link(folder / "arm3.urdf", hard)
    for spelling in (folder / "arm3.urdf", folder / "sub" / ".." / "arm3.urdf", hard):
        status, err = _status(capsys, "export", str(folder / source), "-o", str(spelling))
        assert status == 2 and err.count("\n") == 1, err
        assert f"is an input of this command ('arm3.urdf', which '{folder / source}' " \
               "references)" in err
    assert _contents(folder) == before


def test_an_output_elsewhere_is_written(urdf_model, tmp_path, capsys):
    status, _ = _status(capsys, "export", str(urdf_model / "robot.yaml"), "-o",
                        str(tmp_path / "arm3.urdf"))
    assert status == 0 and (tmp_path / "arm3.urdf").is_file()


@pytest.mark.parametrize("argv", [
    ["identify", "arm3", "{log}", "-o", ""],
    ["identify", "arm3", "{log}", "-o", " "],
    ["simulate", "arm3", "{trajectory}", "-o", ""],
    ["export", "arm3", "-o", ""],
    ["codegen", "{model}", "-o", ""],
])
def test_an_empty_output_name_is_an_error_naming_it(urdf_model, tmp_path, capsys, argv):
    paths = {"log": urdf_model / "log.csv", "trajectory": urdf_model / "trajectory.yaml",
             "model": urdf_model / "model.yaml"}
    argv = [a.format(**paths) if "{" in a else a for a in argv]
    status, err = _status(capsys, *argv)
    assert status == 2
    assert err == "dynid: error: `-o` is empty: give the name of the file to write\n"


def test_long_text_options_are_text_not_paths(urdf_model, tmp_path, capsys):
    """Titles, prefixes and names of 300 bytes: accepted (they are not file names)."""
    long = "x" * 300
    status, err = _status(capsys, "export", "arm3", "-o", str(tmp_path / "a.yaml"),
                          "--name", long)
    assert status == 0, err
    status, err = _status(capsys, "codegen", str(urdf_model / "model.yaml"), "-o",
                          str(tmp_path / "a.h"), "--prefix", "p" + long)
    assert status == 0, err
    assert f"p{long}_inverse_dynamics" in (tmp_path / "a.h").read_text()
    status, err = _status(capsys, "report", str(urdf_model / "model.yaml"),
                          str(urdf_model / "log.csv"), "-o", str(tmp_path / "r.html"),
                          "--title", long)
    assert status == 0, err
    # a path argument that long is still a path, and its error is one line
    status, err = _status(capsys, "base", "y" * 300)
    assert status == 2 and err.startswith("dynid: error: ") and err.count("\n") == 1


# -- a full disk names the output it stopped (issue 31) ------------------------------------------

def _disk_full_after(monkeypatch, nbytes: int) -> None:
    """Every text or bytes write through pathlib fills the disk after ``nbytes`` bytes: the
    part before is on disk, then ENOSPC (which names no file, as a real write's does not)."""
    import errno
    from pathlib import Path

    def write(path, data, mode):
        with open(path, mode) as handle:
            handle.write(data[:nbytes])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text",
                        lambda self, data, encoding=None, errors=None, newline=None:
                        write(self, data, "w"))
    monkeypatch.setattr(Path, "write_bytes", lambda self, data: write(self, data, "wb"))


def test_a_full_disk_names_the_output_and_leaves_no_part_of_it(tmp_path, monkeypatch):
    import errno

    from dynid._files import atomic_write, atomic_write_all

    kept = tmp_path / "kept.txt"
    kept.write_text("before")
    _disk_full_after(monkeypatch, 3)
    for writes in ([(tmp_path / "new.txt", lambda tmp: tmp.write_text("abcdef"))],
                   [(tmp_path / "first.txt", lambda tmp: tmp.write_bytes(b"abcdef")),
                    (kept, lambda tmp: tmp.write_text("after"))]):
        with pytest.raises(OSError) as error:
            atomic_write_all(writes)
        assert error.value.errno == errno.ENOSPC
        assert error.value.filename == str(writes[0][0])
        assert str(writes[0][0]) in str(error.value)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    monkeypatch.undo()
    assert kept.read_text() == "before"
    # the write is whole, the rename onto the output fails: named by the output, not the
    # temporary file the rename started from
    _fail_renames(monkeypatch)
    with pytest.raises(OSError) as error:
        atomic_write(tmp_path / "new.txt", lambda tmp: tmp.write_text("abcdef"))
    assert error.value.errno == errno.EROFS and error.value.filename == str(tmp_path / "new.txt")
    assert error.value.filename2 is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]


def _fail_renames(monkeypatch) -> None:
    """From now on, renaming a file fails as on a file system gone read-only."""
    import errno
    from pathlib import Path

    def replace(self, target):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self), str(target))

    monkeypatch.setattr(Path, "replace", replace)


def test_a_full_disk_in_a_command_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    output = tmp_path / "arm3.urdf"
    _disk_full_after(monkeypatch, 100)
    status, err = _status(capsys, "export", "arm3", "-o", str(output))
    assert status == 2
    assert err == f"dynid: error: {str(output)!r}: No space left on device\n"
    assert list(tmp_path.iterdir()) == []
