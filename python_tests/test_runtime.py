"""The embedded runtime: Delta Lake, Hive metastore, UTC, lean settings."""

from __future__ import annotations

import datetime as dt

import pytest


def test_session_settings_are_lean_and_utc(spark):
    conf = spark.conf
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert conf.get("spark.sql.shuffle.partitions") == "2"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.sql.catalogImplementation") == "hive"
    jvm_zone = spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID()
    assert jvm_zone == "UTC"


def test_timestamps_are_zone_less_utc(spark):
    row = spark.sql("select timestamp'9999-12-31 23:59:59' as high").collect()[0]
    assert row.high == dt.datetime(9999, 12, 31, 23, 59, 59)


def test_a_failed_query_is_raised_once_and_not_also_logged_by_pyspark(spark, capfd):
    """PySpark's query-context loggers would print each error as a JSON line with the whole
    JVM stack trace before the caller (dbt) reports it; the exception alone carries it."""
    from pyspark.errors import AnalysisException

    capfd.readouterr()
    with pytest.raises(AnalysisException) as missing_table:
        spark.sql("select * from runtime_check.no_such_table").collect()
    with pytest.raises(AnalysisException) as missing_column:
        spark.range(1).select("no_such_column").collect()
    assert "TABLE_OR_VIEW_NOT_FOUND" in str(missing_table.value)
    assert "no_such_column" in str(missing_column.value)
    printed = capfd.readouterr().err
    assert "QueryContextLogger" not in printed
    assert "TABLE_OR_VIEW_NOT_FOUND" not in printed and "no_such_column" not in printed
