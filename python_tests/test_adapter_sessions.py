"""A dbt connection's session (the sparkcdc adapter's session and connect methods): its settings
from server_side_parameters, and what it leaves in the engine's shared cache when it closes."""

from __future__ import annotations

import re
import uuid

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.sparkcdc.connect import BoundSessionConnectionWrapper, connection_session


def test_a_bad_server_side_parameter_stops_the_connection_naming_it(spark):
    with pytest.raises(DbtRuntimeError, match=re.escape("spark.sql.shuffle.partitions = 'abc'")):
        connection_session(spark, {"spark.sql.shuffle.partitions": "abc"})


def test_settings_fixed_at_the_engines_start_are_left_and_the_others_applied(spark):
    session = connection_session(
        spark,
        {
            "spark.sql.warehouse.dir": "/elsewhere",  # static: the engine's own
            "spark.executor.memory": "1g",  # core: the engine's own
            "spark.sql.shuffle.partitions": "7",
        },
    )
    assert session.conf.get("spark.sql.shuffle.partitions") == "7"
    assert session.conf.get("spark.sql.warehouse.dir") != "/elsewhere"


def test_closing_a_connection_releases_what_its_session_cached(spark):
    # A snapshot run refused by a guard never reaches the post-hook that drops its cached
    # changes; the cache is the engine's, shared by every session, and outlives the session.
    query = f"select '{uuid.uuid4().hex}' as marker"
    session = connection_session(spark, {})
    session.sql(f"create temporary view refused_run_changes as {query}")
    session.sql("cache table refused_run_changes")
    session.sql(f"create temporary view plain_view as {query} where false")
    assert spark.sql(query).storageLevel.useMemory  # the same plan, seen from another session
    BoundSessionConnectionWrapper(session).close()
    assert not spark.sql(query).storageLevel.useMemory
    assert not spark.catalog.tableExists("refused_run_changes")


def test_a_delta_error_is_reported_with_delta_s_own_message(spark, tmp_path):
    # A MERGE on a key the source lacks: Delta's DELTA_MERGE_UNRESOLVED_EXPRESSION, which PySpark
    # cannot format on Spark 4.2 ([INTERNAL_ERROR] Cannot find main error class).
    table = f"merge_target_{uuid.uuid4().hex[:8]}"
    spark.sql(f"create table {table} (id int, msg string) using delta location '{tmp_path}'")
    wrapper = BoundSessionConnectionWrapper(connection_session(spark, {}))
    wrapper.cursor()
    merge = (
        f"merge into {table} as t using (select 1 as id, 'x' as msg) as s "
        "on s.thisisnotacolumn = t.id when matched then update set * "
        "when not matched then insert *"
    )
    try:
        with pytest.raises(DbtRuntimeError) as refused:
            wrapper.execute(merge)
    finally:
        spark.sql(f"drop table {table}")
    message = str(refused.value)
    assert "thisisnotacolumn" in message
    assert "INTERNAL_ERROR" not in message
