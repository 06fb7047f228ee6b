"""The ``ordstats`` command-line tool.

``ordstats fit FORMULA --data SOURCE`` fits a cumulative link model (or, with
``--family``, a sequential or adjacent-category model) and prints its summary;
``ordstats links FORMULA --data SOURCE`` compares link functions (LR and Vuong
tests); ``ordstats compare FORMULA1 FORMULA2 --data SOURCE`` tests two nested
models (anova); ``ordstats predict FORMULA --data TRAIN --newdata NEW`` prints
predictions as CSV; ``ordstats factorize --data RATINGS`` fits an ordinal matrix
factorisation (rows, columns, ratings) and prints its report or, with
``--recommend N``, recommendations as CSV; ``ordstats datasets`` lists the
bundled data sets.
``SOURCE`` is the name of a bundled data set or a path to a CSV, TSV, delimited
``.txt`` (``--sep``) or Parquet file.

Errors that ordstats raises on bad input (and any other ``ValueError`` that
the input causes) are printed as ``ordstats: error: <message>`` with exit
status 2, and ordstats warnings as ``ordstats: warning: <message>``, both on
standard error.

Examples
--------
>>> from ordstats.cli import main
>>> main(["datasets"])  # doctest: +ELLIPSIS
wine     Bitterness of wine (Randall 1989): ...
soup     Discrimination study of packet soup: ...
housing  Copenhagen housing conditions survey: ...
0
"""

from __future__ import annotations

import argparse
import bz2
import csv
import gzip
import json
import lzma
import math
import os
import re
import sys
import warnings
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

import ordstats.datasets as datasets
from ordstats._version import __version__
from ordstats.core.links import link_names
from ordstats.core.thresholds import THRESHOLD_STRUCTURES
from ordstats.design import split_formula
from ordstats.design.response import check_declared_order, format_level
from ordstats.errors import (
    DataError,
    MissingDataWarning,
    OrdstatsError,
    OrdstatsWarning,
    ResponseError,
    user_stacklevel,
)
from ordstats.estimation.factorization import (
    BIAS_PENALTY,
    FACTOR_PENALTY,
    THRESHOLD_PENALTY,
    OrdinalFactorization,
)
from ordstats.estimation.mixed import OrdinalMixedModel
from ordstats.estimation.model import OrdinalModel
from ordstats.estimation.options import ModelOptions
from ordstats.families import family_names
from ordstats.inference.link_comparison import compare_links
from ordstats.inference.lr import anova, lr_test
from ordstats.reporting import summary_frame
from ordstats.results.factorization import FactorizationResults
from ordstats.results.fitted import OrdinalResults
from ordstats.results.mixed import MixedResults
from ordstats.results.protocols import FittedModel

__all__ = [
    "build_parser",
    "fit_model",
    "load_data",
    "main",
    "mixed_to_dict",
    "prepare_response",
    "render",
    "results_to_dict",
]

#: Exit status for bad input (the same as argparse uses for bad arguments).
EXIT_ERROR = 2
#: Exit status when the reader of standard output went away (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141
FORMATS = ("text", "html", "latex", "json")
_COMPRESSED = ("", ".gz", ".bz2", ".xz", ".zip")
_CSV_SUFFIXES = tuple(".csv" + c for c in _COMPRESSED)
_TSV_SUFFIXES = tuple(".tsv" + c for c in _COMPRESSED) + tuple(".tab" + c for c in _COMPRESSED)
_TXT_SUFFIXES = tuple(".txt" + c for c in _COMPRESSED)
_TEXT_SUFFIXES = _CSV_SUFFIXES + _TSV_SUFFIXES + _TXT_SUFFIXES
_PARQUET_SUFFIXES = (".parquet", ".pq")
#: Keys of the per-parameter JSON entries, in the column order of summary_frame.
_PARAM_KEYS = ("estimate", "se", "z", "p", "lower", "upper")


# ---------------------------------------------------------------------------
# arguments


def _threshold_argument(text: str) -> str | tuple[float, ...]:
    """A structure name, or comma-separated fixed cut-points."""
    if text in THRESHOLD_STRUCTURES:
        return text
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a threshold structure ({', '.join(THRESHOLD_STRUCTURES)}) "
            "nor comma-separated numbers"
        ) from None


def _alpha(text: str) -> float:
    """Parse ``--alpha``: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1; got {text!r}")
    return value


def _positive_int(text: str) -> int:
    """Parse a positive whole number (``--nagq``)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number; got {text!r}")
    return value


def _add_data_arguments(parser: argparse.ArgumentParser, flag: str = "--data") -> None:
    parser.add_argument(
        flag,
        required=True,
        metavar="SOURCE",
        help="bundled data set name (see 'ordstats datasets') or path to a .csv, .tsv, .txt "
        "(delimited text) or .parquet file",
    )


def _add_sep_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sep",
        metavar="SEP",
        help="column separator of text files (default: ',' for .csv, tab for .tsv, "
        "guessed for .txt; '\\t' for a tab)",
    )


def _add_terms_arguments(parser: argparse.ArgumentParser) -> None:
    _add_sep_argument(parser)
    _add_model_options(parser)
    parser.add_argument(
        "--nominal", metavar="FORMULA", help='nominal (category-specific) effects, e.g. "~ contact"'
    )
    parser.add_argument("--scale", metavar="FORMULA", help='log-scale effects, e.g. "~ temp"')
    parser.add_argument("--weights", metavar="COL", help="column of frequency weights")
    parser.add_argument("--offset", metavar="COL", help="column holding a known offset")
    parser.add_argument(
        "--subset",
        metavar="EXPR",
        help="fit only the rows this condition selects (R's subset=), a pandas query on the "
        'columns of --data, e.g. "judge != 1 & temp == \'warm\'" or "Freq > 0 and '
        "Type in ['Tower', 'Atrium']\"; a missing value selects nothing",
    )
    parser.add_argument(
        "--maxiter",
        type=_positive_int,
        metavar="N",
        help="most iterations of each fit (default: as the Python API's fit())",
    )


def _add_penalty_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--penalty",
        choices=("firth",),
        help="firth: maximise Firth's penalised likelihood (Jeffreys prior), finite under "
        "separation (brglm2's bias-reduced fit for a binary logit)",
    )


#: Why each command other than fit has no use for --cov-type and --cluster.
_NO_COVARIANCE = {
    "links": "the likelihood-ratio tests, Vuong's tests and information criteria of 'ordstats "
    "links' use log-likelihoods only, not a covariance of the estimates",
    "compare": "the likelihood-ratio test of 'ordstats compare' uses the two log-likelihoods "
    "only, not a covariance of the estimates (for a robust test of terms, fit the larger "
    "model with 'ordstats fit --cov-type ...' and read its Wald tests)",
    "predict": "'ordstats predict' prints point predictions, which do not depend on the "
    "covariance of the estimates",
}


