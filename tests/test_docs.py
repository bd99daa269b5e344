"""The documentation builds with warnings as errors, its worked examples run and draw their
figures, and the API reference lists the subpackages' names (``make docs`` builds the same)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
EXAMPLES = sorted(p.stem for p in (DOCS / "examples").glob("plot_*.py"))

pytest.importorskip("sphinx_gallery", reason="the docs extra is not installed")


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


@pytest.mark.docs
def test_at_least_three_examples_run_and_draw(site):
    assert len(EXAMPLES) >= 3, EXAMPLES
    for name in EXAMPLES:
        page = (site / "auto_examples" / f"{name}.html").read_text()
        figure = re.search(rf'src="[^"]*_images/sphx_glr_{name}_\d+\.png"', page)
        assert figure, f"{name}: no figure on its page"
        assert (site / figure.group(0)[5:-1].replace("../", "")).is_file()
        assert "Traceback" not in page, name
        assert "sphx-glr-script-out" in page, f"{name}: no printed output"


@pytest.mark.docs
def test_examples_print_what_they_compute(site):
    twin = (site / "auto_examples" / "plot_1_panda_twin.html").read_text()
    assert "base parameters: 43" in twin  # Gaz Table III
    real = (site / "auto_examples" / "plot_2_real_panda_log.html").read_text()
    assert "20544 samples" in real
    assert "physically consistent: yes" in real


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
    cli = (site / "cli.html").read_text()
    assert "dynid identify" in cli and "--method" in cli  # read from the parser at build time
