"""The snapshot overrides' metadata macros rendered as SQL, without dbt or Spark: the high end
date's validation (every value a user may pass), its SQL value, the open-row condition and the
metadata column names. A dbt run that stops on a bad value before writing anything is shown
once per entry point in test_snapshot_guards.py and test_bad_input_matrix.py."""

from __future__ import annotations

import datetime as dt
import json
from types import SimpleNamespace

import pytest
from macro_render import CompilationError, Macros

METADATA = "snapshots/snapshot_metadata.sql"
DELETED_FLAG = "snapshots/snapshot_deleted_flag.sql"
HINT = "var default_high_dttm must be a zone-less timestamp 'YYYY-MM-DD HH:MM:SS'"


def _high_end_text(value: object) -> str:
    variables = {} if value is None else {"default_high_dttm": value}
    return Macros(METADATA, variables=variables).snapshot_high_end_text()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "9999-12-31 23:59:59"),
        ("9999-12-31 23:59:59", "9999-12-31 23:59:59"),
        ("  9999-12-31 23:59:59.999999 ", "9999-12-31 23:59:59.999999"),
        ("9999-12-31", "9999-12-31"),
        ("2999-01-01T00:00:00", "2999-01-01 00:00:00"),
        ("2024-02-29 12:00:00", "2024-02-29 12:00:00"),
        ("2000-02-29", "2000-02-29"),
        # an unquoted --vars value that YAML reads as a datetime or a date: its text
        (dt.datetime(9999, 12, 31, 23, 59, 59), "9999-12-31 23:59:59"),
        (dt.date(9999, 12, 31), "9999-12-31"),
    ],
)
def test_a_valid_high_end_date_is_taken_as_zone_less_text(value, text):
    assert _high_end_text(value) == text


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("not-a-date", "got 'not-a-date'"),
        ("", "got ''"),
        ("2020-02-30 00:00:00", "(no such date)"),
        ("2023-02-29", "(no such date)"),
        ("1900-02-29", "(no such date)"),
        ("2020-13-01", "(no such date)"),
        ("0000-01-01", "(no such date)"),
        ("2020-01-01 24:00:00", "(no such time)"),
        ("2020-01-01 23:60:00", "(no such time)"),
        ("2020-01-01 23:59:60", "(no such time)"),
        ("9999-12-31T23:59:59Z", "got '9999-12-31T23:59:59Z'"),
        ("9999-12-31 23:59:59+02:00", "got '9999-12-31 23:59:59+02:00'"),
        ("10000-01-01 00:00:00", "got '10000-01-01 00:00:00'"),
        ("9999-12-31 23:59:59.1234567", "got '9999-12-31 23:59:59.1234567'"),
        ("9999-12-31 23:59", "got '9999-12-31 23:59'"),
    ],
)
def test_a_bad_high_end_date_is_a_compilation_error_naming_it(value, detail):
    with pytest.raises(CompilationError) as raised:
        _high_end_text(value)
    assert HINT in str(raised.value) and detail in str(raised.value)


def test_the_run_start_check_renders_nothing_or_stops_the_run():
    assert Macros(METADATA).validate_snapshot_vars() == ""
    with pytest.raises(CompilationError, match="no such date"):
        Macros(METADATA, variables={"default_high_dttm": "2021-02-29"}).validate_snapshot_vars()


@pytest.mark.parametrize(
    ("data_type", "sql"),
    [
        ("timestamp", "cast('9999-12-31 23:59:59' as timestamp)"),
        ("timestamp_ntz", "cast('9999-12-31 23:59:59' as timestamp_ntz)"),
        ("date", "cast('9999-12-31 23:59:59' as date)"),
        (None, "cast('9999-12-31 23:59:59' as timestamp)"),
    ],
)
def test_the_high_end_value_is_cast_to_the_type_of_valid_from(data_type, sql):
    assert Macros(METADATA).snapshot_high_end_value(data_type) == sql


