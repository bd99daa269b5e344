"""The documentation builds with warnings as errors, its worked examples run and draw their
figures, and the API reference lists the subpackages' names (``make docs`` builds the same).

The real-log example needs the log beside the repository (``../shared``, as in CI); without it
the site still builds, and that example's page shows its code under a note naming the missing
folder and where to put it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import missing_reference

DOCS = Path(__file__).resolve().parents[1] / "docs"
EXAMPLES = sorted(p.stem for p in (DOCS / "examples").glob("plot_*.py"))

pytest.importorskip("sphinx_gallery", reason="the docs extra is not installed")
sys.path.insert(0, str(DOCS / "_ext"))
import dynid_docs  # noqa: E402  (docs/_ext: what conf.py decides from)

REAL = dynid_docs.REAL_LOG_EXAMPLE
REAL_LOG = dynid_docs.real_panda_log(DOCS / "examples")
EXPECTED_LOG = DOCS.parent.resolve().parent.joinpath("shared", "reference", *dynid_docs.REAL_LOG)
NO_REAL_LOG = f"the real Panda log is not at {EXPECTED_LOG} (../shared beside the repository)"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-b", "html",
               "-d", str(out / "doctrees"),
               "-D", "sphinx_gallery_conf.run_stale_examples=1",  # run them, even unchanged
               str(DOCS), str(out / "html")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"sphinx-build failed:\n{done.stdout[-4000:]}\n{done.stderr}"
    return out / "html"


def test_at_least_three_examples():
    assert len(EXAMPLES) >= 3, EXAMPLES
    assert REAL in EXAMPLES


@pytest.mark.docs
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_and_draws(site, name):
    if name == REAL and REAL_LOG is None:
        missing_reference(NO_REAL_LOG)
    page = (site / "auto_examples" / f"{name}.html").read_text()
    figure = re.search(rf'src="[^"]*_images/sphx_glr_{name}_\d+\.png"', page)
    assert figure, f"{name}: no figure on its page"
    assert (site / figure.group(0)[5:-1].replace("../", "")).is_file()
    assert "Traceback" not in page, name
    # no warning in what the reader sees run (a prior from dynid's own robots, say)
    assert not re.search(r"\w+Warning: ", page), name
    assert "sphx-glr-script-out" in page, f"{name}: no printed output"


@pytest.mark.docs
def test_twin_example_prints_what_it_computes(site):
    twin = (site / "auto_examples" / "plot_1_panda_twin.html").read_text()
    assert "base parameters: 43" in twin  # Gaz Table III


@pytest.mark.docs
def test_real_log_example_prints_what_it_computes(site):
    if REAL_LOG is None:
        missing_reference(NO_REAL_LOG)
    real = (site / "auto_examples" / f"{REAL}.html").read_text()
    assert "20544 samples" in real
    assert "physically consistent: yes" in real


@pytest.mark.docs
def test_real_log_page_says_what_is_missing_only_when_it_is(site):
    """With the log, the example ran and the page has no note; without it, the page renders
    its code unrun under a note that names the missing folder and where it goes."""
    page = (site / "auto_examples" / f"{REAL}.html").read_text()
    assert "The real Panda log of Gaz et al." in page and "read_dataset" in page  # the code
    assert "Traceback" not in page
    if REAL_LOG is not None:
        assert "built without the real log" not in page
        assert "sphx-glr-script-out" in page
    else:
        assert "built without the real log" in page
        assert str(EXPECTED_LOG) in page
        assert "sphx-glr-script-out" not in page  # not run: nothing printed


def test_missing_log_note_goes_under_the_title():
    """The note of a site built without the log (checked here on the text sphinx-gallery
    writes, so that a build with the log tests it too)."""
    note = dynid_docs.missing_data_note(DOCS.parent)
    assert str(EXPECTED_LOG) in note and "marcocognetti/FrankaEmikaPandaDynModel" in note

    config = SimpleNamespace(sphinx_gallery_conf={"gallery_dirs": "auto_examples"},
                             dynid_missing_data_note=note)
    app = SimpleNamespace(config=config)
    source = [".. _sphx_glr_auto_examples_x.py:\n\n\nThe real Panda log of Gaz et al.\n"
              "================================\n\nA log recorded on a real Panda.\n"]
    dynid_docs.note_missing_data(app, "auto_examples/other", source)
    assert note not in source[0]  # another page: untouched
    dynid_docs.note_missing_data(app, f"auto_examples/{REAL}", source)
    title, _, rest = source[0].partition("=" * 32 + "\n")
    assert title.endswith("Gaz et al.\n") and rest.lstrip().startswith(".. note::")
    assert rest.index("A log recorded") > rest.index(str(EXPECTED_LOG))
    config.dynid_missing_data_note = ""  # the log is there: no note
    source = ["Title\n=====\n\ntext\n"]
    dynid_docs.note_missing_data(app, f"auto_examples/{REAL}", source)
    assert source == ["Title\n=====\n\ntext\n"]


@pytest.mark.docs
def test_api_reference_follows_the_subpackages(site):
    import dynid.identification
    import dynid.robot

    robot = (site / "api" / "generated" / "dynid.robot.html").read_text()
    identification = (site / "api" / "generated" / "dynid.identification.html").read_text()
    assert 'id="dynid.robot.load_robot"' in robot
    assert 'id="dynid.identification.identify"' in identification
    documented = set()  # every object entry of the reference
    for path in (site / "api" / "generated").glob("*.html"):
        documented |= set(re.findall(r'<dt class="[^"]*" id="(dynid\.[\w.]+)"', path.read_text()))
    for module, page in ((dynid.robot, robot), (dynid.identification, identification)):
        for name in module.__all__:  # documented here, or listed here as documented elsewhere
            assert f"{module.__name__}.{name}" in documented or \
                f'<span class="pre">{name}</span></code>: <a' in page, name
    top = (site / "api" / "generated" / "dynid.html").read_text()
    assert 'href="dynid.identification.html#dynid.identification.identify"' in top


@pytest.mark.docs
def test_pages_cover_the_workflow_and_formats(site):
    for page in ("walkthrough", "conventions", "formats", "cli", "workflow/constrained",
                 "workflow/retrieval", "workflow/friction"):
        assert (site / f"{page}.html").is_file(), page
    walkthrough = (site / "walkthrough.html").read_text()
    assert "From your robot to a model" in walkthrough  # the README's section, included
    # code in a table cell wraps inside it: the walkthrough's table fits furo's page (a wider
    # one scrolls, its Python column cut off at the page's edge)
    assert "_static/dynid.css" in walkthrough
    assert "overflow-wrap: anywhere" in (site / "_static" / "dynid.css").read_text()
    cli = (site / "cli.html").read_text()
    assert "dynid identify" in cli and "--method" in cli  # read from the parser at build time
