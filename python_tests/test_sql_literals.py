"""The literals the session and connect methods write for bound values (a seed's cells)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from dbt.adapters.sparkcdc.connect import BoundSessionConnectionWrapper
from dbt.adapters.sparkcdc.sql_literals import sql_literal


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (None, "NULL"),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-7, "-7"),
        # More digits than a double holds: exact (dbt-spark writes float(value)).
        (Decimal("12345678901234567.89"), "12345678901234567.89"),
        (Decimal("19.90"), "19.90"),
        (Decimal("1E+3"), "1000"),
        (Decimal("NaN"), "CAST('NaN' AS DOUBLE)"),
        (0.5, "0.5"),
        (float("inf"), "CAST('inf' AS DOUBLE)"),
        (dt.datetime(2026, 1, 2, 3, 4, 5, 678901), "'2026-01-02 03:04:05.678901'"),
        (dt.date(2026, 1, 2), "'2026-01-02'"),
        ("plain", "'plain'"),
        # A quote in a cell (dbt's Python-model seed has '69.135.206.194'): escaped.
        ("'69.135.206.194'", "'\\'69.135.206.194\\''"),
        ("back\\slash", "'back\\\\slash'"),
        ("", "''"),
    ],
)
def test_each_value_is_written_as_an_exact_literal(value, literal) -> None:
    assert sql_literal(value) == literal


def test_the_session_wrapper_binds_with_these_literals() -> None:
    assert BoundSessionConnectionWrapper._fix_binding("it's") == "'it\\'s'"
    assert BoundSessionConnectionWrapper._fix_binding(None) == "NULL"
