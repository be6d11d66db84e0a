"""The incremental merge's configs rendered as SQL without a warehouse
(macros/incremental/merge.sql): the target floor a model hands to its MERGE, and the replacement
of an increment's batches."""

from __future__ import annotations

from types import SimpleNamespace

from macro_render import Macros

MERGE = "incremental/merge.sql"
COLUMNS = [SimpleNamespace(quoted=f"`{name}`") for name in ("_batch_id", "reason")]


def _table(*values: object) -> SimpleNamespace:
    """What run_query returns: one row, one column per value."""
    return SimpleNamespace(columns=[SimpleNamespace(values=lambda v=v: [v]) for v in values])


def _macros(
    config: dict, setting: str | None = None, lowest: object = None, language: str = "python"
) -> Macros:
    queries: list[str] = []

    def run_query(sql: str) -> SimpleNamespace:
        queries.append(sql)
        if sql.startswith("set "):
            return _table(sql[4:], "<undefined>" if setting is None else setting)
        return _table(lowest)

    macros = Macros(
        MERGE,
        config=config,
        extra={
            "execute": True,
            "run_query": run_query,
            "adapter": SimpleNamespace(get_columns_in_relation=lambda relation: COLUMNS),
            "get_merge_update_columns": lambda *args: [],
            "sql_header": None,
            "model": SimpleNamespace(name="history", language=language),
        },
    )
    macros.queries = queries
    return macros


def _merge(macros: Macros, unique_key: object = ("id", "version_id")) -> str:
    return " ".join(
        macros.spark__get_merge_sql(
            "db.history", "history__dbt_tmp", list(unique_key), [], None
        ).split()
    )


def test_a_target_floor_set_by_the_model_bounds_the_target_rows_the_merge_reads():
    sql = _merge(_macros({"merge_target_floor": "valid_to"}, setting="2026-01-01 00:00:30"))
    on = sql.split(" on ", 1)[1].split(" when ", 1)[0]
    assert on == (
        "DBT_INTERNAL_SOURCE.id = DBT_INTERNAL_DEST.id and DBT_INTERNAL_SOURCE.version_id = "
        "DBT_INTERNAL_DEST.version_id and DBT_INTERNAL_DEST.valid_to >= '2026-01-01 00:00:30'"
    )


def test_without_the_setting_or_the_config_the_merge_reads_every_target_row():
    for macros in (_macros({"merge_target_floor": "valid_to"}), _macros({}, setting="2026-01-01")):
        on = _merge(macros).split(" on ", 1)[1].split(" when ", 1)[0]
        assert "valid_to" not in on
    assert _macros({}, setting="x").queries == []  # the setting is only read when configured


def test_an_increment_replaces_its_own_batches_and_those_after():
    sql = _merge(_macros({"merge_replace_from": "_batch_id"}, lowest="7"), unique_key=())
    assert sql == (
        "insert into db.history replace where _batch_id >= '7' "
        "select `_batch_id`, `reason` from history__dbt_tmp"
    )


def test_an_empty_increment_writes_nothing():
    sql = _merge(_macros({"merge_replace_from": "_batch_id"}, lowest=None), unique_key=())
    assert sql == "select 1 as nothing_to_write"


def test_a_null_delete_flag_counts_as_false(spark):
    """merge_delete_column run on Delta: a flagged row is deleted (matched) or left out
    (unmatched); a NULL flag is no flag: its row is updated or inserted, never lost."""
    columns = [SimpleNamespace(name=n, quoted=f"`{n}`") for n in ("id", "v")]
    macros = Macros(
        MERGE,
        config={"merge_delete_column": "_is_deleted"},
        extra={
            "execute": True,
            "run_query": lambda sql: _table(None),
            "adapter": SimpleNamespace(get_columns_in_relation=lambda relation: columns),
            "get_merge_update_columns": lambda *args: [],
            "sql_header": None,
        },
    )
    spark.sql("drop table if exists default.merge_flags")
    spark.sql("create table default.merge_flags (id int, v string) using delta")
    spark.sql("insert into default.merge_flags values (1, 'old'), (4, 'old'), (5, 'old')")
    spark.createDataFrame(
        [(1, "new", None), (2, "new", None), (3, "new", True), (4, "new", True), (5, "new", False)],
        "id int, v string, _is_deleted boolean",
    ).createOrReplaceTempView("merge_flags__dbt_tmp")
    sql = macros.spark__get_merge_sql(
        "default.merge_flags", "merge_flags__dbt_tmp", ["id"], [], None
    )
    spark.sql(sql)
    rows = {(r.id, r.v) for r in spark.table("default.merge_flags").collect()}
    assert rows == {(1, "new"), (2, "new"), (5, "new")}


def test_a_sql_model_s_merge_may_run_again_after_a_write_conflict_a_python_model_s_not():
    """A SQL model's MERGE reads its view, computed anew by each run of the statement; a Python
    model's source may hold rows cached before the other commit."""
    marker = "/* spark_cdc: retry on a write conflict */ merge into db.history"
    assert marker in _merge(_macros({}, language="sql"))
    assert "retry on a write conflict" not in _merge(_macros({}, language="python"))


def _schema_changes(config: dict, added: list[str]) -> dict:
    """spark__check_for_schema_changes over dbt's own check, which found ``added`` in the
    source only."""
    column = lambda name: SimpleNamespace(name=name)  # noqa: E731
    found = {
        "schema_changed": bool(added),
        "source_not_in_target": [column(name) for name in added],
        "target_not_in_source": [],
        "source_columns": [column(name) for name in ("id", *added)],
        "target_columns": [column("id")],
        "new_target_types": [],
    }
    dbt = SimpleNamespace(default__check_for_schema_changes=lambda source, target: dict(found))
    macros = Macros("incremental/schema_changes.sql", config=config, extra={"dbt": dbt})
    return macros.spark__check_for_schema_changes("history__dbt_tmp", "db.history")


def test_the_merge_delete_flag_is_no_schema_change():
    changes = _schema_changes({"merge_delete_column": "_is_deleted"}, ["_IS_DELETED"])
    assert changes["schema_changed"] is False
    assert changes["source_not_in_target"] == []
    assert [c.name for c in changes["source_columns"]] == ["id"]


def test_a_new_column_beside_the_delete_flag_is_still_added():
    changes = _schema_changes({"merge_delete_column": "_is_deleted"}, ["_is_deleted", "changed_at"])
    assert changes["schema_changed"] is True
    assert [c.name for c in changes["source_not_in_target"]] == ["changed_at"]


def test_without_a_delete_flag_dbt_s_check_stands():
    changes = _schema_changes({}, ["_is_deleted"])
    assert changes["schema_changed"] is True
    assert [c.name for c in changes["source_not_in_target"]] == ["_is_deleted"]