def _add_unused_covariance_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """``--cov-type`` and ``--cluster`` on a command whose output uses no covariance: refused."""
    unused = "not used here, and refused: " + _NO_COVARIANCE[command]
    parser.add_argument("--cov-type", metavar="TYPE", help=unused)
    parser.add_argument("--cluster", metavar="COL", help=unused)


def _refuse_covariance(args: argparse.Namespace) -> None:
    """Say why ``--cov-type``/``--cluster`` mean nothing to ``args.command``."""
    flags = (("--cov-type", args.cov_type), ("--cluster", args.cluster))
    given = [flag for flag, value in flags if value is not None]
    if given:
        raise DataError(
            f"{' and '.join(given)} would change nothing: {_NO_COVARIANCE[args.command]}"
        )


def _add_fit_parser(commands: Any) -> None:
    fit = commands.add_parser(
        "fit",
        allow_abbrev=False,
        help="fit an ordinal regression model and print its summary",
        description="Fit a cumulative link model (as R's ordinal::clm) or, with --family, a "
        "sequential or adjacent-category model (as VGAM's sratio, cratio, acat) and print "
        "its summary.",
    )
    fit.add_argument(
        "formula",
        help='R-style formula, e.g. "rating ~ temp + contact"; random terms as R\'s clmm, '
        'e.g. "rating ~ temp + contact + (1|judge)"',
    )
    _add_data_arguments(fit)
    _add_terms_arguments(fit)
    fit.add_argument(
        "--cov-type",
        default=None,
        choices=("nonrobust", "robust", "HC1", "cluster", "expected"),
        help="covariance behind SEs and tests: inverse observed information (default), "
        "sandwich (robust, HC1), cluster-robust (with --cluster) or inverse expected "
        "information (expected, VGAM's SEs)",
    )
    fit.add_argument(
        "--cluster", metavar="COL", help="column of cluster labels (implies --cov-type cluster)"
    )
    fit.add_argument(
        "--nagq",
        default=1,
        type=_positive_int,
        help="random effects: quadrature nodes (1 = Laplace; more = adaptive Gauss-Hermite, "
        "one random intercept only), as clmm's nAGQ",
    )
    _add_penalty_argument(fit)
    fit.add_argument("--format", default="text", choices=FORMATS, help="output format")
    fit.add_argument(
        "--alpha", default=0.05, type=_alpha, help="1 - confidence level of intervals (0.05)"
    )
    fit.add_argument(
        "--ci",
        default="wald",
        choices=("wald", "profile"),
        help="wald: the summary's intervals only (default); profile: also the profile "
        "likelihood intervals (R's confint(clm)), beside them",
    )
    fit.add_argument(
        "--odds-ratios",
        action="store_true",
        help="also print the odds ratios exp(coef) with intervals (logit link)",
    )


def _add_links_parser(commands: Any) -> None:
    links = commands.add_parser(
        "links",
        allow_abbrev=False,
        help="compare link functions (information criteria, LR and Vuong tests)",
        description="Fit the model under each link and compare them: log-likelihoods and "
        "information criteria, LR tests of each link within a flexible family that nests "
        "it, and Vuong's tests of non-nested pairs.",
    )
    links.add_argument("formula", help='R-style formula, e.g. "rating ~ temp + contact"')
    _add_data_arguments(links)
    _add_terms_arguments(links)
    links.add_argument(
        "--links",
        metavar="L1,L2,...",
        default="logit,probit,cloglog,loglog,cauchit",
        help="links to compare, comma-separated (default: the five standard links)",
    )
    _add_unused_covariance_arguments(links, "links")
    links.set_defaults(link=None)  # --link is refused here (the command fits each of --links)


def _add_compare_parser(commands: Any) -> None:
    compare = commands.add_parser(
        "compare",
        allow_abbrev=False,
        help="compare two nested models by a likelihood-ratio test (anova)",
        description="Fit two models on the same rows (those complete for both) and test the "
        "smaller against the larger by a likelihood-ratio test, as R's anova(m1, m2); two "
        "models of the same size get R's row without a test (df 0, p-value NA).",
    )
    compare.add_argument("formula1", help="the first model's formula")
    compare.add_argument("formula2", help="the second model's formula")
    _add_data_arguments(compare)
    _add_terms_arguments(compare)
    _add_unused_covariance_arguments(compare, "compare")


def _add_predict_parser(commands: Any) -> None:
    predict = commands.add_parser(
        "predict",
        allow_abbrev=False,
        help="fit on one data set, predict another, print CSV",
        description="Fit the model on --data and print predictions for --newdata as CSV "
        "(one row per row of the new data; the probabilities of each level by default).",
    )
    predict.add_argument("formula", help='R-style formula, e.g. "rating ~ temp + contact"')
    _add_data_arguments(predict)
    _add_data_arguments(predict, "--newdata")
    _add_terms_arguments(predict)
    predict.add_argument(
        "--newdata-sep",
        metavar="SEP",
        help="column separator of --newdata when it differs from --data's (default: --sep, "
        "else by the extension of --newdata)",
    )
    _add_penalty_argument(predict)
    _add_unused_covariance_arguments(predict, "predict")
    predict.add_argument(
        "--re-form",
        choices=("conditional", "0", "marginal"),
        help="random terms: predict conditional on the fitted groups' random effects (their "
        "modes; groups not in the fit get 0), at random effects 0 (population level, lme4's "
        "re.form = NA), or averaged over their distribution (default: conditional, said on "
        "standard error)",
    )
    predict.add_argument(
        "--which",
        default="prob",
        choices=("prob", "cumprob", "class", "expected", "linear", "observed"),
        help="what to predict: level probabilities (default), cumulative probabilities, "
        "the most probable level, the expected score, the linear predictor, or each row's "
        "probability of its own level (observed: --newdata needs the response column)",
    )


