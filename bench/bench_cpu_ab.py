"""CPU time per clm fit of two checkouts of ordstats, alternating, in one run.

On a shared machine wall-clock times measure the load; CPU time measures the code
much better, and alternating the two checkouts fit by fit exposes both to the same
load.  Run by hand (never by the test suite), from the repository root::

    git worktree add --detach /tmp/ordstats-main main
    python bench/bench_cpu_ab.py /tmp/ordstats-main . --rows 100000 --repeats 15
    python bench/bench_cpu_ab.py /tmp/ordstats-main . --rows 100000 --link probit

Each checkout gets a worker process of its own (``PYTHONPATH`` set to it, one BLAS
thread) that builds ``bench_fit.make_data(rows)``, fits once untimed, then times
``OrdinalModel(y, X, link=link).fit().bse`` with ``time.process_time`` whenever the
driver asks; the driver asks the two in turn, ``--repeats`` times each, and prints
the medians and the fastest fits (the least disturbed by other programs), their
ratios, the Newton iterations and the largest relative differences
of the estimates and standard errors between the two checkouts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
from bench_fit import make_data
import numpy as np
import ordstats
rows, link = int(sys.argv[1]), sys.argv[2]
data = make_data(rows)
fit = lambda: ordstats.OrdinalModel(data.y, data.X, link=link).fit()
res = fit()
print(json.dumps({
    "params": np.asarray(res.params, dtype=float).tolist(),
    "bse": np.asarray(res.bse, dtype=float).tolist(),
    "iterations": int(res.mle_retvals["iterations"]),
}), flush=True)
for _ in sys.stdin:
    start = time.process_time()
    fit().bse
    print(time.process_time() - start, flush=True)
"""


class _Worker:
    """A worker process timing fits of one checkout on request."""

    def __init__(self, checkout: Path, rows: int, link: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(checkout), OPENBLAS_NUM_THREADS="1")
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(rows), link, str(HERE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=checkout,  # "python -c" puts the working directory first on sys.path
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.requests, self.answers = self.process.stdin, self.process.stdout
        self.first = json.loads(self.answers.readline())

    def time_one_fit(self) -> float:
        self.requests.write("\n")
        self.requests.flush()
        return float(self.answers.readline())

    def close(self) -> None:
        self.requests.close()
        self.process.wait()


def _largest_relative(a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(x - y) / np.maximum(np.abs(x), 1e-300)))


def main() -> None:
    """Time the two checkouts and print one line of results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="checkout A (e.g. a worktree of main)")
    parser.add_argument("new", type=Path, help="checkout B")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--link", default="logit")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    workers = {"old": _Worker(args.old.resolve(), args.rows, args.link)}
    workers["new"] = _Worker(args.new.resolve(), args.rows, args.link)
    times: dict[str, list[float]] = {name: [] for name in workers}
    for _ in range(args.repeats):
        for name, worker in workers.items():
            times[name].append(worker.time_one_fit())
    for worker in workers.values():
        worker.close()
    first = {name: worker.first for name, worker in workers.items()}
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    fastest = {name: min(values) for name, values in times.items()}
    print(
        f"{args.rows} rows x 20, {args.link}: CPU per fit old {old * 1e3:.1f} ms, "
        f"new {new * 1e3:.1f} ms (new / old {new / old:.3f}, medians of {args.repeats}; "
        f"fastest fits {fastest['old'] * 1e3:.1f} and {fastest['new'] * 1e3:.1f} ms, "
        f"new / old {fastest['new'] / fastest['old']:.3f}); "
        f"iterations {first['old']['iterations']} / {first['new']['iterations']}; "
        f"largest relative difference: estimates "
        f"{_largest_relative(first['old']['params'], first['new']['params']):.1e}, "
        f"standard errors {_largest_relative(first['old']['bse'], first['new']['bse']):.1e}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
