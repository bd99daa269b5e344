"""BIRDy's benchmark (Leboutet et al. 2021; ``dynid benchmark``): every registered method
(``dynid.identification.methods.IDENTIFICATION_METHODS``) on a simulated robot under a PD
loop, over noise profiles and initial estimates drawn around the truth; per method and profile
bias, spread, errors, time and convergence rate, as JSON, CSV, box plots and an HTML page.

- ``protocol``: the noise profiles, BIRDy's PD gains, the experiment and the draws;
- ``runner``: the Monte-Carlo runs, in parallel and resumable;
- ``table``, ``figures``, ``page``: what is written.
"""

from dynid.benchmark.protocol import PROFILES as PROFILES
from dynid.benchmark.protocol import NoiseProfile as NoiseProfile
from dynid.benchmark.runner import BenchmarkRun as BenchmarkRun
from dynid.benchmark.runner import run_benchmark as run_benchmark
from dynid.benchmark.table import summarise as summarise

__all__ = ["PROFILES", "BenchmarkRun", "NoiseProfile", "run_benchmark", "summarise",
           "write_outputs"]


def write_outputs(run: BenchmarkRun, records: list[dict]) -> dict:
    """The table (JSON, CSV), the box plots and the HTML page in ``run.out``; their paths."""
    from dynid.benchmark.figures import write_figures
    from dynid.benchmark.page import write_page
    from dynid.benchmark.table import write_table

    rows = summarise(records, draws=run.draws)
    settings = {**run.settings(), "draws": run.draws,
                "profiles": [p.name for p in run.profiles], "methods": list(run.methods)}
    tables = write_table(rows, records, run.out, settings=settings)
    figures = write_figures(records, run.out, methods=run.methods,
                            profiles=[p.name for p in run.profiles])
    page = write_page(rows, settings, figures, run.out / "benchmark.html")
    return {"rows": rows, "files": [str(p) for p in (*tables, *figures, page)]}