def _add_factorize_parser(commands: Any) -> None:
    factorize = commands.add_parser(
        "factorize",
        allow_abbrev=False,
        help="fit an ordinal matrix factorisation to ratings and print its report",
        description="Fit a low-rank cumulative link model to (row, column, rating) triples "
        "(OrdinalFactorization) and print the fit and its thresholds; with --recommend, "
        "each row's best unrated columns by expected rating, as CSV.",
    )
    _add_data_arguments(factorize)
    _add_sep_argument(factorize)
    for flag, default, what in (
        ("--row", "row", "rows (users, respondents)"),
        ("--col", "col", "columns (items, questions)"),
        ("--rating", "rating", "the ratings"),
    ):
        factorize.add_argument(flag, default=default, metavar="COL", help=f"column of {what}")
    factorize.add_argument("--weights", metavar="COL", help="column of case weights")
    factorize.add_argument(
        "--levels",
        help="rating levels, lowest first, comma-separated (needed for text ratings; "
        "default: the sorted distinct numbers)",
    )
    factorize.add_argument(
        "--many-levels", action="store_true", help="allow more than 50 distinct ratings"
    )
    factorize.add_argument("--rank", default=2, type=int, help="latent factors (0: biases only)")
    factorize.add_argument(
        "--thresholds",
        default="global",
        choices=("global", "row", "column"),
        help="one set of thresholds, or one per row or per column",
    )
    factorize.add_argument(
        "--link", default="logit", choices=link_names(), help="link function (default logit)"
    )
    for flag, penalty, what in (
        ("--factor-penalty", FACTOR_PENALTY, "ridge penalty of the factors"),
        ("--bias-penalty", BIAS_PENALTY, "ridge penalty of the biases"),
        (
            "--threshold-penalty",
            THRESHOLD_PENALTY,
            "shrinkage of per-row/column thresholds to their centre",
        ),
    ):
        factorize.add_argument(flag, default=penalty, type=float, help=f"{what} ({penalty})")
    factorize.add_argument("--max-sweeps", default=200, type=int, help="sweep limit (200)")
    factorize.add_argument(
        "--tol", default=1e-7, type=float, help="relative objective change to stop at (1e-7)"
    )
    factorize.add_argument("--seed", default=0, type=int, help="seed of the random start (0)")
    factorize.add_argument(
        "--recommend",
        metavar="N",
        type=int,
        help="print each row's N best unrated columns (CSV: row, rank, col, expected)",
    )


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    """One flag per field of :class:`ModelOptions`, with its default and allowed values."""
    defaults = ModelOptions()
    parser.add_argument(
        "--link",
        default=defaults.link,
        metavar="LINK",
        help=f"link: {', '.join(link_names(flexible=True))} (default: logit; R's spellings "
        "such as Aranda-Ordaz are accepted)",
    )
    parser.add_argument(
        "--family",
        default=defaults.family,
        choices=family_names(),
        help="cumulative (default, clm's signs); sratio/cratio (sequential: stopping or "
        "continuation ratio) or acat (adjacent categories), with VGAM's signs",
    )
    parser.add_argument(
        "--reverse",
        action="store_true",
        help="VGAM's reverse=TRUE for sratio, cratio and acat (steps from the top level down)",
    )
    parser.add_argument(
        "--threshold",
        default=defaults.threshold,
        type=_threshold_argument,
        metavar="{" + ",".join(THRESHOLD_STRUCTURES) + "} or C1,C2,...",
        help="threshold structure, or fixed increasing cut-points (the intercept is "
        "estimated instead), e.g. --threshold=0.5,1.5,2.5,3.5",
    )
    parser.add_argument(
        "--levels",
        metavar="L1,L2,...",
        help="response levels, lowest first, comma-separated (needed for text labels in CSV)",
    )
    parser.add_argument(
        "--missing",
        default=defaults.missing,
        choices=("drop", "raise"),
        help="rows with missing values: drop them (default, with a note) or stop",
    )
    parser.add_argument(
        "--collinear",
        default=defaults.collinear,
        choices=("drop", "raise", "keep"),
        help="aliased columns: drop them as R does (default), stop, or keep them (with "
        "--threshold symmetric2 a location column that is also a nominal effect is "
        "estimated; other aliased columns leave the fit unidentified)",
    )
    parser.add_argument(
        "--many-levels",
        action="store_true",
        help="allow a response with more than 50 levels",
    )


def model_options(args: argparse.Namespace) -> ModelOptions:
    """The :class:`ModelOptions` that the parsed arguments describe.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``ordstats fit`` arguments.

    Returns
    -------
    ModelOptions
    """
    values = {name: getattr(args, name) for name in ModelOptions.names()}
    values["levels"] = _parse_levels(args.levels) if args.levels is not None else None
    return ModelOptions(**values)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``ordstats`` command.

    Returns
    -------
    argparse.ArgumentParser
        With the sub-commands ``fit``, ``links``, ``compare``, ``predict``,
        ``factorize`` and ``datasets``.
    """
    parser = argparse.ArgumentParser(
        prog="ordstats",
        allow_abbrev=False,  # an abbreviated option (--odds-ratio) is a typo, not a flag
        description="Ordinal regression (cumulative link models) that agrees with R's clm.",
    )
    parser.add_argument("--version", action="version", version=f"ordstats {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_fit_parser(commands)
    _add_links_parser(commands)
    _add_compare_parser(commands)
    _add_predict_parser(commands)
    _add_factorize_parser(commands)
    commands.add_parser("datasets", help="list the bundled data sets", allow_abbrev=False)
    return parser


# ---------------------------------------------------------------------------
# data


def _data_source_error(source: str) -> DataError:
    suffix = "".join(Path(source).suffixes[-2:]) or Path(source).suffix
    bundled = ", ".join(datasets.list_datasets())
    if suffix:
        return DataError(
            f"{source!r} is neither a bundled data set ({bundled}) nor a file ordstats can "
            f"read: the extension {suffix!r} is not one of .csv, .tsv, .txt (delimited text, "
            "with --sep) or .parquet. Rename the file or convert it"
        )
    if Path(source).is_dir():
        return DataError(
            f"{source!r} is a directory; the command reads one file (.csv, .tsv, .txt or "
            ".parquet): give one of its files, or fit the directory in Python "
            "(OrdinalModel.from_formula(formula, directory, chunksize=...) reads every file)"
        )
    return DataError(
        f"{source!r} is neither a bundled data set ({bundled}) nor a path with an extension "
        "(.csv, .tsv, .txt or .parquet)"
    )


def _separator(name: str, sep: str | None, flag: str = "--sep") -> str | None:
    r"""The column separator: ``flag``'s (``\\t`` is a tab), else by extension (None: guess)."""
    if sep is not None:
        if not sep:
            raise DataError(f'{flag} needs a separator, e.g. {flag} ";" or {flag} "\\t" for a tab')
        return "\t" if sep in ("\\t", "tab") else sep
    if name.endswith(_TSV_SUFFIXES):
        return "\t"
    if name.endswith(_TXT_SUFFIXES):
        return None
    return ","


#: What reading a damaged (compressed) file raises besides pandas' parser errors.
_UNREADABLE = (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError)


def _text_sample(path: Path, size: int = 65536) -> str:
    """The first ``size`` bytes of a (possibly compressed) text file, whole lines only."""
    suffix = path.suffix.lower()
    if suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            raw = archive.read(names[0])[:size] if names else b""
    else:
        openers: dict[str, Callable[[Path, str], Any]] = {
            ".gz": gzip.open,
            ".bz2": bz2.open,
            ".xz": lzma.open,
        }
        with openers.get(suffix, open)(path, "rb") as handle:
            raw = handle.read(size)
    text = raw.decode("utf-8", errors="replace")
    return text.rsplit("\n", 1)[0] if len(raw) == size else text


