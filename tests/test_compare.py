"""Method comparison (the Jaco2 paper's Table 5) on twin trajectories."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

import numpy as np
import pytest
from conftest import published_panda_cad

from dynid.cli import main
from dynid.data.io import write_dataset
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification.compare import compare_methods
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop

METHODS = ["cad", "ols", "cls2", "cls3"]


@pytest.fixture(scope="module")
def poor_logs():
    """Three short, slow, small motions with 0.5 N m noise: the regime where the Jaco2 paper
    saw ULS overfit the identification trajectory."""
    truth = load_robot("panda").with_friction(
        ViscousCoulomb(np.full(7, 0.1), np.full(7, 0.2), np.full(7, -0.05)))
    return truth, [simulate_open_loop(truth, random_fourier(truth, seed=5 + k, margin=0.3),
                                      duration=13.5, rate=100.0,
                                      sensor=SensorModel(torque_noise_std=0.5), seed=k)
                   for k in range(3)]


@pytest.fixture(scope="module")
def table(poor_logs):
    truth, logs = poor_logs
    # Franka's CAD inertials as published (link 4 breaks the triangle inequality), the
    # paper's CAD row; the built-in panda-cad loads link 4 as the nearest physical body
    return compare_methods(truth, logs, methods=METHODS, prior=published_panda_cad())


def test_jaco2_table5_structure_and_finding(table):
    """Rows: each trajectory identifies, the others validate; per method w and w_r; the
    criteria rows. As in the paper: ULS is best on its own identification data, CLS-3
    generalises at least as well, CAD is worst, and only CLS-3 passes feasibility and the
    triangle inequality among the identified (the Franka CAD values fail the triangle
    inequality on link 4 and put link 5's CoM outside Gaz's box)."""
    assert table.w.shape == table.w_r.shape == (3, 3, 4)
    labels = [label for label, _, _ in table.rows()]
    assert labels[0] == "Identification: Traj 1" and labels[1] == "  Validation: Traj 2"
    assert len(labels) == 9
    ols, cls3 = METHODS.index("ols"), METHODS.index("cls3")
    for i in range(3):
        assert table.w[i, i, ols] <= table.w[i, i, cls3] * (1 + 1e-9)
    validation = table.validation_errors("w")
    assert validation[cls3].mean() <= validation[ols].mean()
    assert np.argmax(validation.mean(axis=1)) == METHODS.index("cad")
    criteria = table.criteria
    assert criteria["Physical feasibility (3)"]["cls3"] is True
    assert criteria["Triangle inequality (4)"]["cls3"] is True
    assert criteria["Triangle inequality (4)"]["ols"] is False
    assert criteria["Triangle inequality (4)"]["cad"] is False
    assert criteria["First moment (5)/(6)"]["cls2"] is True


def test_table_formats(table):
    markdown = table.to_markdown()
    assert markdown.count("\n| ") >= 9 + 3 and "**" in markdown
    assert "| Triangle inequality (4) |" in markdown
    # every row, the criteria rows too, has as many cells as the header
    table_lines = [line for line in markdown.splitlines() if line.startswith("|")]
    assert len({line.count(" | ") for line in table_lines if "---" not in line}) == 1
    rows = list(csv.reader(io.StringIO(table.to_csv())))
    assert rows[0][:3] == ["row", "identification", "evaluated"] and len(rows) == 1 + 9 + 3
    payload = table.to_json()
    assert payload["methods"] == METHODS and len(payload["rows"]) == 9
    assert {"w", "w_r", "best", "worst"} <= set(payload["rows"][0])


def test_compare_command(poor_logs, capsys, tmp_path):
    _, logs = poor_logs
    paths = []
    for k, log in enumerate(logs[:2]):
        paths.append(str(tmp_path / f"traj{k + 1}.csv"))
        write_dataset(paths[-1], log)
    assert main(["compare", "panda", *paths, "--methods", "ols", "cls1", "-o",
                 str(tmp_path / "table.md"), "--plot", str(tmp_path / "table.png"),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Identification: traj1" in out and "fit time" in out
    assert (tmp_path / "table.md").read_text().startswith("| Trajectory |")
    assert (tmp_path / "table.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["compare", "panda", paths[0], "--methods", "ols"]) == 2
    assert "at least two trajectories" in capsys.readouterr().err
    assert main(["compare", "panda", *paths, "--methods", "iv"]) == 2
    assert "`iv` needs `references`" in capsys.readouterr().err
    assert main(["compare", "panda", *paths, "--methods", "ols", "-o",
                 str(tmp_path / "table.txt")]) == 2
    assert "must end in .md, .csv or .json" in capsys.readouterr().err
    assert main(["compare", "panda", *paths, "--methods", "ols", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["trajectories"] == ["traj1", "traj2"]


def test_constrained_methods_need_bounds_before_any_work(poor_logs):
    truth, logs = poor_logs
    unbounded = dataclasses.replace(truth, bounds=None)
    with pytest.raises(ValueError, match="cls1, cls3 need parameter bounds"):
        compare_methods(unbounded, logs, methods=["ols", "cls1", "cls3"])


def test_compare_bench_on_a_robot_without_cad():
    """The bench leaves out what the robot cannot do (no CAD twin: no prior; arm3's bounds are
    derived from its description, so the constrained methods run) and runs the demo for the
    Panda only."""
    from dynid.bench.compare import run, summary

    result = run(robot="arm3", n_logs=2, n_samples=14_001)
    assert result["compare_methods"] == ["cad", "ols", "wls", "cls1", "cls2", "cls3",
                                         "log-cholesky", "nls"]
    assert result["compare_prior"] is None and "demo_seconds" not in result
    assert result["compare_seconds"] > 0 and "arm3, 2 logs" in summary(result)


def _small_table():
    from dynid.identification.compare import CRITERIA, Comparison

    rng = np.random.default_rng(0)
    w = rng.uniform(0.1, 1.0, (2, 2, 2))
    return Comparison(methods=["cad", "ols"], names=["T1", "T2"], w=w, w_r=0.1 * w,
                      criteria={c: {"cad": False, "ols": None} for c in CRITERIA},
                      seconds={"cad": 0.0, "ols": 0.1})


def test_every_format_names_its_metric_and_explains_the_criteria(tmp_path):
    """The table says what its numbers are (w [N m] and w_r [-] of the Jaco2 paper's eq. 9,
    on the identification or a validation trajectory) and what each criteria row checks:
    under the Markdown table, as fields in JSON, in a `metric` column in CSV."""
    from dynid.identification.compare import CRITERIA, write_table

    table = _small_table()
    write_table(table, tmp_path / "t.md")
    markdown = (tmp_path / "t.md").read_text()
    assert markdown.startswith("| Trajectory |")
    lines = markdown.splitlines()
    last_row = max(k for k, line in enumerate(lines) if line.startswith("|"))
    assert lines[last_row].startswith("| First moment (5)/(6) |")
    notes = "\n".join(lines[last_row + 1:])
    caption = next(line for line in lines if line.startswith("Table: "))
    assert "w [N m]" in caption and "w_r [-]" in caption and "Jaco2 eq. 9" in caption
    assert "Identification" in caption and "Validation" in caption
    assert "- w = norm(e) / N [N m]" in notes and "- w_r = norm(e) / norm(tau) [-]" in notes
    assert "- Physical feasibility (3): every link's mass is positive" in notes
    assert "- Triangle inequality (4):" in notes and "I_a + I_b >= I_c" in notes
    assert "- First moment (5)/(6): every link's centre of mass" in notes

    write_table(table, tmp_path / "t.csv")
    rows = list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text())))
    assert rows[0][-3:] == ["best", "worst", "metric"]
    assert all(len(row) == len(rows[0]) for row in rows)
    for row in rows[1:5]:
        assert "w = norm(e) / N [N m]" in row[-1] and "w_r = norm(e) / norm(tau) [-]" in row[-1]
    assert "identification trajectory itself" in rows[1][-1]
    assert "validation trajectory" in rows[2][-1]
    for row, criterion in zip(rows[5:], CRITERIA, strict=True):
        assert row[0] == criterion and row[-1].startswith("Yes/No: every link's")

    write_table(table, tmp_path / "t.json")
    payload = json.loads((tmp_path / "t.json").read_text())
    assert "[N m]" in payload["metrics"]["w"] and "[-]" in payload["metrics"]["w_r"]
    assert "Jaco2 eq. 9" in payload["caption"]
    assert list(payload["criteria_definitions"]) == list(CRITERIA)
    assert "I_a + I_b >= I_c" in payload["criteria_definitions"]["Triangle inequality (4)"]
    assert "every trajectory" in payload["criteria_rule"]
    assert table.lines()[0].split()[:2] == ["w_r", "[-]"]  # the terminal table too


def test_compare_command_runs_its_fits_on_a_dask_scheduler(poor_logs, capsys, tmp_path,
                                                           cluster):
    """`--scheduler`: the (method, log) fits run on the cluster's workers; the table is the
    local one."""
    import json

    _, logs = poor_logs
    paths = []
    for k, log in enumerate(logs[:2]):
        paths.append(str(tmp_path / f"traj{k + 1}.csv"))
        write_dataset(paths[-1], log)
    command = ["compare", "panda", *paths, "--methods", "ols", "wls", "--json", "--quiet"]
    assert main(command) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*command, "--scheduler", cluster.scheduler.address]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert remote["rows"] == local["rows"]


def test_friction_is_spelt_as_in_identify(poor_logs, monkeypatch, capsys, tmp_path):
    """One spelling across commands (issue 23): `--friction` names the NLS row's model as it
    does for `identify --method nls`; a nonlinear one leaves the linear methods their default
    columns; the old `--nls-friction` is refused with the new spelling."""
    import dynid.identification
    from dynid.friction import ViscousCoulomb

    _, logs = poor_logs
    paths = []
    for k, log in enumerate(logs[:2]):
        paths.append(str(tmp_path / f"traj{k + 1}.csv"))
        write_dataset(paths[-1], log)
    seen = {}

    def capture(robot, datasets, **options):
        seen.update(options)
        raise ValueError("captured")

    monkeypatch.setattr(dynid.identification, "compare_methods", capture)
    for model, columns in (("sigmoid", ViscousCoulomb), ("viscous-coulomb", ViscousCoulomb)):
        assert main(["compare", "panda", *paths, "--methods", "ols", "nls", "--friction",
                     model, "--quiet"]) == 2
        assert "captured" in capsys.readouterr().err
        assert seen["nls_friction"] == model and isinstance(seen["friction"], columns)
    with pytest.raises(SystemExit) as stop:
        main(["compare", "panda", *paths, "--nls-friction", "lugre"])
    error = capsys.readouterr().err
    assert stop.value.code == 2
    assert "`--nls-friction` is spelt `--friction` now" in error and "--friction lugre" in error
    # without --friction, the nls row fits what identify's nls would: stribeck for a robot
    # file whose friction NLS does not fit (the panda's is sigmoid, its own)
    assert main(["compare", "panda", *paths, "--methods", "nls", "--quiet"]) == 2
    assert seen["nls_friction"] == "sigmoid"


def test_a_fit_that_stopped_on_its_iteration_limit_is_flagged(poor_logs, monkeypatch):
    """Every table says which methods met their own stopping rule: an iterative method that
    converged reads Yes, one stopped on its iteration limit reads No (with a line saying its
    errors are its last iterate's), the closed forms '-'."""
    from dynid.identification.compare import fit_method
    from dynid.identification.linear import robust

    truth, logs = poor_logs
    table = compare_methods(truth, logs[:2], methods=["ols", "irls-huber"])
    assert table.converged == {"ols": None, "irls-huber": True}
    assert not any("not converged" in line for line in table.lines())
    original = robust.IRLS.__init__

    def starved(self, *args, **kwargs):  # one pass: IRLS cannot see its weights settle
        original(self, *args, **{**kwargs, "max_iter": 1})

    monkeypatch.setattr(robust.IRLS, "__init__", starved)
    with pytest.warns(robust.IRLSConvergenceWarning):
        assert fit_method("irls-huber", truth, logs[0]).report["converged"] is False
    assert "converged" not in fit_method("ols", truth, logs[0]).report
    table = dataclasses.replace(table, converged={"ols": None, "irls-huber": False})
    assert any(line.startswith("  irls-huber: did not meet its stopping rule")
               for line in table.lines())
    markdown = table.to_markdown()
    assert "| Converged | - |  | No |  |" in markdown and "own stopping rule" in markdown
    rows = list(csv.reader(io.StringIO(table.to_csv())))
    assert rows[-1][:5] == ["Converged", "", "", "-", ""] and rows[-1][5] == "No"
    assert table.to_json()["converged"] == {"ols": None, "irls-huber": False}
