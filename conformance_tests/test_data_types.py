"""dbt's data-type macros and current timestamps (dbt-spark's utils/test_data_types.py and
test_timestamps.py classes, with Spark's types)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.utils.data_types.test_type_bigint import BaseTypeBigInt
from dbt.tests.adapter.utils.data_types.test_type_boolean import BaseTypeBoolean
from dbt.tests.adapter.utils.data_types.test_type_float import BaseTypeFloat
from dbt.tests.adapter.utils.data_types.test_type_float import (
    seeds__expected_csv as float_expected_csv,
)
from dbt.tests.adapter.utils.data_types.test_type_int import BaseTypeInt
from dbt.tests.adapter.utils.data_types.test_type_int import (
    seeds__expected_csv as int_expected_csv,
)
from dbt.tests.adapter.utils.data_types.test_type_numeric import BaseTypeNumeric
from dbt.tests.adapter.utils.data_types.test_type_string import BaseTypeString
from dbt.tests.adapter.utils.data_types.test_type_timestamp import BaseTypeTimestamp
from dbt.tests.adapter.utils.test_timestamps import BaseCurrentTimestamps


def _expected_typed(column: str, column_type: str) -> str:
    """The expected seed's YAML giving ``column`` its type (a CSV seed would infer another)."""
    return (
        "version: 2\nseeds:\n  - name: expected\n    config:\n"
        f"      column_types:\n        {column}: {column_type}\n"
    )


class TestTypeBigInt(BaseTypeBigInt):
    pass


class TestTypeFloat(BaseTypeFloat):
    @pytest.fixture(scope="class")
    def seeds(self) -> dict:
        return {
            "expected.csv": float_expected_csv,
            "expected.yml": _expected_typed("float_col", "float"),
        }


class TestTypeInt(BaseTypeInt):
    @pytest.fixture(scope="class")
    def seeds(self) -> dict:
        return {"expected.csv": int_expected_csv, "expected.yml": _expected_typed("int_col", "int")}


class TestTypeNumeric(BaseTypeNumeric):
    def numeric_fixture_type(self) -> str:
        return "decimal(28,6)"


class TestTypeString(BaseTypeString):
    pass


class TestTypeTimestamp(BaseTypeTimestamp):
    pass


class TestTypeBoolean(BaseTypeBoolean):
    pass


class TestCurrentTimestamps(BaseCurrentTimestamps):
    """Spark has one zone-less timestamp type (the session time zone is UTC), and no back-compat
    forms of current_timestamp."""

    @pytest.fixture(scope="class")
    def models(self) -> dict:
        return {
            "get_current_timestamp.sql": "select {{ current_timestamp() }} as current_timestamp"
        }

    @pytest.fixture(scope="class")
    def expected_schema(self) -> dict:
        return {"current_timestamp": "timestamp"}

    @pytest.fixture(scope="class")
    def expected_sql(self) -> str:
        return "select current_timestamp() as current_timestamp"