def _guess_separator(path: Path) -> str:
    """The separator of a delimited text file, from its first lines (``,`` if none shows).

    pandas' own guess (``sep=None``) reads the first line only, where a
    header such as ``rating|temp`` looks as if ``t`` separated it.
    """
    try:
        sample = _text_sample(path)
    except (*_UNREADABLE, ValueError) as exc:
        raise DataError(f"cannot read {str(path)!r}: {exc}") from exc
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t| ").delimiter
    except csv.Error:  # one column, or no consistent separator: read as CSV
        return ","


def _read_csv(path: Path, sep: str | None = ",", flag: str = "--sep") -> pd.DataFrame:
    used = _guess_separator(path) if sep is None else sep
    # pandas reads a separator of several characters as a regular expression, with
    # its Python parser (and a warning unless that parser is asked for)
    engine = "python" if len(used) > 1 else None
    try:
        frame = pd.read_csv(path, sep=used, engine=engine)
    except re.error as exc:
        raise DataError(
            f"{flag} {used!r}: a separator of several characters is read as a regular "
            f"expression, and this one is not valid ({exc}); give one character, e.g. "
            f"{flag} ';'"
        ) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"cannot read {str(path)!r}: it is not UTF-8 text ({exc})") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"cannot read {str(path)!r} as CSV: {exc}") from exc
    except _UNREADABLE as exc:  # e.g. a .csv.gz that is not gzip
        raise DataError(f"cannot read {str(path)!r}: {exc}") from exc
    except ValueError as exc:  # e.g. a .zip of several files, or of none
        raise DataError(f"cannot read {str(path)!r} as one CSV table: {exc}") from exc
    _check_separator(frame, path, used, flag)
    return frame


#: Column separators that a file read with another one shows in its one column's name.
_OTHER_SEPARATORS = (";", "\t", "|", ",")


def _check_separator(frame: pd.DataFrame, path: Path, sep: str, flag: str) -> None:
    """Refuse a file read as one column whose name holds another separator (``a;b;c``)."""
    if frame.shape[1] != 1:
        return
    name = str(frame.columns[0])
    counts = {mark: name.count(mark) for mark in _OTHER_SEPARATORS if mark != sep}
    mark = max(counts, key=lambda m: counts[m])
    if counts[mark] == 0:
        return
    raise DataError(
        f"{str(path)!r} was read with the separator {_shown(sep)} as one column named "
        f"{name[:60]!r}; its columns seem to be separated by {_shown(mark)}: pass "
        f"{flag} {_shown(mark, quote=chr(34))}"
    )


def _shown(sep: str, quote: str = "'") -> str:
    """A separator as a user types it (a tab as a backslash and ``t``)."""
    return quote + ("\\t" if sep == "\t" else sep) + quote


