"""Fit times on a busy machine (issue 24): quiet, beside ``nproc`` busy processes, one BLAS thread.

Run by hand (never by the test suite), from the repository root::

    PYTHONPATH=. python bench/bench_contention.py                 # everything, 3 repeats
    PYTHONPATH=. python bench/bench_contention.py --no-r --repeats 5
    PYTHONPATH=. python bench/bench_contention.py --only "clm 1e5 x 20" --only "R clm 1e5 x 20"
    PYTHONPATH=. python bench/bench_contention.py --products      # the thread thresholds
    PYTHONPATH=. python bench/bench_contention.py --r-clmm --save run.jsonl   # + R's clmm
    PYTHONPATH=. python bench/bench_contention.py --only "clmm 1e4 rows x 500 groups" \
        --only "R clmm 1e4 rows x 500 groups"                       # clmm against R's only

``--only`` runs the workloads it names (R's clmm and clm at 1e6 included), in the
order of the table; an unknown name stops with the list of names.
    PYTHONPATH=. python bench/bench_contention.py --report run.jsonl          # its table again

Every workload runs three ways, back to back, each in a fresh process of its own:

* **quiet**: default settings (the BLAS variables removed from the environment);
* **busy**: default settings beside ``nproc`` processes running ``while True: pass``;
* **busy, 1 thread**: the same busy processes, and ``OPENBLAS_NUM_THREADS``,
  ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` set to 1.

A worker builds its data, makes one untimed warm-up fit (imports, caches) and
times ``--repeats`` fits; the table gives the median wall-clock time, a second table
the median CPU seconds of the Python workers.  The ratios and targets
compare workloads measured in this one run.  ``--products`` instead times the
Gram product ``X' diag(w) X`` (``ordstats.core.linalg.weighted_gram``) on one and on
two BLAS threads, quiet and busy: the measurements behind
``ordstats.core.threads.THREADED_WORK``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
MODES = ("quiet", "busy", "busy, 1 thread")

#: The bench/README headline and earlier tables (quiet machine): the "no regression" targets.
QUIET_REFERENCE = {
    "clm 1e4 x 20": 0.010,  # bench/README "Headline numbers", 2026-11-25
    "clm 1e5 x 20": 0.087,
    "clm 1e6 x 20": 0.743,
    "OrdinalClassifier 1e5 x 20": 0.07,  # README: 0.06-0.07 s (bench_boston.py --only-large)
    "clmm 1e4 rows x 500 groups": 0.37,  # bench/README, mixed models
    "elastic-net path 1e5 x 100": 4.34,  # bench/README, penalised fits (one run)
}


# ---------------------------------------------------------------------------
# workers: each runs in its own process and prints one JSON line


def _time(
    fit: Callable[[], Any], warm_up: Callable[[], Any], repeats: int
) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (every thread of the process) of ``repeats`` fits."""
    warm_up()  # imports, caches: a small fit of the same kind, not timed
    times, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fit()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times, cpu


Workload = tuple[Callable[[], Any], Callable[[], Any]]  # (timed fit, warm-up fit)


def _clm(n: int) -> Workload:
    from bench_fit import make_data

    import ordstats

    ds, small = make_data(n), make_data(2_000)
    return (
        lambda: ordstats.OrdinalModel(ds.y, ds.X, link="logit").fit().bse,
        lambda: ordstats.OrdinalModel(small.y, small.X, link="logit").fit().bse,
    )


def _classifier() -> Workload:
    from bench_boston import large_data

    from ordstats.learn import OrdinalClassifier

    X, y = large_data()
    return (
        lambda: OrdinalClassifier().fit(X, y),
        lambda: OrdinalClassifier().fit(X[:2000], y[:2000]),
    )


def _mord() -> Workload:
    import mord
    from bench_boston import large_data

    X, y = large_data()

    def fit(rows: int | None = None) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return mord.LogisticAT(alpha=0.0).fit(X[:rows], y[:rows])

    return fit, lambda: fit(2000)


