"""scikit-learn, imported only when a scikit-learn-facing name is used."""

from __future__ import annotations

from types import ModuleType

__all__ = ["require_sklearn"]

INSTALL_HINT = (
    "ordstats.learn needs scikit-learn; install it with `pip install ordstats[sklearn]` "
    "(or `pip install scikit-learn`)"
)


def require_sklearn() -> ModuleType:
    """The ``sklearn`` module, or an ImportError naming the ``ordstats[sklearn]`` extra.

    Returns
    -------
    module
        :mod:`sklearn`.

    Raises
    ------
    ImportError
        If scikit-learn is not installed.
    """
    try:
        import sklearn
    except ImportError as exc:  # pragma: no cover - exercised with sklearn hidden
        raise ImportError(INSTALL_HINT) from exc
    return sklearn
