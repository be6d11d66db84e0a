"""The rewrite of dbt's Postgres-dialect fixture SQL into Spark SQL statements."""

from __future__ import annotations

from spark_dialect import spark_project_file, spark_statements


def test_names_casts_and_types_become_spark_s() -> None:
    (statement,) = spark_statements(
        "create table {database}.{schema}.seed (id INTEGER, note TEXT, "
        "at TIMESTAMP WITHOUT TIME ZONE);"
    )
    assert statement == "create table {schema}.seed (id INTEGER, note STRING, at TIMESTAMP)"
    (select,) = spark_statements("select null::timestamp as t, md5(id::text) from {schema}.s")
    assert select == "select cast(null as timestamp) as t, md5(cast(id as string)) from {schema}.s"


def test_several_statements_run_one_at_a_time_and_comments_alone_are_dropped() -> None:
    sql = (
        "-- first\nupdate {schema}.a set x = 1;\n\n"
        "-- only a comment;\nupdate {schema}.b set y = 2;\n"
    )
    assert spark_statements(sql) == [
        "-- first\nupdate {schema}.a set x = 1",
        "update {schema}.b set y = 2",
    ]


def test_a_column_added_with_a_default_is_added_then_set() -> None:
    sql = "alter table {schema}.t add column c VARCHAR(50) default 'v';"
    assert spark_statements(sql) == [
        "alter table {schema}.t add column c VARCHAR(50)",
        "update {schema}.t set c = 'v'",
    ]


def test_project_files_name_one_namespace() -> None:
    text = "select * from {{ target.database }}.{{target.schema}}.seed"
    assert spark_project_file(text) == "select * from {{target.schema}}.seed"
