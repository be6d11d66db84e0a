"""dbt's incremental classes on the sparkcdc session target (Delta, the merge strategy)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import run_dbt

# dbt-spark's incremental default is append (it has no unique key): the classes that update
# rows by key run the merge strategy, as dbt-spark's own functional tests set them.
MERGE = {"models": {"+incremental_strategy": "merge"}}


class TestIncrementalUniqueKey(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return MERGE


class TestIncrementalUniqueKeyWithPackage(TestIncrementalUniqueKey):
    spark_cdc_package = True


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


class TestMergeExcludeColumnsWithPackage(BaseMergeExcludeColumns):
    spark_cdc_package = True


# Delta drops a column only from a table with column mapping (a protocol upgrade its readers
# must support): sync_all_columns, which would drop the columns the model no longer selects,
# stops with dbt-spark's compilation error instead, as dbt-spark's TestDeltaOnSchemaChange asserts.
DELTA_DROPS_NO_COLUMN = "Compilation Error"


class TestIncrementalOnSchemaChangeWithPackage(BaseIncrementalOnSchemaChange):
    spark_cdc_package = True

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"models": {"+incremental_strategy": "merge", "+unique_key": "id"}}

    def test_run_incremental_sync_all_columns(self, project) -> None:
        for model in ("incremental_sync_all_columns", "incremental_sync_remove_only"):
            select = f"model_a {model} {model}_target"
            run_dbt(["run", "--models", select, "--full-refresh"])
            second = run_dbt(["run", "--models", select], expect_pass=False)
            assert DELTA_DROPS_NO_COLUMN in second[1].message, second[1].message


class TestIncrementalOnSchemaChange(TestIncrementalOnSchemaChangeWithPackage):
    spark_cdc_package = False

    @pytest.mark.xfail(
        strict=True,
        reason="dbt-spark's MERGE updates `set *` and inserts `*`, which fail on a column the "
        "model no longer selects (DELTA_MERGE_UNRESOLVED_EXPRESSION); the spark_cdc package "
        "lists the columns the source has",
    )
    def test_run_incremental_append_new_columns(self, project) -> None:
        super().test_run_incremental_append_new_columns(project)


# The merge predicate dbt's class expects: rows whose id is 2 are not merged (inserted again).
PREDICATE_MODEL = """
{{ config(materialized='incremental', unique_key='id') }}
{% if not is_incremental() %}
select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color
{% else %}
select cast(1 as bigint) as id, 'hey' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all
select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color
{% endif %}
"""


class TestIncrementalPredicatesMerge(BaseIncrementalPredicates):
    """dbt's class with the model and predicate dbt-spark's functional tests use for merge (its
    own model deletes then inserts, a strategy Spark does not have)."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {
            "models": {
                "+incremental_predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
            }
        }

    @pytest.fixture(scope="class")
    def models(self) -> dict:
        return {"delete_insert_incremental_predicates.sql": PREDICATE_MODEL}


class TestIncrementalPredicatesMergeWithPackage(TestIncrementalPredicatesMerge):
    spark_cdc_package = True


class TestAppendOnSchemaChange(BaseIncrementalOnSchemaChangeSetup):
    """The append strategy (dbt-spark's incremental default) with on_schema_change ignore and
    fail (dbt-spark's TestAppendOnSchemaChange)."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {"models": {"+incremental_strategy": "append"}}

    def test_run_incremental_ignore(self, project) -> None:
        self.run_twice_and_assert(
            "model_a incremental_ignore incremental_ignore_target",
            "incremental_ignore",
            "incremental_ignore_target",
            project,
        )

    def test_run_incremental_fail_on_schema_change(self, project) -> None:
        select = "model_a incremental_fail"
        run_dbt(["run", "--models", select, "--full-refresh"])
        second = run_dbt(["run", "--models", select], expect_pass=False)
        assert "Compilation Error" in second[1].message


class TestAppendOnSchemaChangeWithPackage(TestAppendOnSchemaChange):
    spark_cdc_package = True
