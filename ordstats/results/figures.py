"""matplotlib on use: the import with an error naming the extra, and the check of ``ax=``.

Every plot of ordstats (``ordstats.plotting``, the profile, path and
posterior-check plots of the results) imports matplotlib through
:func:`pyplot` and takes its ``ax=`` through :func:`axes`, so a missing
matplotlib and an ``ax=`` that is not an Axes give the same clear error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ordstats.errors import OrdstatsError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["axes", "checked_axes", "pyplot"]

#: what the error of a missing matplotlib tells to install
INSTALL_HINT = "pip install 'ordstats[plot]' (or pip install matplotlib)"


def pyplot() -> Any:
    """``matplotlib.pyplot``, or an error that names the extra to install.

    Returns
    -------
    module

    Raises
    ------
    OrdstatsError
        If matplotlib is not installed.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise OrdstatsError(f"plotting needs matplotlib: {INSTALL_HINT}") from exc
    return plt


def checked_axes(ax: object, argument: str = "ax") -> Axes:
    """``ax`` if it is a matplotlib Axes, else an error that says what ``argument=`` takes.

    Parameters
    ----------
    ax : object
    argument : str, default "ax"
        The name the user passed ``ax`` under, for the message.

    Returns
    -------
    matplotlib.axes.Axes
    """
    pyplot()  # a missing matplotlib says so before the Axes class is imported
    from matplotlib.axes import Axes as MatplotlibAxes

    if not isinstance(ax, MatplotlibAxes):
        raise OrdstatsError(
            f"{argument} must be a matplotlib Axes (e.g. fig, ax = plt.subplots()); got {ax!r:.60}"
        )
    return ax


def axes(ax: object) -> Axes:
    """The given Axes (checked), or the Axes of a new figure if ``ax`` is None.

    Parameters
    ----------
    ax : matplotlib.axes.Axes or None

    Returns
    -------
    matplotlib.axes.Axes
    """
    if ax is not None:
        return checked_axes(ax)
    new: Axes = pyplot().subplots()[1]
    return new