def _check_has_rows(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    if len(frame) == 0:
        columns = ", ".join(map(str, frame.columns[:6])) + (", ..." if frame.shape[1] > 6 else "")
        raise DataError(
            f"the data file {source!r} has no data rows (only the column names: {columns})"
        )
    return frame


def _read_parquet(path: Path) -> pd.DataFrame:
    if find_spec("pyarrow") is None:
        raise DataError(
            f"reading the Parquet file {str(path)!r} needs pyarrow, which is not installed: "
            "pip install pyarrow (or pip install 'ordstats[parquet]'), or convert the file to CSV"
        )
    try:
        return pd.read_parquet(path, engine="pyarrow")
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read {str(path)!r} as Parquet: {exc}") from exc


def load_data(source: str, sep: str | None = None, sep_flag: str = "--sep") -> pd.DataFrame:
    """Load the data named on the command line.

    Parameters
    ----------
    source : str
        A bundled data set name (``"wine"``, ...) or a path ending in ``.csv``,
        ``.tsv`` or ``.txt`` (delimited text, optionally compressed, e.g.
        ``.csv.gz``), ``.parquet`` or ``.pq``.
    sep : str, optional
        Column separator of text files (``--sep``); default by extension:
        comma for ``.csv``, tab for ``.tsv``, guessed for ``.txt``.
    sep_flag : str
        The option that gives ``sep``, as messages name it (``--newdata-sep``
        for ``predict``'s new data).

    Returns
    -------
    pandas.DataFrame
        CSV columns as pandas parses them; Parquet columns keep their types,
        including ordered categoricals.

    Raises
    ------
    DataError
        Unknown name, missing or unreadable file, or Parquet without pyarrow.
    """
    name = source.lower()
    is_csv = name.endswith(_TEXT_SUFFIXES)
    if not is_csv and not name.endswith(_PARQUET_SUFFIXES):
        if source in datasets.list_datasets():
            return datasets.load(source)
        raise _data_source_error(source)
    path = Path(source)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        if any(mark in source for mark in "*?["):  # a glob: the shell did not expand it
            raise DataError(
                f"no file is named {source!r}; the command reads one file and does not "
                "expand patterns: give one file, or fit the files in Python "
                "(OrdinalModel.from_formula(formula, pattern, chunksize=...))"
            )
        raise DataError(f"the data file {source!r} {what}; give the path to a file")
    if not is_csv:
        return _check_has_rows(_read_parquet(path), source)
    frame = _read_csv(path, _separator(name, sep, sep_flag), sep_flag)
    return _check_has_rows(frame, source)


def _parse_levels(text: str) -> list[str]:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes of another encoding, escaped by Python's argv
        raise ResponseError(
            "--levels holds bytes that are not UTF-8 text; write the levels in UTF-8 (as "
            "the data file's text is read)"
        ) from None
    levels = [part.strip() for part in text.split(",")]
    if len(levels) < 2 or not all(levels):
        raise ResponseError(
            f"--levels must list at least two non-empty levels separated by commas, "
            f'lowest first, e.g. --levels "Low,Medium,High"; got {text!r}'
        )
    repeated = sorted({level for level in levels if levels.count(level) > 1})
    if repeated:
        raise ResponseError(
            f"--levels lists {', '.join(map(repr, repeated))} more than once; give each "
            f"level once, lowest first; got {text!r}"
        )
    return levels


def _is_ordered(column: pd.Series) -> bool:
    """Whether ordstats can order ``column`` without ``--levels``."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return bool(column.cat.ordered) or pd.api.types.is_numeric_dtype(column.cat.categories)
    return pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def _unordered_response_error(name: str, column: pd.Series) -> ResponseError:
    labels = sorted(map(format_level, pd.unique(column.dropna())))
    shown = ",".join(labels[:6]) + (",..." if len(labels) > 6 else "")
    return ResponseError(
        f"the response {name!r} holds text labels with no order. Give the order, lowest "
        f'first, with --levels, e.g. --levels "{shown}" rearranged into the real order '
        "(shown alphabetically), or store it as an ordered categorical in a Parquet file"
    )


def prepare_response(
    data: pd.DataFrame, formula: str, levels: Sequence[str] | None
) -> pd.DataFrame:
    """Apply ``--levels`` to the response column, or check that it is ordered.

    With ``levels``, the response values are compared as text, so ``--levels
    "1,2,3"`` also orders a numeric column.

    Parameters
    ----------
    data : pandas.DataFrame
    formula : str
        The model formula (its left-hand side names the response).
    levels : sequence of str or None
        The response levels, lowest first (the parsed ``--levels``).

    Returns
    -------
    pandas.DataFrame
        ``data`` itself, or a copy with the response as text labels.

    Raises
    ------
    ResponseError
        A response of text labels without ``levels``.
    """
    response, _ = split_formula(formula, random_terms=True)
    return _order_column(data, response, levels)


def _order_column(data: pd.DataFrame, name: str, levels: Sequence[str] | None) -> pd.DataFrame:
    """:func:`prepare_response` for the column ``name`` (also the ratings of ``factorize``)."""
    if name not in data.columns:
        return data  # the model reports the missing column
    column = data[name]
    if levels is None:
        if not _is_ordered(column):
            raise _unordered_response_error(name, column)
        return data
    check_declared_order(column, list(levels), name)  # a Parquet file's ordered categorical
    labels = column.astype(object).map(format_level, na_action="ignore")
    return data.assign(**{name: labels})


# ---------------------------------------------------------------------------
# fitting and output


def fit_model(args: argparse.Namespace) -> OrdinalResults | MixedResults:
    """Load the data and fit the model that the ``fit`` arguments describe.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``ordstats fit`` arguments.

    Returns
    -------
    OrdinalResults or MixedResults
        A :class:`~ordstats.results.mixed.MixedResults` for a formula with random terms.
    """
    options = model_options(args)
    data = prepare_response(load_data(args.data, args.sep), args.formula, options.levels)
    model = _model(args, args.formula, data, options)
    if isinstance(model, OrdinalMixedModel):
        if args.cov_type is not None or args.cluster is not None:
            raise OrdstatsError("--cov-type and --cluster are not available with random effects")
        if args.penalty is not None:
            raise OrdstatsError("--penalty is not available with random effects")
        return model.fit(nagq=args.nagq, **_fit_keywords(args))
    if args.nagq != 1:
        raise OrdstatsError("--nagq needs random terms in the formula, e.g. '(1|judge)'")
    return model.fit(**_covariance_options(args, data), **_fit_keywords(args))


def _fit_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of ``fit()`` that the flags give (``--maxiter``, ``--penalty``)."""
    keywords: dict[str, Any] = {} if args.maxiter is None else {"maxiter": args.maxiter}
    if getattr(args, "penalty", None) is not None:  # fit and predict only
        keywords["penalty"] = args.penalty
    return keywords


def _model(
    args: argparse.Namespace, formula: str, data: pd.DataFrame, options: ModelOptions
) -> OrdinalModel:
    """The model that ``formula`` and the shared arguments describe, on ``data``.

    Its summary's ``data:`` line names ``--data`` (the bundled set's name or the path),
    as the API's names the caller's data frame.
    """
    model = OrdinalModel.from_formula(
        formula,
        data,
        nominal=args.nominal,
        scale=args.scale,
        weights=args.weights,
        offset=args.offset,
        subset=args.subset,
        context={},
        **options.as_keywords(),
    )
    model.data_name = args.data
    return model


def _covariance_options(args: argparse.Namespace, data: pd.DataFrame) -> dict[str, Any]:
    """``cov_type`` and ``cov_kwds`` of ``fit()`` from ``--cov-type`` and ``--cluster``."""
    cov_type = args.cov_type or ("cluster" if args.cluster else "nonrobust")
    if cov_type == "cluster" and not args.cluster:
        raise DataError("--cov-type cluster needs --cluster COL, the column of cluster labels")
    if args.cluster and cov_type != "cluster":
        raise DataError(f"--cluster goes with --cov-type cluster, not {cov_type}")
    if not args.cluster:
        return {"cov_type": cov_type}
    if args.cluster not in data.columns:
        raise DataError(f"the cluster column {args.cluster!r} is not a column of the data")
    return {"cov_type": "cluster", "cov_kwds": {"groups": data[args.cluster]}}


def _json_number(value: Any) -> float | None:
    """Return a float for JSON, or None for NaN and infinities (JSON has neither)."""
    number = float(value)
    return number if math.isfinite(number) else None


def results_to_dict(res: OrdinalResults, formula: str, alpha: float = 0.05) -> dict[str, Any]:
    """Return the fit as a JSON-ready dict.

    Parameters
    ----------
    res : OrdinalResults
    formula : str
        The formula as the user gave it.
    alpha : float
        One minus the confidence level of ``lower`` and ``upper``.

    Returns
    -------
    dict
        ``formula``, ``response``, ``levels``, ``family``, ``reverse``, ``link``,
        ``threshold``, ``nobs``,
        ``n_rows``, ``loglik``, ``aic``, ``bic``, ``converged``, ``niter``,
        ``max_grad``, ``cond_H``, ``cov_type``, ``alpha``, ``aliased`` (the columns
        dropped as aliased, by part: ``location``, ``nominal``, ``scale``; R's
        ``fit$aliased``) and ``params``: for each parameter name, ``estimate``,
        ``se``, ``z``, ``p``, ``lower``, ``upper``.  Non-finite numbers are ``None``.
    """
    table = summary_frame(res, alpha=alpha)
    params = {
        str(name): {key: _json_number(v) for key, v in zip(_PARAM_KEYS, row, strict=True)}
        for name, row in zip(table.index, table.to_numpy(), strict=True)
    }
    model = res.model
    return {
        "formula": formula,
        "response": model.endog_name,
        "levels": model.levels,
        "family": model.family,
        "reverse": model.reverse,
        "link": model.link.name,
        "threshold": model.threshold,
        "nobs": _json_number(res.nobs),
        "n_rows": res.n_rows,
        "loglik": _json_number(res.llf),
        "aic": _json_number(res.aic),
        "bic": _json_number(res.bic),
        "converged": res.converged,
        "niter": res.niter,
        "max_grad": _json_number(res.max_grad),
        "cond_H": _json_number(res.cond_H),
        "cov_type": res.cov_type,
        "alpha": alpha,
        "aliased": _aliased(model),
        "params": params,
    }


def _aliased(model: FittedModel) -> dict[str, list[str]]:
    """The columns dropped as aliased from each part of the design (empty lists if none)."""
    design = model.design
    parts = {"location": design.location, "nominal": design.nominal, "scale": design.scale}
    return {name: list(part.aliased) if part else [] for name, part in parts.items()}


def mixed_to_dict(res: MixedResults, formula: str, alpha: float = 0.05) -> dict[str, Any]:
    """Return a mixed fit as a JSON-ready dict.

    Parameters
    ----------
    res : MixedResults
    formula : str
    alpha : float

    Returns
    -------
    dict
        ``formula``, ``levels``, ``link``, ``threshold``, ``nagq``, ``nobs``, ``n_rows``,
        ``loglik``, ``aic``, ``bic``, ``converged``, ``niter``, ``max_grad``, ``cond_H``,
        ``cov_type``, ``alpha``, ``groups``, ``random_effects`` (group, name, variance,
        sd per row of VarCorr) and ``params`` as for a clm fit.
    """
    ci = res.conf_int(alpha)
    table = zip(
        res.params, res.bse, res.tvalues, res.pvalues, ci["lower"], ci["upper"], strict=True
    )
    params = {
        str(name): {key: _json_number(v) for key, v in zip(_PARAM_KEYS, row, strict=True)}
        for name, row in zip(res.params.index, table, strict=True)
    }
    vc = res.varcorr()
    return {
        "formula": formula,
        "levels": res.model.levels,
        "link": res.model.problem.link.name,
        "threshold": res.model.threshold,
        "nagq": res.nagq,
        "nobs": _json_number(res.nobs),
        "n_rows": res.n_rows,
        "loglik": _json_number(res.llf),
        "aic": _json_number(res.aic),
        "bic": _json_number(res.bic),
        "converged": res.converged,
        "niter": res.niter,
        "max_grad": _json_number(res.max_grad),
        "cond_H": _json_number(res.cond_H),
        "cov_type": res.cov_type,
        "alpha": alpha,
        "groups": res.n_groups,
        "random_effects": [
            {
                "group": g,
                "name": n,
                "variance": _json_number(v),
                "sd": _json_number(sd),
            }
            for g, n, v, sd in zip(vc["group"], vc["name"], vc["variance"], vc["sd"], strict=True)
        ],
        "params": params,
    }


def render(res: OrdinalResults | MixedResults, fmt: str, formula: str, alpha: float = 0.05) -> str:
    """Render a fit as text, HTML, LaTeX or JSON.

    Parameters
    ----------
    res : OrdinalResults
    fmt : {"text", "html", "latex", "json"}
    formula : str
    alpha : float

    Returns
    -------
    str
    """
    if isinstance(res, MixedResults):
        if fmt == "json":
            return json.dumps(mixed_to_dict(res, formula, alpha), indent=2, allow_nan=False)
        if fmt != "text":
            raise OrdstatsError("mixed models (random terms) print as --format text or json")
        return res.summary()
    if fmt == "json":
        return json.dumps(results_to_dict(res, formula, alpha), indent=2, allow_nan=False)
    smry = res.summary(alpha=alpha)
    renderers = {"text": smry.as_text, "html": smry.as_html, "latex": smry.as_latex}
    return str(renderers[fmt]())


def _subset_flag(match: re.Match[str]) -> str:
    """``--subset`` for a selection that is not True/False per row (no Python-only advice)."""
    got = f" (it gave values of {match.group(1)})" if match.group(1) else ""
    return (
        f"--subset must be a condition, true or false on each row{got}, e.g. "
        "--subset \"temp == 'warm' & response > 20\""
    )


def _levels_flag(match: re.Match[str]) -> str:
    """``--levels a,b`` for the API's ``levels=['a', 'b']`` in a message."""
    return "--levels " + ",".join(re.findall(r"'([^']*)'", match.group(1)))


#: The Python API's spellings in messages and the command line's flags for them.
_FLAG_SPELLINGS = (
    (re.compile(r"\bfit\(penalty='firth'\)"), "--penalty firth"),
    (re.compile(r"\bmany_levels=True\b"), "--many-levels"),
    (re.compile(r"\breverse=True\b"), "--reverse"),
    (
        re.compile(r"\b(missing|collinear|link|family|threshold|penalty|which)=(['\"])([\w.-]+)\2"),
        r"--\1 \3",
    ),
    (
        re.compile(r"(?<![\w.])(threshold|links|weights|row|col|rating|nagq)=(?=[\s,;:)]|$)"),
        r"--\1",
    ),
    (re.compile(r"\bmax_sweeps\b"), "--max-sweeps"),
    (
        re.compile(r"\bdrop levels= to use the Categorical's order"),
        "drop --levels to use its order",
    ),
    (
        re.compile(
            r"which is not a function of the caller's names, of context= or of the formulas' "
            r"own (\([^)]*\)); define or import it before fitting, or pass context=\{[^}]*\}"
        ),
        r"which is not a function formulas can call on the command line \1",
    ),
    (re.compile(r"\bfit\(maxiter=\.\.\.\)"), "--maxiter N"),
    (re.compile(r"\bcov_type\b"), "--cov-type"),
    (re.compile(r"\bconf_int\(method='profile'\)"), "--ci profile"),
    (re.compile(r"use it on an unpenalised fit \(model\.fit\(\)\)"), "drop --penalty"),
    (re.compile(r"\bsubset=(?=['\"])"), "--subset "),
    (re.compile(r"\bre_form=(0|'marginal')"), "--re-form \\1"),
    (
        re.compile(r"^(weights|offset) must be numeric; got dtype (\S+) in the column '([^']*)'"),
        r"--\1 \3: the column '\3' must be numeric (weights and offsets are numbers); got dtype \2",
    ),
    (re.compile(r"^subset selects"), "--subset selects"),
    (
        re.compile(
            r"^subset must (?:select rows with True/False values|be one True/False value per "
            r"row)(?:; the (?:Series|array) has (dtype \w+))?.*$"
        ),
        _subset_flag,
    ),
    (re.compile(r" and the caller's variables as @name"), ""),  # Python only
    # what only the Python API accepts, dropped from lists of choices and advice
    (re.compile(r", a Link, or a frozen scipy\.stats continuous distribution"), ""),
    (
        re.compile(r"\(e\.g\. the latest, or frame\.drop_duplicates\(\[row, col\]\)\)"),
        "(e.g. the latest)",
    ),
    (re.compile(r" or fit_regularized\(alpha=\.\.\., L1_wt=\.\.\.\)"), ""),  # Python only
    (re.compile(r" or pass offset= \(a number or one value per row\)"), ""),  # Python only
    (re.compile(r"\b(factor|bias|threshold)_penalty\b"), r"--\1-penalty"),
    (re.compile(r"^(rank|tol|seed) must be a"), r"--\1 must be a"),  # factorize's settings
    (re.compile(r"\bcov_kwds\[['\"]groups['\"]\]"), "--cluster"),
    # levels=['a', 'b'] (a list the API printed) is --levels a,b
    (re.compile(r"(?<![\w.])levels=\[((?:'[^',]*'(?:, )?)+)\]"), _levels_flag),
)


def in_flag_terms(message: str) -> str:
    """``message`` with the Python API's keywords spelled as this command's flags.

    Advice that only the Python API can follow (``fit(penalty="firth")``,
    ``context=``) is left as it is: the messages name Python there.
    """
    for pattern, flag in _FLAG_SPELLINGS:
        message = pattern.sub(flag, message)
    return message


@contextmanager
def _warnings_to(stream: TextIO) -> Iterator[None]:
    """Print ordstats warnings raised inside the block as ``ordstats: warning: ...``.

    Other warnings are re-issued unchanged once the block ends.
    """
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", OrdstatsWarning)
            yield
    finally:
        for item in caught:
            if issubclass(item.category, OrdstatsWarning):
                print(f"ordstats: warning: {in_flag_terms(str(item.message))}", file=stream)
            else:
                warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)


