"""The end-to-end demo on the Panda twin: every stage runs, every output is written and
loadable, and the figures are those of a working identification (on a short, coarse run)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from dynid.cli import main
from dynid.data.io import read_dataset
from dynid.excitation.trajectory import load_trajectory
from dynid.model.linear_model import load_model
from dynid.robot import load_urdf
from dynid.workflow.demo import DEMO_METHODS, DemoResult, format_summary, run_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo") / "out"
    with warnings.catch_warnings():  # a warning about dynid's own robots: an error, status 2
        warnings.simplefilter("error", UserWarning)
        code = main(["demo", "-o", str(folder), "--duration", "10",
                     "--iterations", "2", "--quiet", "--json"])
    return code, folder


def test_demo_runs_every_stage_and_identifies(demo):
    code, folder = demo
    assert code == 0
    payload = json.loads((folder / "summary.json").read_text())
    assert (payload["n_base_inertial"], payload["n_base_total"]) == (43, 64)
    assert payload["excitation_condition_number"] < 100
    assert max(payload["tracking_rms"]) < 0.02  # rad: the joint impedance tracks
    assert any(step.startswith("trimmed") for step in payload["preprocessing"])
    validation = payload["validation"]
    assert list(validation) == list(DEMO_METHODS)
    assert not validation["ols"]["physical"]
    for method in ("cls3", "retrieved"):  # full, physically consistent sets
        assert validation[method]["physical"] and validation[method]["consistent"], method
    # the models explain the validation log to about 1 % (the rest: sigmoid vs linear
    # friction), and the constrained fit generalises at least as well as OLS
    for method in DEMO_METHODS:
        assert validation[method]["relative_error_percent"] < 2.0, method
    assert (validation["cls3"]["relative_error_percent"]
            <= 1.05 * validation["ols"]["relative_error_percent"])
    assert np.all(np.array(payload["rmse_truth"]) < np.array(validation["ols"]["rmse"]))
    assert set(payload["seconds"]) >= {"excitation", "simulation", "identification",
                                       "retrieval", "validation", "outputs"}


def test_demo_outputs_load_back(demo):
    _, folder = demo
    payload = json.loads((folder / "summary.json").read_text())
    assert Path(payload["folder"]) == folder
    files = {role: folder / name for role, name in payload["files"].items()}
    assert sorted(path.name for path in folder.iterdir()) == sorted(payload["files"].values())
    assert all(path.is_file() for path in files.values()), files
    raw = read_dataset(files["identification_log"])
    assert raw.ddq is None and raw.n_samples == 10001  # a real log: no accelerations
    assert load_trajectory(files["excitation"].with_suffix(".yaml")).period == 10.0
    cls3 = load_model(files["model_cls3"])
    assert cls3.report["command"].startswith("dynid demo")
    assert load_model(files["model_retrieved"]).physical_parameters is not None
    urdf = load_urdf(files["urdf"])
    assert urdf.total_mass == pytest.approx(cls3.robot.total_mass, rel=1e-9)
    html = files["report"].read_text()
    assert html.count("<img") >= 3 and "dynid demo" in html
    assert files["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_text_summary(demo):
    _, folder = demo
    payload = json.loads((folder / "summary.json").read_text())
    payload.pop("seconds_total")
    text = format_summary(DemoResult(**payload))
    for fragment in ("excitation", "closed-loop logs", "base parameters", "cls3",
                     "retrieved", "(noise + preprocessing: the floor)", "report:", "URDF:"):
        assert fragment in text


@pytest.mark.parametrize(("options", "message"), [
    (["--duration", "3"], "`duration` must cover one period"),
    (["--duration", "inf"], "argument --duration: expected a finite number, got 'inf'"),
    (["--duration", "1000"], "argument --duration: expected (0, 300], got 1000"),
    (["--rate", "500"], "argument --rate: expected [1000, 10000], got 500"),
    (["--rate", "nan"], "argument --rate: expected a finite number, got 'nan'"),
    (["--seed", "-1"], "argument --seed: expected [0, 4294967295], got -1"),
    (["--noise", "inf"], "argument --noise: expected a finite number"),
    (["--iterations", "0"], "argument --iterations: expected [1, 10000], got 0"),
    (["--noise", "-1"], "argument --noise: expected [0, 1000], got -1"),
])
def test_demo_bad_options_fail_before_work(options, message, capsys, tmp_path):
    try:
        status = main(["demo", "-o", str(tmp_path / "x"), "--quiet", *options])
    except SystemExit as exit_:  # argparse: the option's range
        status = exit_.code
    assert status == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_demo_output_folder_is_checked_first(capsys, tmp_path):
    assert main(["demo", "--quiet", "-o", str(tmp_path / "absent" / "x")]) == 2
    assert "`output`: folder" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["demo", "--quiet", "-o", str(tmp_path / "file")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main(["demo", "--quiet", "-o", ""]) == 2
    assert "`output` must name a folder" in capsys.readouterr().err


def test_a_failed_demo_leaves_the_previous_outputs_alone(tmp_path, monkeypatch):
    """Outputs are staged and moved in at the end: a failure while writing them leaves the
    folder as it was, and no staging folder behind."""
    import dynid.export.writers

    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "report.html").write_text("previous run")

    def fail(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(dynid.export.writers, "export_robot", fail)
    with pytest.raises(OSError, match="disk full"):
        run_demo(output=folder, duration=10.0, iterations=1)
    assert [path.name for path in tmp_path.iterdir()] == ["out"]
    assert [path.name for path in folder.iterdir()] == ["report.html"]
    assert (folder / "report.html").read_text() == "previous run"


def test_a_demo_that_fails_while_moving_its_outputs_in_leaves_the_folder_as_it_was(
        tmp_path, monkeypatch):
    """The outputs move in all together or not at all: a rename that fails late (the URDF,
    ninth of eleven, after the report replaced the previous run's) puts back the files
    already replaced and removes the new ones."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "report.html").write_text("previous run")
    (folder / "notes.txt").write_text("the user's")
    calls = []
    original = Path.replace

    def replace(self, target):
        if Path(target).parent == folder:
            calls.append(Path(target).name)
            if Path(target).name == "panda-identified.urdf":
                raise OSError("disk full")
        return original(self, target)

    monkeypatch.setattr(Path, "replace", replace)
    with pytest.raises(OSError, match="disk full"):
        run_demo(output=folder, duration=10.0, iterations=1)
    assert calls[7:9] == ["report.html", "panda-identified.urdf"]  # the report was in place
    assert sorted(path.name for path in folder.iterdir()) == ["notes.txt", "report.html"]
    assert (folder / "report.html").read_text() == "previous run"
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


def test_a_folder_in_the_way_of_an_output_is_refused_before_work(tmp_path, capsys):
    folder = tmp_path / "out"
    (folder / "summary.json").mkdir(parents=True)
    assert main(["demo", "--quiet", "-o", str(folder)]) == 2
    error = capsys.readouterr().err
    assert error == (f"dynid: error: `output`: file {str(folder / 'summary.json')!r} is a "
                     "folder; give a file name in it\n")
    assert [path.name for path in folder.iterdir()] == ["summary.json"]
