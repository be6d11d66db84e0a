"""A sample of dbt's cross-database macro classes (dbt.* utils) on the sparkcdc session target:
times, casts, hashing, strings, set operations."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.utils.test_any_value import BaseAnyValue
from dbt.tests.adapter.utils.test_bool_or import BaseBoolOr
from dbt.tests.adapter.utils.test_cast import BaseCast
from dbt.tests.adapter.utils.test_concat import BaseConcat
from dbt.tests.adapter.utils.test_current_timestamp import BaseCurrentTimestampNaive
from dbt.tests.adapter.utils.test_date_trunc import BaseDateTrunc
from dbt.tests.adapter.utils.test_dateadd import BaseDateAdd
from dbt.tests.adapter.utils.test_datediff import BaseDateDiff
from dbt.tests.adapter.utils.test_escape_single_quotes import BaseEscapeSingleQuotesBackslash
from dbt.tests.adapter.utils.test_except import BaseExcept
from dbt.tests.adapter.utils.test_hash import BaseHash
from dbt.tests.adapter.utils.test_intersect import BaseIntersect
from dbt.tests.adapter.utils.test_safe_cast import BaseSafeCast


class TestAnyValue(BaseAnyValue):
    pass


class TestBoolOr(BaseBoolOr):
    pass


class TestCast(BaseCast):
    pass


class TestConcat(BaseConcat):
    pass


class TestCurrentTimestampNaive(BaseCurrentTimestampNaive):
    """Timestamps are zone-less (the session time zone is UTC): dbt's naive variant."""


class TestDateTrunc(BaseDateTrunc):
    pass


class TestDateAdd(BaseDateAdd):
    pass


class TestDateDiff(BaseDateDiff):
    """As a table: the model's SQL (about 40 kB) is longer than a view's text the embedded
    metastore (Derby, LONG VARCHAR of 32,700 characters) can keep."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"models": {"+materialized": "table"}}


class TestEscapeSingleQuotes(BaseEscapeSingleQuotesBackslash):
    """Spark SQL escapes a quote with a backslash (dbt-spark's escape_single_quotes)."""


class TestExcept(BaseExcept):
    pass


class TestHash(BaseHash):
    pass


class TestIntersect(BaseIntersect):
    pass


class TestSafeCast(BaseSafeCast):
    pass
