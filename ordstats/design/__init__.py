"""The formula layer: data frames and formulas in, checked arrays and names out.

This is the only part of ordstats that knows about formulaic.  Every input
check that can be made before fitting happens here, so the numerical core can
assume clean arrays: finite values, positive weights, an encoded response with
at least two observed levels, and a design of full column rank.

- :mod:`~ordstats.design.core`: the :class:`Design` and :class:`TermsDesign`
  values and the checks every interface shares (missing values, weights,
  aliased columns as R's ``drop.coef``);
- :mod:`~ordstats.design.formula`: R-style formulas on a DataFrame, with R's
  ``subset=`` (:mod:`~ordstats.design.subset`) and ``contrasts=``
  (:mod:`~ordstats.design.contrasts`);
- :mod:`~ordstats.design.arrays`: a response and regressor matrices;
- :mod:`~ordstats.design.chunks`: formulas on data read in chunks;
- :mod:`~ordstats.design.newdata`: the same columns for new data.
"""

from __future__ import annotations

from formulaic.utils.context import capture_context

from ordstats.design.arrays import design_from_arrays
from ordstats.design.chunks import (
    categorical_variables,
    chunk_weights,
    drop_aliased_by_gram,
    drop_nominal_aliases_by_gram,
    fixed_level_terms,
    formula_variables,
    numeric_column_flags,
    plain_numeric_terms,
    rows_to_drop,
    side_formulas,
    stack_columns,
)
from ordstats.design.core import (
    Design,
    DesignOptions,
    TermsDesign,
    aliased_columns,
    check_choice,
    gram_with_intercept,
    refuse_repeated_columns,
    report_missing_counts,
)
from ordstats.design.formula import (
    check_formula_text,
    column_labels,
    design_from_formula,
    formula_terms,
    r_label,
    split_formula,
    term_label,
    warn_numbers_gone_astray,
)
from ordstats.design.newdata import (
    check_newdata_offset,
    given_offset,
    is_row_data,
    newdata_matrices,
    newdata_offset,
    newdata_scale_offset,
    refuse_offset_without_newdata,
    term_columns,
    terms_for_newdata,
)

__all__ = [
    "Design",
    "DesignOptions",
    "TermsDesign",
    "aliased_columns",
    "capture_context",
    "categorical_variables",
    "check_choice",
    "check_formula_text",
    "check_newdata_offset",
    "chunk_weights",
    "column_labels",
    "design_from_arrays",
    "design_from_formula",
    "drop_aliased_by_gram",
    "drop_nominal_aliases_by_gram",
    "fixed_level_terms",
    "formula_terms",
    "formula_variables",
    "given_offset",
    "gram_with_intercept",
    "is_row_data",
    "newdata_matrices",
    "newdata_offset",
    "newdata_scale_offset",
    "numeric_column_flags",
    "plain_numeric_terms",
    "r_label",
    "refuse_offset_without_newdata",
    "refuse_repeated_columns",
    "report_missing_counts",
    "rows_to_drop",
    "side_formulas",
    "split_formula",
    "stack_columns",
    "term_columns",
    "term_label",
    "terms_for_newdata",
    "warn_numbers_gone_astray",
]