def _clmm() -> Workload:
    from bench_clmm import simulate

    import ordstats

    data, small = simulate(10_000, 500, 10), simulate(1_000, 50, 10)
    formula = "y ~ " + " + ".join(f"x{k}" for k in range(1, 11)) + " + (1|g)"
    return (
        lambda: ordstats.OrdinalModel.from_formula(formula, data).fit(),
        lambda: ordstats.OrdinalModel.from_formula(formula, small).fit(),
    )


def _path() -> Workload:
    from bench_penalized import simulate

    import ordstats

    X, y = simulate(100_000, 100)
    model = ordstats.OrdinalModel(y, X)
    small = ordstats.OrdinalModel(y[:2000], X[:2000])
    return (
        lambda: model.path(n_alphas=100, l1_ratio=0.5),
        lambda: small.path(n_alphas=5, l1_ratio=0.5),
    )


def _r_clm(n: int, repeats: int) -> list[float]:
    from bench_fit import make_data, parse_r_output, write_csv

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clm.csv"
        write_csv(make_data(n), path)
        done = subprocess.run(
            ["Rscript", str(HERE / "bench_clm.R"), str(path), str(repeats)],
            capture_output=True,
            text=True,
            check=True,
        )
    return [float(t) for t in parse_r_output(done.stdout)["TIMES"]]


