"""The HTML report: self-contained, written atomically, and rendered by a real headless browser
(Debian's chromium) with every plot loaded."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from dynid.cli import main
from dynid.data.io import write_dataset
from dynid.excitation.optimize import random_fourier
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    panda = load_robot("panda")
    for k in range(2):
        log = simulate_open_loop(panda, random_fourier(panda, seed=k), duration=14.0,
                                 rate=100.0, sensor=SensorModel(torque_noise_std=0.1), seed=k)
        write_dataset(folder / f"log{k}.csv", log)
    assert main(["identify", "panda", str(folder / "log0.csv"), "--method", "cls3", "-o",
                 str(folder / "model.yaml"), "--quiet"]) == 0
    assert main(["report", str(folder / "model.yaml"), str(folder / "log1.csv"),
                 "--identification", str(folder / "log0.csv"), "--poses", "200", "-o",
                 str(folder / "report.html")]) == 0
    return folder / "report.html"


def test_report_is_self_contained_with_every_section(report):
    text = report.read_text()
    for heading in ("Robot", "Data", "Estimate", "Physical consistency", "Validation",
                    "How this was made"):
        assert f"<h2>{heading}</h2>" in text
    # trajectory, parameters, torques, friction: embedded, nothing loaded from elsewhere
    assert text.count("src='data:image/png;base64,") == 4
    assert "http://" not in text and "https://" not in text
    assert "dynid identify panda" in text and "dynid report" in text  # both commands
    assert "Ixx2 - Iyy2" in text  # the regroupings
    assert "Physically consistent: yes" in text
    assert "<th>σ (lower bound)</th>" in text  # CLS-3's: the unconstrained formula


def test_report_says_which_link_parameters_the_data_determine(report):
    """Issue 32: a CLS-3 mass the prior holds (the Panda's link 1 turns about the vertical)
    must not read as measured: the report marks it, per link, from the model's report."""
    text = report.read_text()
    assert "What sets each physical parameter" in text
    assert "<td class='text'>link1</td><td class='text bad'>held by the prior</td>" in text
    assert "only with Iyy2" in text  # link 1's Izz: only with link 2's Iyy


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs "
                                              "Debian's chromium where it can)")
def test_report_renders_in_headless_chromium(report, tmp_path):
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,2400",
                    report.as_uri()], check=True, capture_output=True, timeout=120)
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.shape[0] == 2400 and pixels.std() > 0.05  # not blank
    # every image decoded: a copy of the report that writes the count into its title
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text().replace("</body>", (
        "<script>window.addEventListener('load', () => { const all = [...document.images];"
        " document.title = 'images ' + all.length + ' loaded ' + all.filter("
        "i => i.complete && i.naturalWidth > 0).length; });</script></body>")))
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", "--virtual-time-budget=10000",
                          probe.as_uri()], check=True, capture_output=True, timeout=120,
                         text=True).stdout
    counts = re.search(r"<title>images (\d+) loaded (\d+)</title>", dom)
    assert counts is not None, dom[:300]
    assert counts.group(1) == counts.group(2) == "4"


def test_report_refuses_a_missing_model_and_writes_nothing(tmp_path, capsys):
    target = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "absent.yaml"), str(tmp_path / "absent.csv"),
                 "-o", str(target)]) == 2
    assert "absent.yaml' does not exist" in capsys.readouterr().err  # the model file
    assert list(tmp_path.iterdir()) == []  # no report, no temporary file


