"""R ``ordinal``'s names of ordstats' parameters, so that R users can name them as they know them.

ordstats names a treatment-coded level ``temp[T.warm]`` (formulaic's name) where
R's ``coef(clm)`` reads ``tempwarm``; a nominal effect ``1|2:contact[T.yes]`` is
R's ``1|2.contactyes``.  Methods that take parameter names (``slice``,
``profile``, ``conf_int(which=)``, ``t_test``/``wald_test`` constraints and
``hypotheses``) accept both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ordstats.design.formula import r_label

__all__ = ["r_name_aliases", "r_parameter_names"]

#: a factor level's brackets, ``[T.warm]`` (treatment coding) or ``[warm]`` (full rank,
#: and ``poly(x, 2)[1]``), which R writes without: ``tempwarm``, ``poly(x, 2)1``
_LEVEL_BRACKETS = re.compile(r"\[(?:T\.)?([^\[\]]*)\]")


def r_parameter_names(name: str) -> list[str]:
    """R ``ordinal``'s names of the parameter ordstats calls ``name`` (its ``coef()``).

    ``temp[T.warm]`` is ``tempwarm``, ``poly(x, 2)[1]`` is ``poly(x, 2)1``, the
    nominal effect ``1|2:contact[T.yes]`` is ``1|2.contactyes``, the threshold
    ``1|2`` of a model with nominal effects ``1|2.(Intercept)``, and the scale
    effect ``scale:temp[T.warm]`` is ``tempwarm`` (as the location effect: R
    repeats the name).

    Examples
    --------
    >>> r_parameter_names("1|2:contact[T.yes]")
    ['1|2.contactyes']
    >>> r_parameter_names("1|2")
    ['1|2.(Intercept)']
    """
    if name.startswith("scale:"):
        name = name[len("scale:") :]
    spelled = r_label(_LEVEL_BRACKETS.sub(r"\1", name))
    cut, sep, rest = spelled.partition(":")
    if "|" in cut:  # a threshold, or a nominal effect on it
        return [f"{cut}.{rest}" if sep else f"{cut}.(Intercept)"]
    return [spelled]


def r_name_aliases(names: Sequence[str]) -> dict[str, str]:
    """R's name of each parameter that R names differently, mapped to ordstats' name.

    Names R gives two parameters (a location and a scale effect of one column)
    and names that are ordstats' own names of other parameters are left out.
    """
    found: dict[str, list[str]] = {}
    for own in names:
        for alias in r_parameter_names(own):
            if alias != own:
                found.setdefault(alias, []).append(own)
    return {
        alias: owns[0] for alias, owns in found.items() if len(owns) == 1 and alias not in names
    }