def _r_clmm(repeats: int) -> list[float]:
    from bench_clmm import simulate

    formula = "y ~ " + " + ".join(f"x{k}" for k in range(1, 11)) + " + (1|g)"
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clmm.csv"
        simulate(10_000, 500, 10).to_csv(path, index=False)
        for _ in range(repeats):
            done = subprocess.run(
                ["Rscript", str(REPO / "tests" / "r" / "clmm_bench_fit.R"), str(path), formula],
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(float(re.search(r"elapsed_seconds ([\d.]+)", done.stdout).group(1)))
    return times


PYTHON_WORKLOADS: dict[str, Callable[[], Workload]] = {
    "clm 1e4 x 20": lambda: _clm(10_000),
    "clm 1e5 x 20": lambda: _clm(100_000),
    "clm 1e6 x 20": lambda: _clm(1_000_000),
    "OrdinalClassifier 1e5 x 20": _classifier,
    "mord LogisticAT 1e5 x 20": _mord,
    "clmm 1e4 rows x 500 groups": _clmm,
    "elastic-net path 1e5 x 100": _path,
}
R_WORKLOADS: dict[str, Callable[[int], list[float]]] = {
    "R clm 1e4 x 20": lambda repeats: _r_clm(10_000, repeats),
    "R clm 1e5 x 20": lambda repeats: _r_clm(100_000, repeats),
    "R clm 1e6 x 20": lambda repeats: _r_clm(1_000_000, repeats),
    "R clmm 1e4 rows x 500 groups": _r_clmm,
}


def worker(name: str, repeats: int) -> None:
    """Time one workload in this process; print ``{"times": [...], "cpu": [...]}``.

    R's workloads report their own (wall-clock) times only.
    """
    sys.path.insert(0, str(HERE))
    if name in R_WORKLOADS:
        print(json.dumps({"times": R_WORKLOADS[name](repeats)}))
        return
    times, cpu = _time(*PYTHON_WORKLOADS[name](), repeats)
    print(json.dumps({"times": times, "cpu": cpu}))


# ---------------------------------------------------------------------------
# the driver


def mode_env(mode: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
    if mode == "busy, 1 thread":
        env |= dict.fromkeys(BLAS_VARS, "1")
    return env


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` processes spinning ``while True: pass`` for the block; killed after."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(1.0)
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def run_worker(name: str, repeats: int, env: dict[str, str]) -> dict[str, Any] | str:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name]
    done = subprocess.run(
        [*command, "--repeats", str(repeats)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def measure(
    names: list[str], repeats: int, r_clmm_repeats: int, r_modes: set[str], save: Path | None
) -> dict:
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        row: dict[str, Any] = {}
        is_r = name in R_WORKLOADS
        count = r_clmm_repeats if name.startswith("R clmm") else repeats
        modes = [m for m in MODES if not is_r or m in r_modes]
        row["load"] = [load()]
        if "quiet" in modes:
            _store(row, "quiet", run_worker(name, count, mode_env("quiet")))
        busy = [m for m in modes if m != "quiet"]
        if busy:
            with busy_processes(os.cpu_count() or 1):
                row["load"].append(load())
                for mode in busy:
                    _store(row, mode, run_worker(name, count, mode_env(mode)))
                row["load"].append(load())
        results[name] = row
        if save is not None:
            with save.open("a") as out:
                out.write(json.dumps({"name": name, **row}) + "\n")
        print(f"{name}: " + ", ".join(f"{m} {_fmt(row.get(m))}" for m in MODES), flush=True)
    return results


def _store(row: dict[str, Any], mode: str, answer: dict[str, Any] | str) -> None:
    """Put a worker's wall-clock times under ``mode`` and its CPU times under ``mode cpu``."""
    if isinstance(answer, str):  # the worker failed: its last error line
        row[mode] = answer
        return
    row[mode] = answer["times"]
    if "cpu" in answer:
        row[f"{mode} cpu"] = answer["cpu"]


def _median(times: Any) -> float | None:
    return statistics.median(times) if isinstance(times, list) and times else None


def _fmt(times: Any) -> str:
    if times is None:
        return "-"
    if isinstance(times, str):
        return f"failed ({times})"
    return f"{statistics.median(times):.3g}"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "-"


def report(results: dict, repeats: int, r_clmm_repeats: int) -> str:
    lines = [
        "| workload | quiet s | busy s | busy, 1 thread s | busy / busy 1 thread "
        "(target <= 1.3x) | quiet reference s | quiet vs reference | load (start, busy) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, row in results.items():
        quiet, busy, single = (_median(row.get(m)) for m in MODES)
        is_r = name.startswith("R ") or name.startswith("mord")
        ratio = _ratio(busy, single)
        if busy is not None and single is not None and not is_r:
            ratio += " met" if busy <= 1.3 * single else " NOT met"
        reference = QUIET_REFERENCE.get(name)
        against = "-"
        if reference is not None and quiet is not None:
            against = f"{quiet / reference:.2f}x " + ("met" if quiet <= reference else "NOT met")
        cells = [
            name,
            *(_fmt(row.get(m)) for m in MODES),
            ratio,
            f"{reference}" if reference is not None else "-",
            against,
            ", ".join(row["load"][:2]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines += cpu_table(results)
    lines += targets(results)
    lines.append("")
    lines.append(
        f"Medians of {repeats} timed fits per cell (R clmm: {r_clmm_repeats}), each cell a fresh "
        "process after one untimed warm-up fit (R: its own repeats inside one Rscript)."
    )
    return "\n".join(lines)


def cpu_table(results: dict) -> list[str]:
    """CPU seconds per fit (all threads of the worker) where the workers measured them.

    Wall-clock time beside busy processes is mostly waiting for a core; CPU
    time tells whether the fit itself did more work (threads spinning, work
    repeated) with the default settings than with one BLAS thread.
    """
    rows = [(name, row) for name, row in results.items() if "busy cpu" in row]
    if not rows:
        return []
    lines = [
        "| workload | quiet CPU s | busy CPU s | busy, 1 thread CPU s "
        "| busy / busy 1 thread, CPU |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, row in rows:
        busy, single = (_median(row.get(f"{m} cpu")) for m in MODES[1:])
        cells = [name, *(_fmt(row.get(f"{m} cpu")) for m in MODES), _ratio(busy, single)]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def targets(results: dict) -> list[str]:
    def busy(name: str) -> float | None:
        return _median(results.get(name, {}).get("busy"))

    out = []
    pairs = [
        ("R clm 1e5 x 20", "clm 1e5 x 20", 15.0, "clm 1e5 x 20 vs R's clm, busy"),
        ("mord LogisticAT 1e5 x 20", "OrdinalClassifier 1e5 x 20", 10.0, "classifier vs mord"),
        ("R clmm 1e4 rows x 500 groups", "clmm 1e4 rows x 500 groups", None, "clmm vs R's, busy"),
    ]
    for slow, fast, target, label in pairs:
        a, b = busy(slow), busy(fast)
        if a is None or b is None:
            out.append(f"- {label}: not measured")
            continue
        verdict = (
            ""
            if target is None
            else (f" (target >= {target:g}x: " + ("met" if a / b >= target else "NOT met") + ")")
        )
        out.append(f"- {label}: {a / b:.1f}x{verdict}")
    return out


def products(repeats: int) -> str:
    """``weighted_gram`` on one and two BLAS threads, quiet and beside busy processes."""
    from threadpoolctl import threadpool_limits

    from ordstats.core.linalg import weighted_gram

    rng = np.random.default_rng(0)
    shapes = [(100_000, 20), (1_000_000, 20), (100_000, 100), (100_000, 200), (100_000, 300)]
    lines = [
        "| n | p | work n p^2 | quiet 1 thread ms | quiet 2 threads ms | "
        "busy 1 thread ms | busy 2 threads ms |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    data = {shape: (rng.normal(size=shape), rng.random(shape[0])) for shape in shapes}

    def timed(X: np.ndarray, w: np.ndarray, threads: int) -> float:
        with threadpool_limits(limits=threads, user_api="blas"):
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                weighted_gram(X, w)
                times.append(time.perf_counter() - start)
        return 1e3 * statistics.median(times)

    quiet = {s: [timed(*data[s], t) for t in (1, 2)] for s in shapes}
    with busy_processes(os.cpu_count() or 1):
        busy = {s: [timed(*data[s], t) for t in (1, 2)] for s in shapes}
    for n, p in shapes:
        cells = [f"{n:.0e}", str(p), f"{n * p * p:.1e}"]
        cells += [f"{t:.1f}" for t in quiet[(n, p)] + busy[(n, p)]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine() -> str:
    import numpy
    import scipy

    return (
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"scipy {scipy.__version__}, load average at start {load()}"
    )


def selected_workloads(only: list[str] | None, no_r: bool, r_1e6: bool, r_clmm: bool) -> list[str]:
    """The workloads to run: those named by ``--only`` (any of them), else the default set.

    The default set leaves out R's clm at 1e6 and R's clmm (minutes per fit)
    unless ``--r-1e6`` / ``--r-clmm`` ask for them; a name given to ``--only``
    is run whatever the other flags say.
    """
    every = [*PYTHON_WORKLOADS, *R_WORKLOADS]
    if only:
        unknown = [n for n in only if n not in every]
        if unknown:
            raise SystemExit(
                f"unknown workload(s) {', '.join(map(repr, unknown))}; the names are: "
                + ", ".join(map(repr, every))
            )
        return [n for n in every if n in only]
    names = list(PYTHON_WORKLOADS)
    if not no_r:
        names += [
            n for n in R_WORKLOADS if (r_1e6 or "1e6" not in n) and (r_clmm or "clmm" not in n)
        ]
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--r-clmm-repeats", type=int, default=1)
    parser.add_argument(
        "--r-clmm", action="store_true", help="also R's clmm (one to several minutes per fit)"
    )
    parser.add_argument("--save", type=Path, help="append each workload's times to this file")
    parser.add_argument("--report", type=Path, help="print the table of a --save file and stop")
    parser.add_argument("--no-r", action="store_true", help="leave R out")
    parser.add_argument("--r-1e6", action="store_true", help="also R's clm at 1e6 (minutes)")
    parser.add_argument("--only", action="append", help="run only these workloads")
    parser.add_argument("--products", action="store_true", help="time the Gram product only")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeats)
        return
    if args.report:
        saved = [json.loads(line) for line in args.report.read_text().splitlines()]
        print(report({row.pop("name"): row for row in saved}, args.repeats, args.r_clmm_repeats))
        return
    # a terminated run still kills its busy processes (the finally of busy_processes)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    names = selected_workloads(args.only, args.no_r, args.r_1e6, args.r_clmm)
    print(machine())
    if args.products:
        print(products(max(args.repeats, 5)))
        return
    # R uses its own BLAS (the reference BLAS here): OPENBLAS_NUM_THREADS does not apply
    results = measure(names, args.repeats, args.r_clmm_repeats, {"quiet", "busy"}, args.save)
    print()
    print(report(results, args.repeats, args.r_clmm_repeats))
    print(f"load average at the end {load()}")


if __name__ == "__main__":
    main()
