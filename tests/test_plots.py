"""Plots render without a display and refuse mismatched arrays."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from dynid.evaluation.plots import plot_torques


def test_torque_plot_is_a_png(tmp_path, rng):
    t = np.linspace(0, 1, 200)
    measured = rng.standard_normal((200, 3))
    path = plot_torques(t, measured, measured * 0.9, tmp_path / "torques.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp*"))


def test_format_follows_the_suffix(tmp_path, rng):
    t = np.linspace(0, 1, 50)
    y = rng.standard_normal((50, 2))
    assert plot_torques(t, y, y, tmp_path / "t.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(ValueError, match="does not exist"):
        plot_torques(t, y, y, tmp_path / "absent" / "t.png")


def test_mismatched_arrays(tmp_path):
    with pytest.raises(ValueError, match="must be \\(N, n\\)"):
        plot_torques(np.arange(3.0), np.zeros((3, 2)), np.zeros((2, 2)), tmp_path / "x.png")


def test_every_figure_renders_without_a_display(tmp_path, rng):
    from dynid.evaluation.plots import (
        comparison_figure,
        excitation_figure,
        figure_png,
        friction_figure,
        parameters_figure,
        save_figure,
        torques_figure,
    )
    from dynid.friction.models import Sigmoid
    from dynid.robot import JointLimits

    t = np.linspace(0, 2, 300)
    y = np.sin(np.outer(t, [1.0, 2.0, 3.0]))
    figures = [
        torques_figure(t, y, 0.9 * y, rigid=0.8 * y),
        friction_figure(y, 0.1 * np.sign(y), {"sigmoid": Sigmoid([0.2] * 3, [10.0] * 3,
                                                                 [0.0] * 3).torque}),
        parameters_figure(["a", "b", "c"], [1.0, -0.01, 1e-4], [0.1, 0.001, 1e-3]),
        comparison_figure(["cad", "ols", "cls3"], rng.uniform(0.1, 1.0, (3, 6))),
        excitation_figure(t, 0.5 * y[:, :2], y[:, :2], -y[:, :2],
                          JointLimits(*(np.full(2, v) for v in (-1.0, 1.0, 2.0, 2.0, 10.0))),
                          condition_number=42.0),
    ]
    for k, figure in enumerate(figures):
        assert figure_png(figure)[:4] == b"\x89PNG"
        assert save_figure(figure, tmp_path / f"{k}.svg").read_text().lstrip().startswith("<")
    with pytest.raises(ValueError, match="`errors` must be"):
        comparison_figure(["a", "b"], np.zeros((3, 2)))


# --- layout: legends beside the curves, units on every axis, nothing cut off ---------------------

def _drawn(figure):
    """``figure`` laid out and drawn (constrained layout runs at draw time) and its renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def _legends(figure):
    return [*figure.legends, *[ax.get_legend() for ax in figure.axes if ax.get_legend()]]