@pytest.mark.parametrize(
    ("config", "alias", "sql"),
    [
        ({}, "snapshotted_data", "snapshotted_data.dbt_valid_to is null"),
        ({}, "", "dbt_valid_to is null"),
        (
            {"dbt_valid_to_current": "to_timestamp('9999-12-31')"},
            "t",
            "(t.dbt_valid_to = to_timestamp('9999-12-31') or t.dbt_valid_to is null)",
        ),
    ],
)
def test_an_open_row_is_one_without_an_end_or_with_the_current_marker(config, alias, sql):
    columns = {"dbt_valid_to": "dbt_valid_to"}
    assert Macros(METADATA, config=config).snapshot_row_is_open(alias, columns) == sql


def test_metadata_column_names_default_and_renamed():
    defaults = Macros(METADATA).snapshot_metadata_column_names()
    assert defaults == {
        "insert_process_id": "dbt_insert_process_id",
        "inserted_at": "dbt_inserted_at",
        "close_process_id": "dbt_close_process_id",
        "closed_at": "dbt_closed_at",
        "valid_to_high": "dbt_valid_to_high",
    }
    renamed = Macros(
        METADATA, variables={"snapshot_metadata_column_names": {"inserted_at": "loaded_at"}}
    ).snapshot_metadata_column_names()
    assert renamed == {**defaults, "inserted_at": "loaded_at"}


def test_the_process_id_is_the_invocation_id_as_a_literal():
    macros = Macros(METADATA, invocation_id="5f0c-42")
    assert macros.snapshot_process_id() == "'5f0c-42'"


@pytest.mark.parametrize(
    ("columns", "name", "found"),
    [
        ([("ID", "bigint"), ("updated_at", "timestamp")], "updated_at", "timestamp"),
        ([("ID", "bigint")], "id", "bigint"),
        ([("ID", "bigint")], "missing", None),
    ],
)
def test_a_column_type_is_found_by_name_whatever_its_case(columns, name, found):
    relation_columns = [_Column(column, dtype) for column, dtype in columns]
    assert Macros(METADATA).snapshot_column_type(relation_columns, name) == found


class _Column:
    def __init__(self, name: str, dtype: str) -> None:
        self.name, self.dtype = name, dtype


class _Relation:
    """A relation as the merge macro reads it: its name and whether it is Iceberg."""

    is_iceberg = False

    def __init__(self, name: str) -> None:
        self.identifier = name.split(".")[-1]
        self._name = name

    def __str__(self) -> str:
        return self._name


def test_the_merge_matches_open_rows_only_so_files_of_closed_rows_are_skipped():
    columns = {name: name for name in ("dbt_scd_id", "dbt_valid_to")}
    macros = Macros(
        "snapshots/snapshot_flow.sql",
        "snapshots/snapshot_merge.sql",
        "snapshots/snapshot_cached_changes.sql",
        METADATA,
        config={"snapshot_table_column_names": columns},
    )
    sql = " ".join(
        macros.spark__snapshot_merge_sql(
            _Relation("s.snap"), _Relation("s.snap__dbt_tmp"), ["`id`", "`dbt_scd_id`"]
        ).split()
    )
    on_clause = sql[sql.index(" on ") : sql.index(" when matched")]
    assert on_clause == (
        " on DBT_INTERNAL_SOURCE.dbt_scd_id = DBT_INTERNAL_DEST.dbt_scd_id"
        " and DBT_INTERNAL_DEST.dbt_valid_to is null"
    )
    assert "using s.snap__dbt_tmp as DBT_INTERNAL_SOURCE" in sql
    assert "insert (`id`, `dbt_scd_id`) values ( DBT_INTERNAL_SOURCE.`id`," in sql


TARGET = ("id", "Name", "email", "dbt_scd_id", "dbt_valid_from", "dbt_valid_to", "dbt_is_deleted")