def test_report_of_a_robot_without_limits_bounds_or_torques_claims_nothing_unchecked():
    """Issue 11: a robot without acceleration, velocity or torque limits and without bounds,
    on a log of zero torques: no warning leaks (every warning is an error here), no "limit"
    line in the trajectory figure, no "within the bounds: yes", relative errors undefined."""
    import dataclasses
    import warnings

    import numpy as np

    from dynid.data.dataset import Dataset
    from dynid.evaluation.plots import excitation_figure
    from dynid.evaluation.report import build_report
    from dynid.evaluation.validate import validate_model
    from dynid.identification.linear.idim import identify

    arm = load_robot("arm3")
    inf = np.full(3, np.inf)
    free = dataclasses.replace(arm, bounds=None, limits=dataclasses.replace(
        arm.limits, velocity=inf, acceleration=inf, torque=inf))
    log = simulate_open_loop(arm, random_fourier(arm, seed=1), duration=4.0, rate=100.0)
    model = identify(free, log).with_physical_parameters(arm.parameters, method="cad")
    silent = Dataset(t=log.t, q=log.q, dq=log.dq, ddq=log.ddq, tau=0.0 * log.tau)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validation = validate_model(model, silent, n_poses=50)
        text = build_report(model, silent, validation, identification=log)
        figure = excitation_figure(log.t, log.q, log.dq, log.ddq, free.limits)
    assert "within the bounds: not checked (the robot has no bounds)" in text
    assert "within the bounds: yes" not in text
    assert "Relative error and w_r undefined: `data.tau` is zero on every joint" in text
    assert "undefined (τ = 0)" in text
    position, velocity, acceleration = figure.axes

    def limit_lines(ax):
        return [line for line in ax.get_lines() if len(set(line.get_ydata())) == 1]

    assert len(limit_lines(position)) == 2  # the position limits are finite
    assert limit_lines(velocity) == limit_lines(acceleration) == []


def _arm3_model():
    from dynid.identification.linear.idim import identify

    arm = load_robot("arm3")
    log = simulate_open_loop(arm, random_fourier(arm, seed=1), duration=4.0, rate=100.0)
    return identify(arm, log), log


def test_report_shows_a_marker_for_figures_that_are_no_numbers():
    """Issue 22: a σ of -1 (a tampered model file) reached matplotlib ("'yerr' must not
    contain negative values"); NaN and inf cells were printed bare. Each is "—" now, with the
    table's footnote, and no warning leaks."""
    import warnings

    import numpy as np

    from dynid.evaluation.report import build_report
    from dynid.evaluation.validate import validate_model
    from dynid.metrics import NOT_FINITE_NOTE

    model, log = _arm3_model()
    std = np.array(model.std, dtype=float)
    std[:3] = [-1.0, np.nan, np.inf]
    object.__setattr__(model, "std", std)  # past the loader's checks: the report must cope
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validation = validate_model(model, log, n_poses=50)
        text = build_report(model, log, validation)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", text)
    assert not {"nan", "inf", "-inf", "-1", "-1.0"} & set(cells)
    table = text[text.index("Base parameters: value"):]
    table = table[:table.index("</table>")]
    base = [re.findall(r"<td[^>]*>([^<]*)</td>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", table)][1:4]
    assert [row[4] for row in base] == ["—", "—", "—"]  # σ: negative, NaN, inf
    assert [row[5] for row in base][:2] == ["—", "—"]  # σ [%] of no σ
    assert NOT_FINITE_NOTE.replace("'", "&#x27;") in text


def test_an_overflowing_model_is_refused_by_validation_and_never_consistent():
    """Issue 22: coefficients of 1e300 validated as inf and "physically consistent: yes"."""
    import dataclasses

    import numpy as np

    from dynid.evaluation.validate import validate_model

    model, log = _arm3_model()
    huge = dataclasses.replace(model, coefficients=np.full_like(model.coefficients, 1e300))
    with pytest.raises(ValueError, match=r"the model's torque errors overflow to inf .*its "
                                         r"largest coefficient is \w+ = 1e\+300; such a model "
                                         r"cannot be validated"):
        validate_model(huge, log, n_poses=20)
    report = validate_model(model, log, n_poses=20)
    assert report.finite
    broken = dataclasses.replace(report, rmse=np.full(3, np.inf))
    assert not broken.finite and not broken.consistent
    assert any(line.startswith("  physically consistent: NO: figures above are not finite")
               for line in broken.lines())
    assert not any("inf" in line.split() or "nan" in line.split() for line in broken.lines())