def _run_fit(args: argparse.Namespace) -> None:
    with _warnings_to(sys.stderr):
        res = fit_model(args)
        text = render(res, args.format, args.formula, args.alpha)
        if args.ci == "profile":
            text = _with_profile_intervals(text, res, args.format, args.alpha)
        if args.odds_ratios:
            text = _with_odds_ratios(text, res, args.format, args.alpha)
    print(text)


def _with_profile_intervals(
    text: str, res: OrdinalResults | MixedResults, fmt: str, alpha: float
) -> str:
    """Add the profile likelihood intervals (``--ci profile``) to the rendered summary.

    JSON gains ``profile_lower`` and ``profile_upper`` in each parameter's entry.
    """
    if fmt == "latex":
        raise DataError("--ci profile goes with --format text, html or json")
    if isinstance(res, MixedResults):
        raise OrdstatsError(
            "--ci profile is not available with random effects (R's clmm has no profile "
            "either); the summary's Wald intervals are R's confint(clmm)"
        )
    table = res.conf_int(alpha, method="profile")
    if fmt == "json":
        payload = json.loads(text)
        for name, (lower, upper) in zip(table.index, table.to_numpy(), strict=True):
            entry = payload["params"][str(name)]
            entry["profile_lower"], entry["profile_upper"] = (
                _json_number(lower),
                _json_number(upper),
            )
        payload["ci"] = "profile"
        return json.dumps(payload, indent=2, allow_nan=False)
    title = f"Profile likelihood intervals ({1 - alpha:.0%})"
    if fmt == "html":
        return f"{text}\n<h3>{title}</h3>\n" + table.to_html(float_format="%.4g")
    return f"{text}\n\n{title}\n" + table.to_string(float_format=lambda v: f"{v:.4f}")