@pytest.mark.parametrize(
    ("config", "hard_deletes", "read"),
    [
        # the start (the timestamp strategy's comparison, the floor) and the open row's id
        ({"strategy": "timestamp"}, "invalidate", ["dbt_scd_id", "dbt_valid_from"]),
        # a deletion row copies the source's columns (in the table's own spelling) and ends
        # where the open row ended
        (
            {"strategy": "timestamp"},
            "new_record",
            ["id", "Name", "dbt_scd_id", "dbt_valid_from", "dbt_valid_to", "dbt_is_deleted"],
        ),
        # check: the check columns as configured, quoted or not, any case
        (
            {"strategy": "check", "check_cols": ["`EMAIL`"]},
            "ignore",
            ["email", "dbt_scd_id", "dbt_valid_from"],
        ),
        (
            {"strategy": "check", "check_cols": "email"},
            "ignore",
            ["email", "dbt_scd_id", "dbt_valid_from"],
        ),
        # check_cols: all compares every column of the query (a new one is not in the table)
        (
            {"strategy": "check", "check_cols": "all"},
            "invalidate",
            ["id", "Name", "dbt_scd_id", "dbt_valid_from"],
        ),
        # a strategy of the user's own: its comparison is unknown, so every column
        ({"strategy": "my_strategy"}, "invalidate", list(TARGET)),
    ],
)
def test_stage_one_carries_only_the_open_row_columns_the_change_rows_read(
    config, hard_deletes, read
):
    # Declared by what each branch of snapshot_change_plan uses, never parsed out of its SQL.
    macros = Macros("snapshots/snapshot_staging_table.sql", config=config)
    target = [_Column(name, "string") for name in TARGET]
    columns = {name: name for name in TARGET if name.startswith("dbt_")}
    strategy = {"hard_deletes": hard_deletes}
    source_names = ["ID", "name", "new_column"]
    assert macros.snapshot_open_row_columns(strategy, target, source_names, columns) == read


@pytest.mark.parametrize(
    ("before", "after", "widens"),
    [
        ("int", "bigint", True),
        ("tinyint", "smallint", True),
        ("smallint", "bigint", True),
        ("bigint", "int", False),
        ("int", "int", False),
        ("int", "double", True),
        ("float", "double", True),
        ("bigint", "double", False),
        ("double", "float", False),
        ("decimal(10,2)", "decimal(12,2)", True),
        ("decimal(10,2)", "decimal(12,4)", True),
        ("decimal(10,2)", "decimal(11,3)", True),
        ("decimal(10,2)", "decimal(11,4)", False),
        ("decimal(10,2)", "decimal(10,1)", False),
        ("int", "string", False),
        ("string", "int", False),
        ("date", "timestamp", False),
    ],
)
def test_which_type_changes_widen_a_snapshot_column(before, after, widens):
    # Delta's type widening of the snapshot table, for a column whose type the source changed.
    macros = Macros("snapshots/snapshot_merge.sql")
    assert macros.snapshot_type_widens(before, after) is widens


KEYS = "snapshots/snapshot_keys.sql"


def _flat(sql: str) -> str:
    return " ".join(sql.split())


CACHED = "snapshots/snapshot_cached_changes.sql"


