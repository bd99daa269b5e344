"""``dynid benchmark`` (``dynid.benchmark``): a tiny BIRDy protocol end to end through the CLI,
resumed without new fits, bad arguments, an interrupted run, and the protocol's pieces."""

from __future__ import annotations

import csv
import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_close

from dynid.benchmark import protocol
from dynid.benchmark import runner as runner_module
from dynid.cli import main
from dynid.identification.estimate import Problem
from dynid.identification.methods import IDENTIFICATION_METHODS
from dynid.robot import load_robot
from dynid.robot.inertia import MASS

TINY = ["benchmark", "tx40", "--methods", "ols", "cls3", "--profiles", "standardNoise",
        "highPositionNoise", "--draws", "2", "--duration", "2", "--quiet"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, int, dict]:
    out = tmp_path_factory.mktemp("bench") / "out"
    status = main([*TINY, "--out", str(out), "--json"])
    return out, status, _stamps(out)


def _stamps(out: Path) -> dict[str, int]:
    """Every stored run's file and its modification time."""
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in (out / "runs").rglob("*")}


def test_tiny_protocol_end_to_end(finished, capsys):
    out, status, _ = finished
    assert status == 0
    for name in ("benchmark.json", "benchmark.csv", "parameter_error.png", "torque_error.png",
                 "benchmark.html", "settings.json"):
        assert (out / name).is_file(), name
    table = json.loads((out / "benchmark.json").read_text())
    rows = {(r["method"], r["profile"]): r for r in table["rows"]}
    assert set(rows) == {(m, p) for m in ("ols", "cls3")
                         for p in ("standardNoise", "highPositionNoise")}
    for row in rows.values():
        assert row["runs"] == 2 and row["convergence_rate"] == 1.0
        assert 0 < row["median_parameter_error"] < 1 and 0 < row["median_torque_error"] < 1
    # ols ignores the start: one fit per profile serves both draws, no spread; cls3 is pulled
    # towards each draw's prior: two fits, two estimates
    runs = table["runs"]
    for (method, profile), row in rows.items():  # bias: the norm of the mean signed error
        mine = [r for r in runs if r["method"] == method and r["profile"] == profile]
        assert_close(row["bias"], np.linalg.norm(np.mean(
            [r["signed_error"] for r in mine], axis=0)), rtol=1e-12, atol=0)
    assert sum(r["method"] == "ols" for r in runs) == 2
    assert sum(r["method"] == "cls3" for r in runs) == 4
    assert rows[("ols", "standardNoise")]["spread"] == 0.0
    assert rows[("cls3", "standardNoise")]["spread"] > 0.0
    with (out / "benchmark.csv").open() as file:
        lines = list(csv.DictReader(file))
    assert len(lines) == 4 and float(lines[0]["median_parameter_error"]) > 0
    page = (out / "benchmark.html").read_text()
    assert page.count("data:image/png;base64,") == 2
    assert "IDIM-OLS" in page and "highPositionNoise" in page