def _overlap(a, b) -> bool:
    """Two display boxes share more than a pixel in both directions."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > 1.0) and (min(a.y1, b.y1) - max(a.y0, b.y0) > 1.0)


def _torques(n: int, rng, samples: int = 400):
    """Torque-like traces that fill every corner of their panels (where a legend would sit)."""
    t = np.linspace(0, 14, samples)
    phase = rng.uniform(0, 2 * np.pi, n)
    measured = 10 * np.sin(np.outer(t, np.linspace(0.5, 2.0, n)) + phase)
    measured += 0.3 * rng.standard_normal(measured.shape)
    measured[-5:] = measured.max(axis=0)  # top right, the old legends' corner
    return t, measured, measured + 0.1 * rng.standard_normal(measured.shape), 0.8 * measured


def _limits(n: int, acceleration: float = 10.0):
    from dynid.robot import JointLimits

    return JointLimits(np.full(n, -2.0), np.full(n, 2.0), np.full(n, 3.0),
                       np.full(n, acceleration), np.full(n, 50.0))


def _every_figure(rng, n: int):
    from dynid.evaluation.plots import (
        comparison_figure,
        excitation_figure,
        friction_figure,
        parameters_figure,
        torques_figure,
    )
    from dynid.friction.models import ViscousCoulomb

    t, measured, predicted, rigid = _torques(n, rng)
    velocity = np.cos(np.outer(t, np.linspace(0.5, 2.0, n)))
    friction = ViscousCoulomb(np.full(n, 0.3), np.full(n, 0.5), np.zeros(n))
    names = [f"Ixx{k + 1} - Iyy{k + 1} + 0.25 m{k + 2}" for k in range(10 * n)]
    values = rng.standard_normal(10 * n) * 10.0 ** rng.integers(-6, 2, 10 * n)
    methods = ["cad", "ols", "wls", "cls1", "cls2", "cls3", "log-cholesky", "nls"][: n + 1]
    return {
        "torques": torques_figure(t, measured, predicted, rigid=rigid),
        "torques without rigid": torques_figure(t, measured, predicted),
        "friction": friction_figure(
            velocity, friction.torque(velocity) + 0.05 * rng.standard_normal(velocity.shape),
            {"viscous-Coulomb": friction.torque}),
        "parameters": parameters_figure(names, values, 0.2 * np.abs(values)),
        "comparison": comparison_figure(methods, rng.uniform(0.01, 0.5, (len(methods), 6))),
        "excitation": excitation_figure(t, 1.9 * np.sin(velocity), 2.9 * velocity,
                                        -9.9 * velocity, _limits(n), condition_number=131.0),
    }


@pytest.fixture(scope="module", params=[1, 3, 7], ids=lambda n: f"{n} joints")
def drawn(request):
    """Every figure for 1, 3 and 7 joints, drawn once: {name: (figure, renderer)}, and the
    warnings drawing raised (constrained layout warns when it gives up)."""
    figures = _every_figure(np.random.default_rng(request.param), request.param)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn = {name: (figure, _drawn(figure)) for name, figure in figures.items()}
    return drawn, [str(w.message) for w in caught]


def test_no_legend_covers_an_axes(drawn):
    """Every legend sits outside every axes (so over no curve), inside the figure."""
    for name, (figure, _) in drawn[0].items():
        legends = _legends(figure)
        assert legends, name
        for legend in legends:
            box, page = legend.get_window_extent(), figure.bbox
            assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0, name
            for ax in figure.axes:
                if ax.get_visible():
                    assert not _overlap(box, ax.get_window_extent()), (name, ax.get_ylabel())


def test_torque_legend_is_off_every_plotted_point(rng):
    """The direct check on the data: no sample of any line, in display coordinates, lies in a
    legend's box."""
    from dynid.evaluation.plots import torques_figure

    t, measured, predicted, rigid = _torques(3, rng)
    figure = torques_figure(t, measured, predicted, rigid=rigid)
    _drawn(figure)
    boxes = [legend.get_window_extent() for legend in _legends(figure)]
    for ax in figure.axes:
        for line in ax.get_lines():
            points = line.get_transform().transform(line.get_xydata())
            for box in boxes:
                inside = ((points[:, 0] > box.x0) & (points[:, 0] < box.x1)
                          & (points[:, 1] > box.y0) & (points[:, 1] < box.y1))
                assert not inside.any()


def test_nothing_is_cut_off(drawn):
    """Tick labels, axis labels, titles and legends as drawn all lie inside the figure (long
    regrouped parameter names included), and the layout did not give up."""
    assert drawn[1] == []  # e.g. "constrained_layout not applied because axes sizes collapsed"
    for name, (figure, renderer) in drawn[0].items():
        page = figure.bbox
        boxes = [(ax.get_ylabel() or ax.get_title(), ax.get_tightbbox(renderer))
                 for ax in figure.axes if ax.get_visible()]
        boxes += [("legend", legend.get_window_extent(renderer)) for legend in _legends(figure)]
        boxes += [(text.get_text(), text.get_window_extent(renderer)) for text in figure.texts]
        if figure.get_suptitle():
            boxes.append(("title", figure._suptitle.get_window_extent(renderer)))
        for label, box in boxes:
            assert (box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1 and box.y0 >= page.y0 - 1
                    and box.y1 <= page.y1 + 1), (name, label, box, page)


def test_error_and_torque_axes_name_their_units(rng):
    """Every panel of the torque figure ([N m]: torques and their errors), the friction figure
    ([N m] against [rad/s]), the comparison ([-]) and the σ panel ([%]) carries its unit."""
    import re

    figures = _every_figure(rng, 3)
    unit = re.compile(r"\[[^\]]+\]")
    for name in ("torques", "torques without rigid"):
        labels = [ax.get_ylabel() for ax in figures[name].axes]
        assert len(labels) == 6 and all("[N m]" in label for label in labels), labels
        assert sum(label.startswith("error") for label in labels) == 3
    for ax in figures["friction"].axes:
        assert "[N m]" in ax.get_ylabel() and "[rad/s]" in ax.get_xlabel()
    assert unit.search(figures["comparison"].axes[0].get_ylabel())
    top, bottom = figures["parameters"].axes
    assert unit.search(top.get_ylabel()) and "[%]" in bottom.get_ylabel()