def test_the_unchanged_digest_hashes_the_same_pairs_on_both_sides_and_compares_every_sum():
    columns = {
        "dbt_valid_to": "valid_to",
        "dbt_updated_at": "source_updated_at",
        "dbt_is_deleted": "is_gone",
    }
    macros = Macros(
        CACHED,
        METADATA,
        KEYS,
        DELETED_FLAG,
        config={"snapshot_table_column_names": columns, "dbt_valid_to_current": "'9999-12-31'"},
    )
    strategy = {"unique_key": ["region", "id"], "hard_deletes": "new_record", "updated_at": "u"}
    sql = _flat(macros.snapshot_unchanged_sql(strategy, "SOURCE SQL", "s.snap"))
    # the source's rows hashed as they come (no shuffle), the open rows' the same way
    assert (
        "select xxhash64(region, id, u) as hash_1, xxhash64('spark_cdc', region, id, u) as hash_2"
        " from (SOURCE SQL) as snapshot_query" in sql
    )
    assert (
        "select xxhash64(region, id, source_updated_at) as hash_1,"
        " xxhash64('spark_cdc', region, id, source_updated_at) as hash_2 from s.snap" in sql
    )
    # open rows only (the current marker too), open deletion rows of new_record left out (the
    # flag dbt's 'True' or an earlier table's boolean)
    assert (
        "where (valid_to = '9999-12-31' or valid_to is null)"
        " and not coalesce(lower(cast(is_gone as string)) = 'true', false)" in sql
    )
    comparison = sql[sql.index("coalesce( source_side") : sql.index(", false ) as unchanged")]
    assert "source_side.source_rows > 0 and source_side.source_rows = open_side.open_rows" in (
        comparison
    )
    for part in ("1_low", "1_high", "2_low", "2_high"):
        assert f"source_side.digest_{part} = open_side.digest_{part}" in comparison


def test_without_new_record_every_open_row_is_digested():
    columns = {"dbt_valid_to": "v_to", "dbt_updated_at": "dbt_updated_at"}
    macros = Macros(CACHED, METADATA, KEYS, config={"snapshot_table_column_names": columns})
    strategy = {"unique_key": "id", "hard_deletes": "invalidate", "updated_at": "updated_at"}
    sql = _flat(macros.snapshot_unchanged_sql(strategy, "S", "s.snap"))
    assert "from s.snap where v_to is null )" in sql
    assert "is_deleted" not in sql


def test_the_hash_sums_split_each_hash_into_halves_that_cannot_overflow():
    sums = _flat(Macros(CACHED).snapshot_hash_sums())
    assert sums == (
        "try_sum(hash_1 & 4294967295) as digest_1_low,"
        " try_sum(shiftright(hash_1, 32)) as digest_1_high,"
        " try_sum(hash_2 & 4294967295) as digest_2_low,"
        " try_sum(shiftright(hash_2, 32)) as digest_2_high"
    )


@pytest.mark.parametrize(
    ("config", "compares"),
    [
        ({"strategy": "timestamp"}, True),
        ({"strategy": "check"}, False),
        ({"strategy": "timestamp", "snapshot_compare_digests": False}, False),
        ({"strategy": "timestamp", "snapshot_compare_digests": "false"}, False),
    ],
)
def test_only_the_timestamp_strategy_compares_digests_unless_turned_off(config, compares):
    assert Macros(CACHED, config=config).snapshot_compares_digests() is compares


def test_the_first_run_checks_its_keys_in_the_scd_id_expression():
    macros = Macros(KEYS, config={}, model_name="o'brien")
    strategy = {"unique_key": ["region", "id"], "scd_id": "md5(x)"}
    sql = _flat(macros.snapshot_checked_scd_id(strategy))
    window = "count(*) over (partition by region, id)"
    assert sql.startswith(f"case when ({window} > 1 or (region is null or id is null)) then")
    assert sql.endswith("else md5(x) end")
    # the message names the snapshot (quote escaped) and the offending key's values and rows
    assert "'Snapshot o\\'brien: the source returns '" in sql
    any_null = "(region is null or id is null)"
    assert f"case when {any_null} then 'NULL or duplicate' else 'duplicate'" in sql
    assert (
        "'region=', coalesce(cast(region as string), 'NULL'), ', ', "
        "'id=', coalesce(cast(id as string), 'NULL'), ') x', "
        f"cast({window} as string)"
    ) in sql


def test_the_first_run_key_check_can_be_turned_off():
    macros = Macros(KEYS, config={"snapshot_check_unique_keys": False})
    assert macros.snapshot_checked_scd_id({"unique_key": "id", "scd_id": "md5(x)"}) == "md5(x)"