def _with_odds_ratios(text: str, res: OrdinalResults | MixedResults, fmt: str, alpha: float) -> str:
    """Add the odds-ratio table (``--odds-ratios``) to the rendered summary."""
    table = res.odds_ratios(alpha)
    if fmt == "json":
        payload = json.loads(text)
        payload["odds_ratios"] = {
            str(name): {key: _json_number(value) for key, value in row.items()}
            for name, row in table.iterrows()
        }
        return json.dumps(payload, indent=2, allow_nan=False)
    if fmt == "html":
        return text + "\n<h3>Odds ratios</h3>\n" + table.to_html(float_format="%.4g")
    if fmt == "latex":
        raise DataError("--odds-ratios goes with --format text, html or json")
    meaning = table.attrs.get("interpretation", "")
    return f"{text}\n\nOdds ratios ({1 - alpha:.0%} intervals; {meaning})\n" + table.to_string(
        float_format=lambda v: f"{v:.4g}"
    )


def _options_without_link(args: argparse.Namespace) -> dict[str, Any]:
    keywords = model_options(args).as_keywords()
    keywords.pop("link", None)
    return keywords


def _run_links(args: argparse.Namespace) -> None:
    if args.link is not None:
        raise DataError(
            f"--link {args.link} is not used by 'ordstats links', which fits the model under "
            "each link of --links: give the links to compare as --links L1,L2,..."
        )
    _refuse_covariance(args)
    args.link = ModelOptions().link
    links = [part.strip() for part in args.links.split(",") if part.strip()]
    if len(links) < 2:
        raise DataError(f"--links needs at least two links separated by commas; got {args.links!r}")
    options = model_options(args)
    data = prepare_response(load_data(args.data, args.sep), args.formula, options.levels)
    with _warnings_to(sys.stderr):
        comparison = compare_links(
            args.formula,
            data,
            links,
            nominal=args.nominal,
            scale=args.scale,
            weights=args.weights,
            offset=args.offset,
            subset=args.subset,
            context={},
            fit_kwds=_fit_keywords(args),
            **_options_without_link(args),
        )
    print(comparison)


def _run_compare(args: argparse.Namespace) -> None:
    _refuse_covariance(args)
    options = model_options(args)
    data = load_data(args.data, args.sep)
    data = prepare_response(data, args.formula1, options.levels)
    data = prepare_response(data, args.formula2, options.levels)
    formulas = (args.formula1, args.formula2)
    with _warnings_to(sys.stderr):
        models = [_model(args, f, data, options) for f in formulas]
        common = _common_rows(models, data)
        if common is not None:  # missing values in a term of one model only
            models = [_model(args, f, data.loc[common], options) for f in formulas]
        fits = [model.fit(**_fit_keywords(args)) for model in models]
        small, large = sorted(fits, key=lambda res: res.k_params)
        test = lr_test(small, large)  # first: its message says why two fits do not nest
        # one formula twice: anova's own labels tell the rows apart
        names = [args.formula1, args.formula2] if args.formula1 != args.formula2 else None
        table = anova(*fits, names=names)
    print(table.to_string(float_format=lambda v: f"{v:.6g}"))
    print()
    print(test)


def _rows_used(model: OrdinalModel) -> pd.Index:
    """The labels of the rows that ``model`` fits (those left after dropping missing values)."""
    design = model.design
    return design.fixed.row_index if isinstance(model, OrdinalMixedModel) else design.row_index


