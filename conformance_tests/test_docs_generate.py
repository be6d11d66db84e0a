"""dbt's docs-generate classes: the catalog the sparkcdc session target writes, as dbt expects it
in Spark's type names."""

from __future__ import annotations

import getpass

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate
from dbt.tests.util import AnyInteger


def spark_catalog(project, seed_stats: dict | None = None) -> dict:
    """dbt's expected catalog in Spark's type names (owner: the user the session runs as)."""
    return expected_catalog.base_expected_catalog(
        project,
        role=getpass.getuser(),
        id_type="bigint",
        text_type="string",
        time_type="timestamp",
        view_type="view",
        table_type="table",
        model_stats=expected_catalog.no_stats(),
        seed_stats=seed_stats,
    )


class TestDocsGenerate(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project) -> dict:
        return spark_catalog(project)


class TestDocsGenerateWithPackage(BaseDocsGenerate):
    """With the package's catalog, a Delta table (the seed, the snapshot: one row each) has its
    size and row count from Delta's log; views have none."""

    spark_cdc_package = True

    @pytest.fixture(scope="class")
    def expected_catalog(self, project) -> dict:
        return spark_catalog(project, seed_stats=delta_table_stats(rows=1))


def delta_table_stats(rows: int) -> dict:
    """The stats of a Delta table in the package's catalog: its bytes (any) and rows."""
    return {
        "bytes": {
            "id": "bytes",
            "label": "bytes",
            "value": AnyInteger(),
            "include": True,
            "description": None,
        },
        "rows": {
            "id": "rows",
            "label": "rows",
            "value": rows,
            "include": True,
            "description": None,
        },
        "has_stats": {
            "id": "has_stats",
            "label": "Has Stats?",
            "value": True,
            "include": False,
            "description": "Indicates whether there are statistics for this table",
        },
    }
