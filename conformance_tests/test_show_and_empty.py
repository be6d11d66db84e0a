"""dbt show and --empty runs (dbt-spark's dbt_show/ and empty/ classes)."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from dbt.tests.adapter.dbt_show.test_dbt_show import BaseShowLimit, BaseShowSqlHeader
from dbt.tests.adapter.empty.test_empty import (
    BaseTestEmpty,
    BaseTestEmptyInlineSourceRef,
    BaseTestEmptySeedFlag,
)


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestEmptyRun(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass


# dbt-core 1.12 truncates a seed's rows under --empty; 1.11 loads them all. Strict: an
# unexpected pass shows.
SEED_EMPTY_UNSUPPORTED = pytest.mark.xfail(
    condition=tuple(int(part) for part in version("dbt-core").split(".")[:2]) < (1, 12),
    strict=True,
    reason="dbt-core 1.11 loads every row of a seed under --empty (its seed command does not "
    "read the flag); dbt-core 1.12 truncates them (dbt-labs/dbt-core#12716)",
)


class TestEmptySeedFlag(BaseTestEmptySeedFlag):
    @SEED_EMPTY_UNSUPPORTED
    def test_seed_empty_creates_table_with_zero_rows(self, project) -> None:
        super().test_seed_empty_creates_table_with_zero_rows(project)

    @SEED_EMPTY_UNSUPPORTED
    def test_seed_empty_preserves_column_types(self, project) -> None:
        super().test_seed_empty_preserves_column_types(project)

    @SEED_EMPTY_UNSUPPORTED
    def test_build_empty_with_seed(self, project) -> None:
        super().test_build_empty_with_seed(project)