def test_resume_does_no_new_fit(finished, monkeypatch, capsys):
    out, _, stamps = finished

    def no_fit(task):
        raise AssertionError("a stored run was fitted again")

    def no_simulation(*args, **kwargs):
        raise AssertionError("the closed loop was simulated again")

    monkeypatch.setattr(runner_module, "_fit_task", no_fit)
    monkeypatch.setattr(runner_module, "experiment", no_simulation)
    before = (out / "benchmark.json").read_text()
    assert main([*TINY[:-1], "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "nothing to fit" in captured.err
    assert "cls3" in captured.out and "written:" in captured.out
    runs = {k: v for k, v in _stamps(out).items() if k.endswith(".json")}
    assert runs == {k: v for k, v in stamps.items() if k.endswith(".json")} and len(runs) == 6
    assert json.loads((out / "benchmark.json").read_text())["rows"] == \
        json.loads(before)["rows"]


@pytest.mark.parametrize(("change", "option"), [
    (["--methods", "nope"], "--methods"),
    (["--profiles", "veryNoisy"], "--profiles"),
    (["--methods", "ols", "ols"], "--methods"),
    (["--draws", "0"], "--draws"),
    (["--duration", "-1"], "--duration"),
    (["--jobs", "0"], "--jobs"),
])
def test_bad_arguments_name_the_option(tmp_path, capsys, change, option):
    """One error line naming the option, before any work (no output folder made)."""
    args = ["benchmark", "tx40", "--out", str(tmp_path / "o"), *change]
    try:
        status = main(args)
    except SystemExit as stop:  # argparse's range checks
        status = stop.code
    assert status == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1 and option in errors[0]
    assert not (tmp_path / "o").exists()


def test_out_that_is_a_file_or_other_settings_is_refused(finished, tmp_path, capsys):
    file = tmp_path / "a.txt"
    file.write_text("x")
    assert main(["benchmark", "--out", str(file)]) == 2
    assert "`--out`" in capsys.readouterr().err
    out = finished[0]
    assert main([*TINY, "--seed", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "`--out`" in err and "seed" in err
    assert main(["benchmark", "no-such-robot", "--out", str(tmp_path / "x")]) == 2
    assert "`robot`: 'no-such-robot'" in capsys.readouterr().err


def test_an_interrupted_run_leaves_no_half_written_result(tmp_path, monkeypatch, capsys):
    """Ctrl-C while the second result is written: the first stays whole, the second is not
    there (nor its temporary file), and a rerun fits only what is missing."""
    real = runner_module.atomic_write
    calls = []

    def interrupted(path, write):
        calls.append(path)
        if sum("runs" in Path(c).parts for c in calls) == 2:
            def half(tmp):
                tmp.write_text('{"profile": "standardNoise", "meth')
                raise KeyboardInterrupt
            return real(path, half)
        return real(path, write)

    monkeypatch.setattr(runner_module, "atomic_write", interrupted)
    out = tmp_path / "out"
    args = ["benchmark", "tx40", "--methods", "ols", "--profiles", "standardNoise",
            "highTorqueNoise", "--draws", "1", "--duration", "2", "--quiet", "--out", str(out)]
    assert main(args) == 130
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert [p.name for p in files] == ["draw-all.json", "settings.json"]
    assert json.loads(files[0].read_text())["ok"] is True
    monkeypatch.setattr(runner_module, "atomic_write", real)
    stale = files[0].parent / ".draw-all.k3x9.json"  # what a killed worker's write leaves
    stale.write_text('{"half')
    capsys.readouterr()
    assert main([a for a in args if a != "--quiet"]) == 0
    assert "1 runs to fit" in capsys.readouterr().err
    assert not stale.exists()


@pytest.mark.parametrize(("content", "what"), [
    (b'{"schema": "dynid-benc', "is not JSON: Unterminated string"),
    (b"\xff\xfe{}", "is not UTF-8"),
    (b"[1, 2]", "hold a JSON array, not an object"),
    (b"", "is empty"),
])
def test_a_corrupt_settings_file_is_named(tmp_path, capsys, content, what):
    """One line naming `--out`'s settings.json and what is wrong with it, before any work."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "settings.json").write_bytes(content)
    assert main([*TINY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dynid: error: `--out`"), err
    assert repr(str(out / "settings.json")) in err and what in err, err
    assert [p.name for p in out.iterdir()] == ["settings.json"]


@pytest.mark.parametrize(("edit", "what"), [
    (lambda text: text[:6], "is not JSON"),
    (lambda text: b"\x80" + text, "is not UTF-8"),
    (lambda text: json.dumps({k: v for k, v in json.loads(text).items()
                              if k != "profile"}).encode(), "lacks the field 'profile'"),
    (lambda text: json.dumps({**json.loads(text), "seconds": "fast"}).encode(),
     "field 'seconds' must be a number"),
    (lambda text: json.dumps({**json.loads(text), "method": "cls3"}).encode(),
     "holds the run of method 'cls3', not 'ols'"),
])
def test_a_corrupt_stored_run_is_named_with_what_is_wrong(finished, tmp_path, capsys, edit,
                                                           what):
    """A stored run that a full disk, a killed copy or a hand edit broke: one line naming the
    file and the field, no traceback (KeyError: 'profile' before)."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(finished[0], out)
    stored = out / "runs" / "standardNoise" / "ols" / "draw-all.json"
    stored.write_bytes(edit(stored.read_bytes()))
    assert main([*TINY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and repr(str(stored)) in err and what in err, err
    assert "remove it to fit the run again" in err


COMMON = ["--methods", "ols", "--profiles", "standardNoise", "--draws", "1", "--duration", "2",
          "--quiet"]


def test_a_robot_the_protocol_cannot_simulate_leaves_no_output_folder(tmp_path, capsys):
    """arm3 with an arctan friction so sharp that its loop needs more RK4 steps per period than
    a loop takes by itself: it loads, the protocol cannot simulate it, and --out is not made
    (a settings.json was left before)."""
    import dynid.robot

    stiff = tmp_path / "stiff.yaml"
    stiff.write_text((Path(dynid.robot.__file__).parent / "data" / "arm3.yaml").read_text()
                     .replace("k_v: [100.0, 100.0, 100.0]", "k_v: [1.0e+9, 1.0e+9, 1.0e+9]"))
    out = tmp_path / "out"
    assert main(["benchmark", str(stiff), *COMMON, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "RK4 steps" in err and "`substeps`" not in err, err
    assert not out.exists()


def test_bad_jobs_leave_no_output_folder(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(SystemExit):
        main(["benchmark", "tx40", *COMMON, "--jobs", "0", "--out", str(out)])
    run = runner_module.BenchmarkRun(load_robot("tx40"), ("ols",), out=out)
    for jobs in (0, 1.5, "2"):
        with pytest.raises(ValueError, match="`jobs`"):
            runner_module.run_benchmark(run, jobs=jobs)
    assert not out.exists()


@pytest.mark.parametrize("new", [False, True], ids=["read-only", "in-read-only"])
def test_a_read_only_out_is_refused_before_anything_is_made(tmp_path, monkeypatch, capsys,
                                                           new):
    import os

    locked = tmp_path / "read-only"
    locked.mkdir()
    locked.chmod(0o555)
    if os.geteuid() == 0:  # root writes anywhere: the folder says it is read-only
        real = os.access
        monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if (
            mode & os.W_OK and Path(path).absolute().is_relative_to(locked))
            else real(path, mode, **kw))
    try:
        out = locked / "new" if new else locked
        assert main(["benchmark", "tx40", *COMMON, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("dynid: error: `--out`") and "is not writable" in err, err
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o755)


def test_start_free_families_ignore_the_draw():
    """Every registered method that is start_free gives the same estimate from two draws
    (start and nominal parameters): one fit per profile serves all draws."""
    truth = load_robot("tx40")
    run = protocol.experiment(truth, duration=2.0)
    log = protocol.noisy_log(run, protocol.PROFILES[1])
    starts = protocol.draw_starts(truth, 2, seed=1)
    assert not np.allclose(starts[0], starts[1])
    free = [m for m in IDENTIFICATION_METHODS.values() if runner_module.start_free(m)]
    assert free
    controller = runner_module._controller(run)
    fitted = 0
    for method in free:
        outcomes = []
        for start in starts:
            problem = Problem(protocol.nominal_robot(run.truth, start), (log,),
                              friction=run.friction, references=(run.trajectory,),
                              controller=controller, start=start)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # an iteration limit: the same per draw
                    outcomes.append(method.fit(problem).model.coefficients)
            except ValueError as error:  # refused for this protocol: refused for every draw
                outcomes.append(str(error))
        if isinstance(outcomes[0], str):
            assert outcomes[0] == outcomes[1], method.name
            continue
        assert_close(outcomes[0], outcomes[1], rtol=0, atol=0)
        fitted += 1
    assert fitted >= 2


def test_draws_are_seeded_physical_and_at_the_spread():
    truth = load_robot("tx40")
    draws = protocol.draw_starts(truth, 200, seed=5)
    assert_close(draws, protocol.draw_starts(truth, 200, seed=5), rtol=0, atol=0)
    from dynid.robot.inertia import physical_margin

    assert (physical_margin(draws) >= 0).all()
    ratio = draws[:, :, MASS] / truth.parameters[:, MASS]  # masses: rarely redrawn
    assert abs(np.std(ratio) - 0.15) < 0.02 and abs(np.mean(ratio) - 1) < 0.02
    with pytest.raises(ValueError, match="`draws`"):
        protocol.draw_starts(truth, 0)


def test_noise_profiles_complete_birdys_grid():
    grid = {(p.position_std_deg, p.torque_std) for p in protocol.PROFILES}
    assert grid == {(q, t) for q in (1e-4, 1e-3, 1e-2) for t in (0.05, 0.1)}
    assert len(protocol.PROFILES) == 6
    with pytest.raises(ValueError, match="unknown noise profile"):
        protocol.profile("loud")


def test_noisy_log_carries_the_profiles_noise():
    run = protocol.experiment(load_robot("tx40"), duration=2.0)
    quiet, loud = (protocol.noisy_log(run, protocol.profile(name))
                   for name in ("lowPositionNoise", "highPositionTorqueNoise"))
    exact = run.log
    rows = np.searchsorted(exact.t, quiet.t)
    assert_close(quiet.t, exact.t[rows])
    gap = [np.std(log.tau - exact.tau[rows]) for log in (quiet, loud)]
    assert gap[1] > gap[0]


def test_full_protocol_estimate_counts_one_fit_per_profile_for_start_free_methods():
    from dynid.bench.benchmark import full_protocol_estimate

    measured = {"seconds": 10.0, "jobs": 2, "per_method": {
        "ols": {"fits": 2, "fit_seconds": 1.0}, "cls3": {"fits": 4, "fit_seconds": 8.0}}}
    estimate = full_protocol_estimate(measured, draws=25, profiles=6)
    assert estimate["fits"] == 6 + 150
    assert estimate["fit_core_seconds"] == pytest.approx(6 * 0.5 + 150 * 2.0)
    fixed = 10.0 - 9.0 / 2  # the measured run's time outside its fits
    assert estimate["seconds"] == pytest.approx(fixed + (3.0 + 300.0) / 2)


def test_a_method_needing_what_the_problem_lacks_is_skipped_with_the_reason(
        tmp_path, monkeypatch, capsys):
    """A registered method that needs the controller, on a problem without one: no fit, a
    row that says why."""
    from dynid.identification.estimate import Method

    def never(problem, **options):
        raise AssertionError("a method whose needs are unmet was fitted")

    monkeypatch.setitem(IDENTIFICATION_METHODS, "needs-controller", Method(
        "needs-controller", "simulation", True, frozenset({"controller", "reference"}),
        "test", never))
    # a loop controlled faster than it is logged: the simulation-based methods cannot
    # re-simulate it (one control period per logged sample)
    fast = dataclasses.replace(protocol.control_gains(load_robot("arm3")), control_rate=5000.0)
    monkeypatch.setattr(runner_module, "control_gains", lambda robot, poses=None: fast)
    monkeypatch.setattr(protocol, "control_gains", lambda robot, poses=None: fast)
    out = tmp_path / "out"
    args = ["benchmark", "arm3", "--methods", "ols", "needs-controller", "--profiles",
            "standardNoise", "--draws", "2", "--duration", "2", "--quiet", "--json",
            "--out", str(out)]
    assert main(args) == 0
    rows = {r["method"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["needs-controller"]["runs"] == 0
    assert "the loop ran at 5000 Hz, logged at 1000 Hz" in rows["needs-controller"]["skipped"]
    assert rows["ols"]["runs"] == 2 and rows["ols"]["median_parameter_error"] < 1
    assert "needs-controller" in (out / "benchmark.html").read_text()
    # resumed: nothing to simulate or fit, the skipped row still there
    monkeypatch.setattr(runner_module, "experiment", lambda *a, **k: 1 / 0)
    assert main(args) == 0
    again = {r["method"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert again["needs-controller"]["skipped"] == rows["needs-controller"]["skipped"]


def test_a_robot_without_birdys_gains_gets_a_pd_loop_that_tracks():
    """arm3 (not a BIRDy robot): the derived 8 Hz PD loop tracks its excitation."""
    robot = load_robot("arm3")
    gains = protocol.control_gains(robot)
    assert gains.source.startswith("derived")
    run = protocol.experiment(robot, duration=2.0)
    reference = run.trajectory.sample(run.log.t)[0]
    assert np.abs(run.log.q - reference).max() < 0.1 * np.ptp(reference, axis=0).max()


def test_a_method_that_raises_is_a_failure_in_the_table_not_a_crash(tmp_path, monkeypatch,
                                                                     capsys):
    from dynid.identification.estimate import Method

    class SolverError(Exception):  # a solver's own error type, as cvxpy's
        pass

    def broken(problem, **options):
        raise SolverError("the solver gave up")

    monkeypatch.setitem(IDENTIFICATION_METHODS, "broken", Method(
        "broken", "nonlinear", True, frozenset({"ddq", "effort"}), "test", broken))
    out = tmp_path / "out"
    assert main(["benchmark", "arm3", "--methods", "broken", "--profiles", "standardNoise",
                 "--draws", "2", "--duration", "2", "--quiet", "--json",
                 "--out", str(out)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["failed"] == 2 and row["convergence_rate"] == 0.0
    assert "the solver gave up" in row["failure"]
    assert "the solver gave up" in (out / "benchmark.html").read_text()
    assert row["median_parameter_error"] is None
    stored = json.loads((out / "runs" / "standardNoise" / "broken" / "draw-00.json").read_text())
    assert stored["ok"] is False and "the solver gave up" in stored["status"]
    assert stored["error"] == "SolverError"


def test_the_commands_literals_are_the_protocols():
    from dynid.cli import benchmark as command

    assert (command.DEFAULT_DRAWS, command.DEFAULT_DURATION) == (
        protocol.DEFAULT_DRAWS, protocol.DEFAULT_DURATION)
    parser = __import__("argparse").ArgumentParser()
    command.register(parser.add_subparsers())
    text = " ".join(parser._subparsers._group_actions[0].choices["benchmark"].format_help()
                    .split())
    for noise in protocol.PROFILES:
        assert noise.name in text


def test_no_method_starts_from_the_truths_drives():
    """BIRDy draws the whole parameter vector: the friction and rotor inertias a method is
    given (the Kalman filters and the simulation-based methods start from them) are drawn at
    15 % around the truth's, like the links — reproducibly, and never the truth itself."""
    truth = load_robot("tx40")
    simulated = protocol.simulated_truth(truth)
    starts = protocol.draw_starts(truth, 25)
    drives = protocol.draw_drive_starts(truth, 25)
    assert [d.friction.tolist() for d in drives] == \
        [d.friction.tolist() for d in protocol.draw_drive_starts(truth, 25)]
    nonzero = simulated.friction.coefficients != 0
    friction = np.array([d.friction[nonzero] for d in drives]) / \
        simulated.friction.coefficients[nonzero]
    rotor = np.array([d.rotor_inertia for d in drives]) / truth.rotor_inertia
    assert all((d.friction[~nonzero] == 0).all() for d in drives)
    for ratio in (friction, rotor):
        assert (ratio > 0).all() and 0.08 < ratio.std() < 0.22 and abs(ratio.mean() - 1) < 0.05
    given = protocol.nominal_robot(simulated, starts[0], drives[0])
    assert type(given.friction) is type(simulated.friction)
    assert_close(given.friction.coefficients, drives[0].friction, rtol=0, atol=0)
    assert_close(given.rotor_inertia, drives[0].rotor_inertia, rtol=0, atol=0)
    assert not np.allclose(given.friction.coefficients, simulated.friction.coefficients)


def test_a_nonlinear_truth_friction_stays_the_truths():
    """A robot with a friction no method identifies (Stribeck) runs: only its rotor inertias
    and links are drawn; a bad spread is named."""
    from dynid.friction.models import Stribeck

    ones = np.ones(6)
    truth = load_robot("tx40").with_friction(Stribeck(ones, ones, ones, ones, ones))
    drives = protocol.draw_drive_starts(truth, 2)
    assert drives[0].friction.size == 0
    given = protocol.nominal_robot(truth, protocol.draw_starts(truth, 1)[0], drives[0])
    assert given.friction is truth.friction
    assert not np.allclose(given.rotor_inertia, truth.rotor_inertia)
    with pytest.raises(ValueError, match="`spread`"):
        protocol.draw_drive_starts(truth, 2, spread="0.1")
