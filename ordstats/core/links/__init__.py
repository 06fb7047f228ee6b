"""Links as distribution functions: the standard five and the flexible families.

:mod:`~ordstats.core.links.standard` defines :class:`Link` and the links of
R's ``clm`` (logit, probit, cloglog, loglog, cauchit);
:mod:`~ordstats.core.links.flexible` the families with an estimated shape
parameter (Aranda-Ordaz, log-gamma).  This module is the one registry that
turns a name into a link.
"""

from __future__ import annotations

from ordstats.core.links.distribution import DistributionLink, as_distribution_link
from ordstats.core.links.flexible import ArandaOrdaz, FlexibleLink, LogGamma
from ordstats.core.links.standard import (
    Cauchit,
    Cloglog,
    Link,
    Logit,
    Loglog,
    Probit,
    log1mexp,
)
from ordstats.errors import SpecificationError

__all__ = [
    "ArandaOrdaz",
    "Cauchit",
    "Cloglog",
    "DistributionLink",
    "FlexibleLink",
    "Link",
    "LogGamma",
    "Logit",
    "Loglog",
    "Probit",
    "fixed_shape_link",
    "get_link",
    "link_names",
    "log1mexp",
]

_LINKS: dict[str, type[Link]] = {cls.name: cls for cls in (Logit, Probit, Cloglog, Loglog, Cauchit)}
_FLEXIBLE = ("aranda-ordaz", "log-gamma")
_ALIASES = {"loggamma": "log-gamma", "arandaordaz": "aranda-ordaz"}


def link_names(flexible: bool = False) -> tuple[str, ...]:
    """Return the names accepted by :func:`get_link`.

    Parameters
    ----------
    flexible : bool
        Include the flexible families with an estimated parameter.
    """
    return tuple(_LINKS) + (_FLEXIBLE if flexible else ())


def _normalise(name: str) -> str:
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    return _ALIASES.get(key.replace("-", ""), key) if key not in _LINKS else key


def get_link(link: str | Link | object) -> Link:
    """Return the :class:`Link` called ``link`` (or ``link`` itself if it is one).

    Parameters
    ----------
    link : str or Link
        One of ``"logit"``, ``"probit"``, ``"cloglog"``, ``"loglog"``, ``"cauchit"``,
        or a flexible family ``"aranda-ordaz"``, ``"log-gamma"`` (R's spellings
        ``"Aranda-Ordaz"``, ``"log-gamma"`` and case variants are accepted), a
        :class:`Link` instance, or a frozen scipy continuous distribution such as
        ``scipy.stats.t(df=5)`` (as statsmodels' ``OrderedModel(distr=...)``; see
        :class:`~ordstats.core.links.distribution.DistributionLink`).

    Returns
    -------
    Link
        For a flexible family, a :class:`~ordstats.core.links.flexible.FlexibleLink` at the
        ``lambda`` of the standard link it nests (logit and probit).

    Raises
    ------
    SpecificationError
        If the name is unknown; the message lists the known names.

    Examples
    --------
    >>> from ordstats.core.links import get_link
    >>> float(get_link("logit").cdf(0.0))
    0.5
    >>> get_link("Aranda-Ordaz")
    ArandaOrdaz(lam=1)
    """
    if isinstance(link, Link):
        return link
    if isinstance(link, str):
        key = _normalise(link)
        if key in _LINKS:
            return _LINKS[key]()
        if key in _FLEXIBLE:
            return ArandaOrdaz() if key == "aranda-ordaz" else LogGamma()
    else:
        wrapped = as_distribution_link(link)
        if wrapped is not None:
            return wrapped
    raise SpecificationError(
        f"unknown link {link!r}; choose one of {', '.join(map(repr, link_names(flexible=True)))}"
        ", a Link, or a frozen scipy.stats continuous distribution"
    )


def fixed_shape_link(link: str | Link | object, why: str) -> Link:
    """:func:`get_link`, refusing the flexible families (whose parameter ``why`` explains).

    Parameters
    ----------
    link : str or Link
    why : str
        Why the caller cannot use a link with a free shape parameter.

    Raises
    ------
    SpecificationError
        For a flexible family; the message lists the links without one.
    """
    resolved = get_link(link)
    if isinstance(resolved, FlexibleLink):
        raise SpecificationError(
            f"the {resolved.name} link has a shape parameter that {why}; use one of "
            f"{', '.join(map(repr, link_names()))} (or a Link or frozen scipy distribution "
            "without free parameters)"
        )
    return resolved
