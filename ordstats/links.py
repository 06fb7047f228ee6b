"""Public home of the links: ``from ordstats.links import get_link``.

The implementation lives in :mod:`ordstats.core.links`; this module is its
stable, documented name.
"""

from __future__ import annotations

from ordstats.core.links import (
    ArandaOrdaz,
    Cauchit,
    Cloglog,
    FlexibleLink,
    Link,
    LogGamma,
    Logit,
    Loglog,
    Probit,
    get_link,
    link_names,
)

__all__ = [
    "ArandaOrdaz",
    "Cauchit",
    "Cloglog",
    "FlexibleLink",
    "Link",
    "LogGamma",
    "Logit",
    "Loglog",
    "Probit",
    "get_link",
    "link_names",
]
