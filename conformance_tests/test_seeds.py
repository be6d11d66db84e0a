"""A seed's cells read back as written: NULL for an empty cell, quotes and backslashes kept,
decimals beyond a double's 15 digits exact (the values dbt binds into the seed's insert)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from dbt.tests.adapter.simple_seed.test_seed import BaseTestEmptySeed
from dbt.tests.util import run_dbt

SEED = "id,name,amount\n1,,12345678901234567.89\n2,O'Brien,0.10\n3,back\\slash,\n"


class TestSeedValuesReadBackExactly:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict:
        return {"seed_values.csv": SEED}

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"seeds": {"+column_types": {"name": "string", "amount": "decimal(20,2)"}}}

    def test_every_cell_reads_back_as_written(self, project) -> None:
        run_dbt(["seed"])
        rows = project.run_sql(
            "select id, name, amount from {schema}.seed_values order by id", fetch="all"
        )
        assert [tuple(row) for row in rows] == [
            (1, None, Decimal("12345678901234567.89")),
            (2, "O'Brien", Decimal("0.10")),
            (3, "back\\slash", None),
        ]


class TestEmptySeed(BaseTestEmptySeed):
    pass
