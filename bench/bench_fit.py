"""Fit-time benchmark: ordstats vs statsmodels' OrderedModel vs R's ``ordinal::clm``.

Run by hand (never by the test suite), from the repository root::

    python bench/bench_fit.py                      # n = 1e4, 1e5, 1e6; 5 repeats
    python bench/bench_fit.py --sizes 1e4,1e5 --repeats 3 --no-r
    python bench/bench_fit.py --full               # statsmodels at every size (slow)
    python bench/bench_fit.py --profile            # also cProfile ordstats at the largest n
    python bench/bench_fit.py --blas-threads 1     # pin OpenBLAS/OpenMP to one thread

Every configuration fits the same synthetic data (seeded; see :func:`make_data`)
with a logit link.  Reported times are medians over ``--repeats`` runs; R's
times are measured inside R, so R start-up and reading the data are excluded.
See ``bench/README.md`` for what exactly each timed block contains.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import io
import os
import platform
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

HERE = Path(__file__).resolve().parent
R_SCRIPT = HERE / "bench_clm.R"

#: Correlation of neighbouring predictors (AR(1) structure).
PREDICTOR_RHO = 0.3
#: Environment variables that set the thread count of numpy's and R's BLAS.
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


# ---------------------------------------------------------------------------
# data


@dataclass(frozen=True)
class Dataset:
    """One synthetic ordinal data set with the parameters that generated it.

    Attributes
    ----------
    X : ndarray, shape (n, p)
        Predictors, standard normal marginals with AR(1) correlation.
    y : ndarray of int, shape (n,)
        Category codes ``0..K-1``.
    beta : ndarray, shape (p,)
        True location coefficients.
    theta : ndarray, shape (K - 1,)
        True thresholds.
    seed : int
    """

    X: np.ndarray
    y: np.ndarray
    beta: np.ndarray
    theta: np.ndarray
    seed: int

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def p(self) -> int:
        """Number of predictors."""
        return int(self.X.shape[1])

    @property
    def k(self) -> int:
        """Number of response levels."""
        return int(self.theta.shape[0] + 1)


def true_beta(p: int) -> np.ndarray:
    """Fixed location coefficients: magnitudes up to 0.5, alternating signs, every fifth zero."""
    j = np.arange(p)
    beta = 0.5 * (-1.0) ** j * (j + 1) / p
    beta[4::5] = 0.0
    return beta


def ar1_covariance(p: int, rho: float) -> np.ndarray:
    """Covariance ``rho^|i-j|`` of the predictors."""
    idx = np.arange(p)
    return rho ** np.abs(idx[:, None] - idx[None, :])


def true_thresholds(beta: np.ndarray, k: int, rho: float) -> np.ndarray:
    """Thresholds that put roughly equal mass in each of ``k`` levels.

    The latent variable ``x'beta + e`` (``e`` standard logistic) is treated as
    logistic with the same variance; its ``j/k`` quantiles are the thresholds.
    """
    var_latent = float(beta @ ar1_covariance(beta.shape[0], rho) @ beta) + np.pi**2 / 3.0
    scale = np.sqrt(3.0 * var_latent) / np.pi
    return scale * special.logit(np.arange(1, k) / k)


def make_data(n: int, p: int = 20, k: int = 5, seed: int = 20240601) -> Dataset:
    """Draw a data set from the latent logistic model ``y* = x'beta + e``.

    ``y = j`` when ``theta_j <= y* < theta_{j+1}`` (codes ``0..k-1``), so that
    ``P(y <= j) = F(theta_j - x'beta)`` with the logistic ``F``: the parametrisation
    of ordstats, statsmodels' OrderedModel and R's clm.  The stream depends on
    ``(seed, n)`` only, so each size is reproducible on its own.

    Parameters
    ----------
    n, p, k : int
        Rows, predictors and response levels.
    seed : int

    Returns
    -------
    Dataset
    """
    rng = np.random.default_rng([seed, n, p, k])
    X = rng.standard_normal((n, p))
    keep = np.sqrt(1.0 - PREDICTOR_RHO**2)
    for j in range(1, p):  # in place: X[:, j] = rho X[:, j-1] + sqrt(1-rho^2) Z_j
        X[:, j] *= keep
        X[:, j] += PREDICTOR_RHO * X[:, j - 1]
    beta = true_beta(p)
    theta = true_thresholds(beta, k, PREDICTOR_RHO)
    latent = X @ beta + rng.logistic(size=n)
    y = np.searchsorted(theta, latent, side="right").astype(np.int64)
    return Dataset(X=X, y=y, beta=beta, theta=theta, seed=seed)


# ---------------------------------------------------------------------------
# measurements


@dataclass
class Measurement:
    """Timings and the fit reached by one method on one data set.

    Attributes
    ----------
    method : str
    times : list of float
        Wall-clock seconds of each repeat.
    llf : float
        Log-likelihood reached (last repeat).
    beta : ndarray or None
        Estimated location coefficients.
    converged : bool or None
        The method's own convergence flag.
    niter : int or None
        Iterations reported by the method.
    note : str
        Anything worth a footnote (warnings raised, why it was skipped).
    """

    method: str
    times: list[float] = field(default_factory=list)
    llf: float = np.nan
    beta: np.ndarray | None = None
    converged: bool | None = None
    niter: int | None = None
    note: str = ""

    @property
    def median(self) -> float:
        """Median of :attr:`times` (NaN if none)."""
        return statistics.median(self.times) if self.times else np.nan

    @property
    def skipped(self) -> bool:
        """Whether the method was not run."""
        return not self.times


def time_repeats(fn: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    """Call ``fn`` ``repeats`` times; return the wall-clock times and the last result.

    A full garbage collection runs before each (untimed), so that one repeat does
    not pay for the garbage of the previous one.
    """
    times: list[float] = []
    result = None
    for _ in range(repeats):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def _warning_note(caught: Sequence[warnings.WarningMessage]) -> str:
    """Distinct warning class names, comma-separated."""
    names = sorted({item.category.__name__ for item in caught})
    return ("warned: " + ", ".join(names)) if names else ""


def fit_ordstats(ds: Dataset) -> Any:
    """Build and fit the ordstats model with full standard errors (the timed block)."""
    import ordstats

    res = ordstats.OrdinalModel(ds.y, ds.X, link="logit").fit()
    res.bse  # noqa: B018 - touch the standard errors
    return res


def bench_ordstats(ds: Dataset, repeats: int) -> Measurement:
    """Time :func:`fit_ordstats`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        times, res = time_repeats(lambda: fit_ordstats(ds), repeats)
    return Measurement(
        method="ordstats",
        times=times,
        llf=float(res.llf),
        beta=res.params[res.model.exog_names].to_numpy(),
        converged=bool(res.converged),
        niter=int(res.niter),
        note=_warning_note(caught),
    )


def statsmodels_label(method: str, maxiter: int | None) -> str:
    """Table label of an OrderedModel configuration."""
    if maxiter is None:
        return f"statsmodels {method} (default fit)"
    return f"statsmodels {method} (maxiter={maxiter})"


def bench_statsmodels(ds: Dataset, method: str, repeats: int, maxiter: int | None) -> Measurement:
    """Time statsmodels' OrderedModel: construction, ``fit(method=...)`` and ``bse``.

    ``maxiter=None`` keeps OrderedModel's default.  Its ``fit`` computes a
    numerical Hessian at the optimum for the standard errors, so those are
    included as they are for the other methods.
    """
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    kwargs: dict[str, Any] = {"method": method, "disp": False}
    if maxiter is not None:
        kwargs["maxiter"] = maxiter

    def run() -> Any:
        res = OrderedModel(ds.y, ds.X, distr="logit").fit(**kwargs)
        res.bse  # noqa: B018
        return res

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        times, res = time_repeats(run, repeats)
    retvals = res.mle_retvals
    niter = retvals.get("iterations")
    return Measurement(
        method=statsmodels_label(method, maxiter),
        times=times,
        llf=float(res.llf),
        beta=np.asarray(res.params)[: ds.p],
        converged=bool(retvals.get("converged")),
        niter=int(niter) if niter is not None else None,
        note=_warning_note(caught),
    )


def r_available() -> str:
    """Empty string if Rscript and the ordinal package are usable, else the reason."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return "Rscript not found"
    probe = subprocess.run(
        [rscript, "-e", "quit(status = !requireNamespace('ordinal', quietly = TRUE))"],
        capture_output=True,
        check=False,
    )
    return "" if probe.returncode == 0 else "R package 'ordinal' not installed"


def write_csv(ds: Dataset, path: Path) -> None:
    """Write ``y, x1..xp`` to CSV with round-trip precision (pyarrow if available)."""
    names = [f"x{j + 1}" for j in range(ds.p)]
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        import pandas as pd

        frame = pd.DataFrame(ds.X, columns=names)
        frame.insert(0, "y", ds.y)
        frame.to_csv(path, index=False, float_format="%.17g")
        return
    columns = [pa.array(ds.y)] + [pa.array(ds.X[:, j]) for j in range(ds.p)]
    pacsv.write_csv(pa.table(columns, names=["y", *names]), path)


def parse_r_output(text: str) -> dict[str, list[str]]:
    """Parse ``KEY v1 v2 ...`` lines printed by ``bench_clm.R``."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0].isupper():
            out[parts[0]] = parts[1:]
    return out


def bench_r(ds: Dataset, repeats: int, data_dir: Path, timeout: float) -> Measurement:
    """Time ``clm()`` + ``vcov()`` in R on the same data, with R's own clock.

    The data go through a CSV in ``data_dir``; a checksum of the predictors
    computed in R is compared with numpy's to make sure R fitted the same numbers.
    """
    measurement = Measurement(method="R ordinal::clm")
    path = data_dir / f"bench_n{ds.n}_p{ds.p}_k{ds.k}.csv"
    write_csv(ds, path)
    try:
        proc = subprocess.run(
            ["Rscript", str(R_SCRIPT), str(path), str(repeats)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        measurement.note = f"R timed out after {timeout:.0f} s"
        return measurement
    finally:
        path.unlink(missing_ok=True)
    if proc.returncode != 0:
        measurement.note = "R failed: " + proc.stderr.strip().splitlines()[-1][:200]
        return measurement
    out = parse_r_output(proc.stdout)
    checksum = float(out["CHECKSUM"][0])
    expected = float(ds.X.sum())
    if abs(checksum - expected) > 1e-9 * max(1.0, float(np.abs(ds.X).sum())):
        measurement.note = f"data mismatch: R checksum {checksum!r} vs {expected!r}"
    measurement.times = [float(v) for v in out["TIMES"]]
    measurement.llf = float(out["LLF"][0])
    measurement.beta = np.array([float(v) for v in out["BETA"]])
    measurement.converged = out["CONVERGED"][0] == "1"
    measurement.niter = int(float(out["NITER"][0]))
    r_median = float(out["MEDIAN"][0])
    if abs(r_median - measurement.median) > 1e-9:  # pragma: no cover - sanity
        measurement.note += f" R median {r_median} differs from ours"
    if out.get("SE_FINITE", ["1"])[0] != "1":
        measurement.note += " non-finite SEs"
    return measurement


def warm_up(with_statsmodels: bool) -> None:
    """Import the libraries and fit once on small data, untimed.

    Keeps import and first-call costs (lazy imports, caches) out of the first
    timed repeat.
    """
    small = make_data(2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_ordstats(small)
        if with_statsmodels:
            from statsmodels.miscmodels.ordinal_model import OrderedModel

            OrderedModel(small.y, small.X, distr="logit").fit(method="bfgs", disp=False)


# ---------------------------------------------------------------------------
# memory


@dataclass(frozen=True)
class MemoryReport:
    """Peak memory of one ordstats fit.

    Attributes
    ----------
    n : int
    data_mib : float
        Size of ``X`` and ``y`` as given to the model.
    traced_peak_mib : float
        Peak of memory traced by tracemalloc (numpy buffers and Python objects)
        allocated during the fit, above what was allocated before it.
    rss_peak_mib : float
        In a fresh process holding only the data: peak resident set size during
        the fit above the RSS just before it, or NaN where not measurable.
    rss_total_mib : float
        That fresh process's peak RSS (interpreter, libraries, data and fit).
    """

    n: int
    data_mib: float
    traced_peak_mib: float
    rss_peak_mib: float
    rss_total_mib: float


def _proc_status_kib(key: str) -> float:
    """A ``kB`` field of ``/proc/self/status``, or NaN where unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return float(line.split()[1])
    except OSError:
        pass
    return np.nan


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (Linux ``clear_refs`` 5); whether it worked."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def rss_child(n: int, p: int, k: int, seed: int) -> None:
    """Body of the ``--rss-child`` process: print ``RSS before peak`` in KiB.

    Runs in a fresh interpreter so that memory freed by earlier work (kept by
    the allocator and so already resident) cannot hide the fit's peak.
    """
    ds = make_data(n, p, k, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_ordstats(make_data(2000))  # imports and lazy first-call loads, before the baseline
    gc.collect()
    if not _reset_peak_rss():
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"RSS nan {peak}")
        return
    before = _proc_status_kib("VmRSS")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_ordstats(ds)
    print(f"RSS {before} {_proc_status_kib('VmHWM')}")


def measure_memory(ds: Dataset) -> MemoryReport:
    """Measure the peak memory of :func:`fit_ordstats` (two extra, untimed fits).

    tracemalloc runs in this process; the RSS peak in a fresh child process.
    """
    mib = 1024.0**2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        fit_ordstats(ds)
        traced_peak = (tracemalloc.get_traced_memory()[1] - base) / mib
        tracemalloc.stop()
    rss_peak = rss_total = np.nan
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--rss-child",
            f"{ds.n},{ds.p},{ds.k},{ds.seed}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    fields = proc.stdout.split()
    if proc.returncode == 0 and len(fields) == 3 and fields[0] == "RSS":
        before, peak = float(fields[1]), float(fields[2])
        rss_peak, rss_total = (peak - before) / 1024.0, peak / 1024.0
    return MemoryReport(
        n=ds.n,
        data_mib=(ds.X.nbytes + ds.y.nbytes) / mib,
        traced_peak_mib=traced_peak,
        rss_peak_mib=rss_peak,
        rss_total_mib=rss_total,
    )


# ---------------------------------------------------------------------------
# profile


def profile_ordstats(ds: Dataset, top: int = 30) -> str:
    """cProfile one ordstats fit; return the top functions by cumulative and own time."""
    profiler = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        profiler.enable()
        fit_ordstats(ds)
        profiler.disable()
    buf = io.StringIO()
    stats = pstats.Stats(profiler, stream=buf).strip_dirs()
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# report


def _fmt_seconds(t: float) -> str:
    if not np.isfinite(t):
        return "-"
    return f"{t:.3f}" if t < 10 else f"{t:.1f}"


def table_rows(ds: Dataset, results: list[Measurement], llf_tol: float) -> list[list[str]]:
    """Table rows for one data set; ratios and differences relative to ordstats."""
    ref = next((m for m in results if m.method == "ordstats" and not m.skipped), None)
    rows = []
    for m in results:
        if m.skipped:
            rows.append(
                [f"{ds.n:.0e}", str(ds.p), str(ds.k), m.method] + ["-"] * 9 + [m.note or "skipped"]
            )
            continue
        ratio = m.median / ref.median if ref is not None else np.nan
        dllf = abs(m.llf - ref.llf) if ref is not None else np.nan
        dbeta = (
            float(np.max(np.abs(m.beta - ref.beta)))
            if ref is not None and m.beta is not None and ref.beta is not None
            else np.nan
        )
        rows.append(
            [
                f"{ds.n:.0e}",
                str(ds.p),
                str(ds.k),
                m.method,
                str(len(m.times)),
                _fmt_seconds(m.median),
                f"{min(m.times):.3f}..{max(m.times):.3f}",
                f"{ratio:.1f}x" if np.isfinite(ratio) else "-",
                f"{m.llf:.4f}",
                f"{dllf:.1e}",
                "yes" if dllf <= llf_tol else "NO",
                f"{dbeta:.1e}",
                f"{m.niter if m.niter is not None else '-'}"
                + ("" if m.converged else " (not conv.)"),
                m.note,
            ]
        )
    return rows


TABLE_HEADER = [
    "n",
    "p",
    "K",
    "method",
    "reps",
    "median s",
    "range s",
    "time / ordstats",
    "loglik",
    "abs dllf",
    "same llf",
    "max abs dbeta",
    "iters",
    "note",
]


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-markdown table padded to aligned columns."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def machine_note() -> str:
    """Date, CPU, cores and library versions for the report header."""
    import scipy
    import statsmodels

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas = "?"
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]["name"]
    except Exception:
        pass
    threads = ", ".join(f"{v}={os.environ[v]}" for v in BLAS_THREAD_VARS if v in os.environ)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{dt.datetime.now().isoformat(timespec='minutes')}  {cpu}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}, numpy {np.__version__} ({blas}), "
        f"scipy {scipy.__version__}, statsmodels {statsmodels.__version__}\n"
        f"BLAS threads: {threads or 'library default'}; load average at start: {load}"
    )


# ---------------------------------------------------------------------------
# main


def parse_sizes(text: str) -> list[int]:
    """Parse ``"1e4,1e5"`` into ``[10000, 100000]``."""
    sizes = [int(float(s)) for s in text.split(",") if s.strip()]
    if not sizes or min(sizes) < 100:
        raise argparse.ArgumentTypeError(f"sizes must be >= 100; got {text!r}")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes",
        type=parse_sizes,
        default=parse_sizes("1e4,1e5,1e6"),
        help="comma-separated n (default 1e4,1e5,1e6)",
    )
    ap.add_argument("--p", type=int, default=20, help="predictors (default 20)")
    ap.add_argument("--levels", type=int, default=5, help="response levels K (default 5)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats per method (default 5)")
    ap.add_argument(
        "--skip-statsmodels-above",
        type=lambda s: int(float(s)),
        default=100_000,
        help="skip OrderedModel (bfgs and nm) for n above this (default 1e5)",
    )
    ap.add_argument(
        "--full",
        action="store_true",
        help="run every method at every size (OrderedModel bfgs at 1e6 takes minutes)",
    )
    ap.add_argument("--no-statsmodels", action="store_true", help="skip OrderedModel")
    ap.add_argument("--no-nm", action="store_true", help="skip OrderedModel's default (nm) fit")
    ap.add_argument("--bfgs-maxiter", type=int, default=2000)
    ap.add_argument("--no-r", action="store_true", help="skip R's clm")
    ap.add_argument("--r-timeout", type=float, default=3600.0, help="seconds per R run")
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where the CSV for R goes (default: a fresh temporary directory)",
    )
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory fits")
    ap.add_argument(
        "--llf-tol",
        type=float,
        default=1e-4,
        help="|loglik - ordstats loglik| counted as the same optimum",
    )
    ap.add_argument(
        "--profile", action="store_true", help="cProfile one ordstats fit at the largest size"
    )
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="set OPENBLAS/OMP/MKL_NUM_THREADS (re-executes the script)",
    )
    ap.add_argument("--rss-child", default=None, help=argparse.SUPPRESS)
    return ap


def pin_blas_threads(threads: int | None, argv: Sequence[str]) -> None:
    """Re-execute this script with the BLAS thread variables set, if they differ.

    numpy reads them when it is first imported, which has happened by now.
    """
    if threads is None or all(os.environ.get(v) == str(threads) for v in BLAS_THREAD_VARS):
        return
    env = {**os.environ, **{v: str(threads) for v in BLAS_THREAD_VARS}}
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *argv], env)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the tables."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.rss_child:
        rss_child(*(int(v) for v in args.rss_child.split(",")))
        return 0
    pin_blas_threads(args.blas_threads, argv)
    r_reason = "--no-r" if args.no_r else r_available()
    print(f"# ordstats fit benchmark\n\n{machine_note()}")
    print(f"R: {'skipped (' + r_reason + ')' if r_reason else 'Rscript + ordinal'}\n")

    own_tmp = args.data_dir is None
    data_dir = Path(tempfile.mkdtemp(prefix="ordstats-bench-")) if own_tmp else args.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)

    warm_up(with_statsmodels=not args.no_statsmodels)
    rows: list[list[str]] = []
    memory: list[MemoryReport] = []
    profile_text = ""
    try:
        for n in args.sizes:
            ds = make_data(n, args.p, args.levels, args.seed)
            counts = np.bincount(ds.y, minlength=ds.k)
            print(f"n={n:.0e}: level counts {counts.tolist()}", file=sys.stderr, flush=True)
            results = [bench_ordstats(ds, args.repeats)]
            sm_ok = not args.no_statsmodels and (args.full or n <= args.skip_statsmodels_above)
            sm_why = (
                "--no-statsmodels"
                if args.no_statsmodels
                else (f"skipped: n > {args.skip_statsmodels_above:.0e} (use --full)")
            )
            for method, maxiter in (("bfgs", args.bfgs_maxiter), ("nm", None)):
                if method == "nm" and args.no_nm:
                    continue
                if sm_ok:
                    print(f"  statsmodels {method} ...", file=sys.stderr, flush=True)
                    results.append(bench_statsmodels(ds, method, args.repeats, maxiter))
                else:
                    label = statsmodels_label(method, maxiter)
                    results.append(Measurement(method=label, note=sm_why))
            if r_reason:
                results.append(Measurement(method="R ordinal::clm", note=f"skipped: {r_reason}"))
            else:
                print("  R clm ...", file=sys.stderr, flush=True)
                results.append(bench_r(ds, args.repeats, data_dir, args.r_timeout))
            if not args.no_memory:
                memory.append(measure_memory(ds))
            if args.profile and n == max(args.sizes):
                profile_text = profile_ordstats(ds)
            rows.extend(table_rows(ds, results, args.llf_tol))
            del ds, results
            gc.collect()
    finally:
        if own_tmp:
            shutil.rmtree(data_dir, ignore_errors=True)

    print(f"## Fit time (median of {args.repeats}; time / ordstats = ordstats' speedup)\n")
    print(markdown_table(TABLE_HEADER, rows))
    if memory:
        print("\n## ordstats peak memory during one fit (MiB)\n")
        mem_rows = [
            [
                f"{m.n:.0e}",
                f"{m.data_mib:.1f}",
                f"{m.traced_peak_mib:.1f}",
                f"{m.traced_peak_mib / m.data_mib:.1f}x",
                f"{m.rss_peak_mib:.1f}",
                f"{m.rss_total_mib:.0f}",
            ]
            for m in memory
        ]
        print(
            markdown_table(
                [
                    "n",
                    "X+y",
                    "tracemalloc peak",
                    "traced / data",
                    "RSS rise during fit",
                    "process peak RSS",
                ],
                mem_rows,
            )
        )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload average at end: {load}")
    if profile_text:
        print(f"\n## cProfile of one ordstats fit at n = {max(args.sizes):.0e}\n")
        print(profile_text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