def test_the_key_check_names_the_key_as_written_and_reads_it_where_the_check_runs():
    macros = Macros(KEYS, config={}, model_name="snap")
    check = macros.snapshot_key_check(
        ["region", "id"], ["source_data.k_1", "source_data.k_2"], "source_data.rows"
    )
    assert check["fails"] == (
        "(source_data.rows > 1 or (source_data.k_1 is null or source_data.k_2 is null))"
    )
    error = _flat(check["error"])
    assert error.startswith("raise_error(concat( 'Snapshot snap: the source returns ',")
    assert (
        "'region=', coalesce(cast(source_data.k_1 as string), 'NULL'), ', ', "
        "'id=', coalesce(cast(source_data.k_2 as string), 'NULL'), ') x', "
        "cast(source_data.rows as string)"
    ) in error


MAINTENANCE = "snapshots/snapshot_maintenance.sql"
MERGE = "snapshots/snapshot_merge.sql"


@pytest.mark.parametrize(
    ("config", "settings"),
    [
        ({}, {"every": 10, "purge": False, "retain_hours": None, "short_retention": False}),
        (
            {"snapshot_optimize_every": 0},
            {"every": 0, "purge": False, "retain_hours": None, "short_retention": False},
        ),
        (
            {"snapshot_optimize_every": None},
            {"every": 0, "purge": False, "retain_hours": None, "short_retention": False},
        ),
        (
            {"snapshot_optimize_every": False},
            {"every": 0, "purge": False, "retain_hours": None, "short_retention": False},
        ),
        (
            {"snapshot_vacuum_retain_hours": 0, "snapshot_vacuum_allow_short_retention": True},
            {"every": 10, "purge": False, "retain_hours": 0, "short_retention": True},
        ),
        (
            {
                "snapshot_optimize_every": "7",
                "snapshot_purge_deletion_vectors": "true",
                "snapshot_vacuum_retain_hours": 336,
            },
            {"every": 7, "purge": True, "retain_hours": 336, "short_retention": False},
        ),
    ],
)
def test_the_maintenance_settings_are_read_with_their_defaults(config, settings):
    assert Macros(MAINTENANCE, MERGE, config=config).snapshot_maintenance_settings() == settings


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"snapshot_optimize_every": "weekly"}, "snapshot_optimize_every must be a whole number"),
        ({"snapshot_optimize_every": -1}, "snapshot_optimize_every must be a whole number"),
        ({"snapshot_optimize_every": True}, "not True"),
        ({"snapshot_vacuum_retain_hours": "7d"}, "snapshot_vacuum_retain_hours must be a whole"),
        ({"snapshot_vacuum_retain_hours": 0}, "fewer than 168 hours .the table.s delta"),
        (
            {"snapshot_vacuum_retain_hours": 167, "snapshot_vacuum_allow_short_retention": False},
            "set snapshot_vacuum_allow_short_retention: true",
        ),
    ],
)
def test_a_maintenance_setting_that_is_not_a_count_stops_the_run(config, message):
    with pytest.raises(CompilationError, match=message):
        Macros(MAINTENANCE, MERGE, config=config).snapshot_maintenance_settings()


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("interval 1 week", 168),
        ("interval 30 days", 720),
        ("INTERVAL 2 DAYS 12 HOURS", 60),
        ("interval 90 minutes", 1.5),
        ("Table s.snap does not have property: delta.deletedFileRetentionDuration", None),
        (None, None),
    ],
)
def test_delta_intervals_are_read_as_hours(text, hours):
    assert Macros(MAINTENANCE, MERGE).delta_interval_hours(text) == hours


class _Rows:
    def __init__(self, value: str) -> None:
        self.rows = [("delta.deletedFileRetentionDuration", value)]


def _on_table(retention: str) -> dict:
    """A context whose snapshot table has ``retention`` as its property."""
    return {
        "execute": True,
        "load_relation": lambda r: r,
        "run_query": lambda sql: _Rows(retention),
    }