def test_symlog_ticks_are_plain_decimals_that_do_not_collide(rng):
    """The parameter values' symmetric-log axis: ticks at 0 and ±10^k printed 0.01, 0.1, 1
    (no mathtext powers), no two labels overlapping, the linear band a power of ten chosen
    from the data."""
    from dynid.evaluation.plots import _symlog_threshold, parameters_figure

    values = np.array([2.0, -0.03, 5e-3, 0.4, -1.5, 1e-9, 0.0])
    figure = parameters_figure([f"p{k}" for k in range(values.size)], values, 0.1 * abs(values))
    renderer = _drawn(figure)
    top = figure.axes[0]
    assert top.get_yscale() == "symlog"
    labels = [label for label in top.get_yticklabels()
              if label.get_visible() and label.get_text()
              and top.get_ylim()[0] <= label.get_position()[1] <= top.get_ylim()[1]]
    texts = [label.get_text() for label in labels]
    assert "0" in texts and "1" in texts and "0.01" in texts, texts
    for text in texts:
        assert "$" not in text and "^" not in text
        float(text.replace("\N{MINUS SIGN}", "-"))
    boxes = sorted((label.get_window_extent(renderer) for label in labels), key=lambda b: b.y0)
    for below, above in itertools.pairwise(boxes):
        assert below.y1 <= above.y0 + 0.5, texts
    assert _symlog_threshold(values) == 1e-4  # 1e-9 is below the 4 decades under 2.0
    assert _symlog_threshold(np.array([2.0, -0.03, 5e-3])) == 1e-3
    assert _symlog_threshold(np.zeros(3)) == 1.0


def test_relative_sigma_of_a_zero_estimate_or_an_infinite_sigma(rng):
    """No overflow warning and no 1e300 % bar: an unbounded relative σ is marked ∞."""
    from dynid.evaluation.plots import parameters_figure

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = parameters_figure(["a", "b", "c"], [1.0, 0.0, 1e-300], [0.1, 1.0, np.inf])
        _drawn(figure)
    bottom = figure.axes[1]
    assert bottom.get_ylim()[1] < 1e4
    assert [t.get_text() for t in bottom.texts].count("∞") == 2


@pytest.mark.parametrize("missing", ["acceleration", "all"])
def test_excitation_without_limits_draws_no_limit_lines_and_does_not_warn(rng, missing):
    """A URDF robot has no acceleration limits (inf), a continuous joint no position limits:
    nothing warns (pytest turns RuntimeWarning into an error; every warning here), and a
    quantity without limits gets no ±1 "limit" lines."""
    from dynid.evaluation.plots import excitation_figure
    from dynid.robot import JointLimits

    t = np.linspace(0, 10, 300)
    q = np.sin(np.outer(t, [1.0, 2.0, 3.0]))
    limits = (JointLimits.unbounded(3) if missing == "all"
              else _limits(3, acceleration=np.inf))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = excitation_figure(t, q, 2 * q, -4 * q, limits)
        _drawn(figure)
    position, velocity, acceleration = figure.axes

    def limit_lines(ax):
        return [line for line in ax.get_lines() if len(set(line.get_ydata())) == 1
                and abs(line.get_ydata()[0]) == 1.0]

    assert limit_lines(acceleration) == []
    assert "no limits" in acceleration.get_ylabel()
    assert np.isclose(np.abs(np.concatenate([ln.get_ydata() for ln in acceleration.get_lines()]))
                      .max(), 1.0)  # each joint scaled to its own peak
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    if missing == "all":
        assert limit_lines(position) == limit_lines(velocity) == [] and "limit" not in legend
    else:
        assert len(limit_lines(position)) == len(limit_lines(velocity)) == 2
        assert "limit" in legend


def test_excitation_mixed_limits_dot_the_unlimited_joints():
    """Continuous joints (no position limits) beside limited ones: drawn dotted, scaled to their
    own range, the limited ones solid against the ±1 limit lines."""
    from dynid.evaluation.plots import excitation_figure
    from dynid.robot import JointLimits

    t = np.linspace(0, 10, 200)
    q = 5 * np.sin(np.outer(t, [1.0, 2.0]))  # joint 1 continuous, beyond any ±2 limit
    limits = JointLimits([-np.inf, -6.0], [np.inf, 6.0], [20.0, 20.0], [50.0, 50.0],
                         [1.0, 1.0])
    figure = excitation_figure(t, q, q, q, limits)
    joints = [ln for ln in figure.axes[0].get_lines() if len(set(ln.get_ydata())) > 1]
    assert [ln.get_linestyle() for ln in joints] == [":", "-"]
    assert np.isclose(np.abs(joints[0].get_ydata()).max(), 1.0, atol=1e-3)
    assert np.abs(joints[1].get_ydata()).max() <= 5 / 6 + 1e-9


def test_matplotlib_loads_with_the_first_figure_only():
    """``import dynid.evaluation.plots`` does not import matplotlib (the CLI starts fast)."""
    import subprocess
    import sys

    code = ("import sys, dynid.evaluation.plots; "
            "assert not any(m.startswith('matplotlib') for m in sys.modules), 'loaded'")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)