def _common_rows(models: Sequence[OrdinalModel], data: pd.DataFrame) -> pd.Index | None:
    """The rows of ``data`` that every model uses, or None when they all use the same rows.

    A term with missing values in one model only drops its rows from that model
    alone; ``compare`` refits both on the rows they share (as R users do with
    ``na.omit`` before ``anova``), and says so.
    """
    used = [_rows_used(model) for model in models]
    if all(len(rows) == len(used[0]) and rows.equals(used[0]) for rows in used):
        return None
    keep = data.index.isin(used[0])
    for rows in used[1:]:
        keep &= data.index.isin(rows)
    common = data.index[keep]
    counts = " and ".join(str(len(rows)) for rows in used)
    warnings.warn(
        f"the models use different rows ({counts}) because of missing values in terms of "
        f"one model only; both are fitted to the {len(common)} rows complete for both, so "
        "that the likelihood-ratio test compares them on the same data",
        MissingDataWarning,
        stacklevel=user_stacklevel(),
    )
    return common


def _run_predict(args: argparse.Namespace) -> None:
    _refuse_covariance(args)
    options = model_options(args)
    data = prepare_response(load_data(args.data, args.sep), args.formula, options.levels)
    newdata_sep = args.sep if args.newdata_sep is None else args.newdata_sep
    newdata = load_data(args.newdata, newdata_sep, "--newdata-sep")
    with _warnings_to(sys.stderr):
        res = _model(args, args.formula, data, options).fit(**_fit_keywords(args))
        if isinstance(res, MixedResults):
            predicted = _predict_mixed(res, newdata, args)
        elif args.re_form is not None:
            raise OrdstatsError(
                "--re-form needs random terms in the formula, e.g. '(1|judge)'; without them "
                "every prediction is population-level"
            )
        else:
            predicted = res.predict(newdata, which=args.which)
    predicted.to_csv(sys.stdout, index_label="row")


#: What each --re-form means (None: the default, conditional, said on standard error).
_RE_FORMS: dict[str | None, str | int | None] = {
    None: None,
    "conditional": None,
    "0": 0,
    "marginal": "marginal",
}


def _predict_mixed(
    res: MixedResults, newdata: pd.DataFrame, args: argparse.Namespace
) -> pd.DataFrame | pd.Series:
    """``predict``'s output for random terms, as ``--re-form`` asks (noting the default)."""
    if args.which in ("linear", "observed"):
        raise OrdstatsError(
            f"--which {args.which} is not available with random terms; give --which prob, "
            "cumprob, class or expected"
        )
    predicted = res.predict(newdata, which=args.which, re_form=_RE_FORMS[args.re_form])
    if args.re_form is None:
        print(
            "ordstats: note: predictions are conditional on the fitted groups' random "
            "effects (their modes; rows of groups not in the fit use 0); --re-form 0 gives "
            "population-level predictions (random effects 0), --re-form marginal averages "
            "over the random effects' distribution",
            file=sys.stderr,
        )
    return predicted


def _run_factorize(args: argparse.Namespace) -> None:
    levels = _parse_levels(args.levels) if args.levels is not None else None
    data = _order_column(load_data(args.data, args.sep), args.rating, levels)
    with _warnings_to(sys.stderr):
        model = OrdinalFactorization(
            data,
            row=args.row,
            col=args.col,
            rating=args.rating,
            weights=args.weights,
            levels=levels,
            many_levels=args.many_levels,
            rank=args.rank,
            factor_penalty=args.factor_penalty,
            bias_penalty=args.bias_penalty,
            thresholds=args.thresholds,
            threshold_penalty=args.threshold_penalty,
            link=args.link,
        )
        res = model.fit(max_sweeps=args.max_sweeps, tol=args.tol, seed=args.seed)
    if args.recommend is not None:
        if args.recommend < 1:
            raise DataError(
                f"--recommend must be a positive number of columns; got {args.recommend}"
            )
        res.recommend(args.recommend).to_csv(sys.stdout, index=False)
        return
    print(_factorization_report(res, model))


def _factorization_report(res: FactorizationResults, model: OrdinalFactorization) -> str:
    """The fit's sizes, convergence and thresholds as text."""
    ratings = model.ratings
    levels = ", ".join(format_level(level) for level in res.levels)
    thresholds = res.thresholds
    shown = (
        thresholds
        if len(thresholds) <= 20
        else thresholds.describe().loc[["mean", "std", "min", "max"]]
    )
    lines = [
        f"Ordinal matrix factorisation: {res.link.name} link, rank {res.rank}, "
        f"{res.sharing} thresholds",
        f"rows: {model.n_rows}  columns: {model.n_cols}  ratings: {len(ratings.y)}  "
        f"levels: {levels}",
        f"sweeps: {res.n_sweeps}  converged: {'yes' if res.converged else 'no'}  "
        f"objective (negative log posterior): {res.objective:.4f}",
        "",
        "Thresholds" + ("" if shown is thresholds else " (summary over rows/columns)") + ":",
        shown.to_string(float_format=lambda v: f"{v:.4f}"),
    ]
    return "\n".join(lines)


def _run_datasets(args: argparse.Namespace) -> None:
    names = datasets.list_datasets()
    width = max(map(len, names))
    for name in names:
        print(f"{name:<{width}}  {datasets.describe(name)['description']}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ordstats`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 2 on bad arguments or bad input.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version or bad arguments
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    repeated = _repeated_options(parser, args.command, sys.argv[1:] if argv is None else argv)
    if repeated:
        print(f"ordstats: error: {repeated}", file=sys.stderr)
        return EXIT_ERROR
    commands = {
        "fit": _run_fit,
        "links": _run_links,
        "compare": _run_compare,
        "predict": _run_predict,
        "factorize": _run_factorize,
        "datasets": _run_datasets,
    }
    try:
        commands[args.command](args)
        sys.stdout.flush()
    except ValueError as exc:  # OrdstatsError, and what numpy, pandas or scipy say of the input
        # one line (a formula's error marks the place on lines of its own)
        message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        print(f"ordstats: error: {in_flag_terms(message)}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # output piped into e.g. head, which stopped reading
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    return 0


def _repeated_options(parser: argparse.ArgumentParser, command: str, argv: Sequence[str]) -> str:
    """Say which option taking one value was given more than once ("" if none).

    argparse keeps the last value silently (``--data wine --data soup`` fits soup).
    """
    sub = next(
        action.choices[command]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    single = {
        flag
        for action in sub._actions
        if isinstance(action, argparse._StoreAction)
        for flag in action.option_strings
    }
    seen: dict[str, int] = {}
    for token in argv:
        if token == "--":
            break
        flag = token.split("=", 1)[0]
        if flag in single:
            seen[flag] = seen.get(flag, 0) + 1
    twice = [flag for flag, count in seen.items() if count > 1]
    if not twice:
        return ""
    return f"{', '.join(twice)} given more than once; give each once (the last would be used)"


def _silence_stdout() -> None:
    """Point stdout at the null device so that the flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