@pytest.mark.parametrize(
    ("retention", "retain", "refused"),
    [
        ("interval 4 weeks", 336, "fewer than 672 hours"),  # the table keeps files longer
        ("interval 4 weeks", 672, None),
        ("interval 2 days", 48, None),  # the table's own floor is lower than Delta's default
        ("interval 2 days", 47, "fewer than 48 hours"),
    ],
)
def test_the_vacuum_floor_is_the_tables_retention(retention, retain, refused):
    config = {"snapshot_vacuum_retain_hours": retain}
    macros = Macros(MAINTENANCE, MERGE, config=config, extra=_on_table(retention))
    if refused:
        with pytest.raises(CompilationError, match=refused):
            macros.snapshot_maintenance_settings("s.snap")
    else:
        settings = macros.snapshot_maintenance_settings("s.snap")
        assert settings["retain_hours"] == retain and settings["short_retention"] is False


def test_before_the_table_exists_the_floor_is_the_configured_retention():
    config = {
        "snapshot_vacuum_retain_hours": 336,
        "tblproperties": {"delta.deletedFileRetentionDuration": "interval 30 days"},
    }
    with pytest.raises(CompilationError, match="fewer than 720 hours"):
        Macros(MAINTENANCE, MERGE, config=config).snapshot_maintenance_settings()


def test_maintenance_that_is_off_reads_no_history():
    # no run_query in this context: reading the history would fail
    macros = Macros(MAINTENANCE, MERGE, config={"snapshot_optimize_every": 0})
    settings = macros.snapshot_maintenance_settings()
    assert macros.snapshot_maintain("s.snap", settings) is False


@pytest.mark.parametrize(
    ("config", "megabytes"),
    [
        ({}, 32),
        ({"snapshot_deletion_vectors_min_mb": 0}, 0),
        ({"snapshot_deletion_vectors_min_mb": "8.5"}, 8.5),
    ],
)
def test_the_deletion_vector_size_is_read_with_its_default(config, megabytes):
    assert Macros(MERGE, config=config).snapshot_deletion_vectors_min_mb() == megabytes


@pytest.mark.parametrize("value", ["large", -1, True, None])
def test_a_deletion_vector_size_that_is_not_a_size_stops_the_run_before_it_writes(value):
    config = {"snapshot_deletion_vectors_min_mb": value}
    with pytest.raises(CompilationError, match="snapshot_deletion_vectors_min_mb must be a number"):
        Macros(MAINTENANCE, MERGE, config=config).snapshot_maintenance_settings()


def _deletion_vector_statements(config: dict, size: int, enabled: str | None) -> list[str]:
    """What snapshot_ensure_deletion_vectors runs on a table of ``size`` bytes whose property
    delta.enableDeletionVectors is ``enabled`` (None: not set): the queries, then the
    statements."""
    ran: list[str] = []

    def run_query(sql: str) -> SimpleNamespace:
        ran.append(sql)
        if sql.startswith("show tblproperties"):
            # Spark's answer for a property the table does not have is a sentence
            value = enabled if enabled is not None else "Table s.snap does not have property"
            return SimpleNamespace(rows=[("delta.enableDeletionVectors", value)])
        return SimpleNamespace(rows=[{"sizeInBytes": size}])

    def statement(name: str, caller) -> str:
        ran.append(" ".join(caller().split()))
        return ""

    extra = {"run_query": run_query, "statement": statement, "fromjson": json.loads}
    Macros(MERGE, config=config, extra=extra).snapshot_ensure_deletion_vectors("s.snap")
    return ran


ENABLE = "alter table s.snap set tblproperties ('delta.enableDeletionVectors' = 'true')"
SHOW = "show tblproperties s.snap ('delta.enableDeletionVectors')"
DETAIL = "describe detail s.snap"


@pytest.mark.parametrize(
    ("config", "size", "enabled", "expected"),
    [
        ({}, 32 * 2**20 - 1, None, [SHOW, DETAIL]),  # under the default size: files rewritten
        ({}, 32 * 2**20, None, [SHOW, DETAIL, ENABLE]),
        ({"snapshot_deletion_vectors_min_mb": 0}, 0, None, [SHOW, DETAIL, ENABLE]),
        ({"snapshot_deletion_vectors_min_mb": 1}, 2**20, None, [SHOW, DETAIL, ENABLE]),
        ({}, 2**30, "true", [SHOW]),  # has them already: no size needed
        ({}, 0, "TRUE", [SHOW]),
        ({}, 2**30, "false", [SHOW, DETAIL, ENABLE]),
    ],
)
def test_deletion_vectors_are_turned_on_once_a_table_is_large_enough(
    config, size, enabled, expected
):
    assert _deletion_vector_statements(config, size, enabled) == expected


def test_a_snapshot_without_deletion_vectors_reads_no_table_detail():
    assert _deletion_vector_statements({"snapshot_deletion_vectors": False}, 2**30, None) == []


@pytest.mark.parametrize(
    ("stored", "written"),
    [
        (None, ("'True'", "'False'")),  # a table being built: dbt's strings
        ("string", ("'True'", "'False'")),  # built by stock dbt or by this package
        ("boolean", ("true", "false")),  # built by an earlier spark_cdc: keeps its type
    ],
)
def test_dbt_is_deleted_is_written_in_the_tables_own_type(stored, written):
    columns = {"dbt_is_deleted": "is_gone"}
    macros = Macros(DELETED_FLAG, METADATA, config={"snapshot_table_column_names": columns})
    target = [_Column("id", "int")] + ([_Column("IS_GONE", stored)] if stored else [])
    flags = (
        macros.snapshot_deleted_flag(True, target),
        macros.snapshot_deleted_flag(False, target),
    )
    assert flags == written


class _PartsRelation(SimpleNamespace):
    def __str__(self) -> str:
        return f"{self.schema}.{self.identifier}" if self.schema else self.identifier


def _relation_api() -> SimpleNamespace:
    return SimpleNamespace(Relation=SimpleNamespace(create=lambda **parts: _PartsRelation(**parts)))


@pytest.mark.parametrize("adapter_type", ["sparkcdc", "spark"])
def test_the_cached_changes_are_global_views_named_after_the_process_on_an_engine(adapter_type):
    """On a Spark Connect engine of the sparkcdc adapter the cached relations are global
    temporary views under the name the adapter gives (the dbt process's, which the engine's next
    client drops once that process is gone); elsewhere, temporary views of the session."""
    asked = []

    def shared_cache_view(key: str) -> str:
        asked.append(key)
        return "spark_cdc_cache_0a1b2c3d_41_1700000000_5e6f"

    adapter = SimpleNamespace(type=lambda: adapter_type, shared_cache_view=shared_cache_view)
    macros = Macros(
        CACHED,
        invocation_id="3f2a9c1e-0000-4000-8000-000000000000",
        extra={"adapter": adapter, "api": _relation_api()},
    )
    target = _PartsRelation(schema="s", identifier="snap")
    relation = macros.snapshot_cached_changes_relation(target, "keys")
    statement = macros.snapshot_cached_view_statement(relation)
    if adapter_type == "sparkcdc":
        assert str(relation) == "global_temp.spark_cdc_cache_0a1b2c3d_41_1700000000_5e6f"
        assert asked == ["s.snap/snap__dbt_keys_3f2a9c1e00004000"]
        assert statement == (
            "create or replace global temporary view spark_cdc_cache_0a1b2c3d_41_1700000000_5e6f as"
        )
    else:
        assert str(relation) == "snap__dbt_keys_3f2a9c1e00004000" and not asked
        assert statement == "create or replace temporary view snap__dbt_keys_3f2a9c1e00004000 as"
