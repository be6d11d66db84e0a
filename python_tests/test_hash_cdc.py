"""Hash CDC library: hashing, staging with quarantine, and compare vs the plain-Python model."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import Row
from pyspark.sql import functions as F

from spark_cdc.hash_cdc.compare import apply_extract, current_columns
from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig
from spark_cdc.hash_cdc.extracts import (
    OutOfOrderDateError,
    applied_dates,
    check_date_order,
    commit_metadata,
)
from spark_cdc.hash_cdc.hashing import row_hash
from spark_cdc.hash_cdc.reference import ReferenceRow, reference_apply
from spark_cdc.hash_cdc.stage import REASON, stage_extract

CONFIG = DatasetConfig.from_mapping(
    "people",
    {
        "key_columns": {"region": "string", "id": "int"},
        "nonkey_columns": {"name": "string", "balance": "decimal(10,2)", "joined": "date"},
        "sensitive_columns": {"ssn": "string"},
        "excluded_columns": {"loaded_at": "timestamp"},
    },
)
COLUMNS = ["region", "id", "name", "balance", "joined", "ssn", "loaded_at"]


def _raw(spark, rows: list[tuple], columns: list[str] = COLUMNS):
    schema = ", ".join(f"{c} string" for c in columns)
    return spark.createDataFrame(rows, schema)


def _staged(spark, rows, columns=COLUMNS, config=CONFIG):
    return {
        (r["region"], r["id"], r["name"]): r.asDict()
        for r in stage_extract(_raw(spark, rows, columns), config, "2026-01-01").collect()
    }


def test_null_and_empty_string_hash_differently(spark):
    frame = spark.createDataFrame([("a", None), ("a", "")], "x string, y string")
    hashes = [r.h for r in frame.select(row_hash(["x", "y"]).alias("h")).collect()]
    assert hashes[0] != hashes[1]


def test_hash_does_not_depend_on_column_order(spark):
    frame = spark.createDataFrame([("a", "b")], "x string, y string")
    reordered = frame.select("y", "x")
    first = frame.select(row_hash(["x", "y"]).alias("h")).first().h
    assert first == reordered.select(row_hash(["y", "x"]).alias("h")).first().h


def test_hash_separators_cannot_be_imitated(spark):
    frame = spark.createDataFrame([("a|y=1:b", "c"), ("a", "b|y=1:c")], "x string, y string")
    hashes = {r.h for r in frame.select(row_hash(["x", "y"]).alias("h")).collect()}
    assert len(hashes) == 2


def test_casting_is_type_stable_and_hashes_typed_values(spark):
    rows = [
        ("EU", "007", "Ann", "1.5", "2026-01-02", "111", "2026-01-01 00:00:00"),
        ("EU", "7", "Ann", "1.50", "2026-01-02", "111", "2026-01-05 10:00:00"),
    ]
    staged = stage_extract(_raw(spark, rows), CONFIG, "2026-01-01").collect()
    first, second = staged
    assert first.id == 7 and str(first.balance) == "1.50"
    assert first.joined.isoformat() == "2026-01-02"
    # Same typed key and values: same hashes (loaded_at is excluded from change detection) --
    # and since both rows carry the same key, both are quarantined as duplicates.
    assert first.key_hash == second.key_hash and first.nonkey_hash == second.nonkey_hash
    assert {first[REASON], second[REASON]} == {"duplicate_key"}


def test_each_quarantine_reason_and_counts_reconcile(spark):
    rows = [
        ("EU", "1", "Ann", "10.00", "2026-01-02", "111", "2026-01-01 00:00:00"),
        ("EU", None, "Ben", "1.00", "2026-01-02", "112", "2026-01-01 00:00:00"),
        ("EU", "3", "Cid", "lots", "2026-01-02", "113", "2026-01-01 00:00:00"),
        ("EU", "4", "Dan", "1.00", "2026-13-45", "114", "2026-01-01 00:00:00"),
        ("US", "5", "Eve", "1.00", "2026-01-02", "115", "2026-01-01 00:00:00"),
        ("US", "5", "Eva", "2.00", "2026-01-02", "116", "2026-01-01 00:00:00"),
        ("US", "x", "Fay", "1.00", "2026-01-02", "117", "2026-01-01 00:00:00"),
    ]
    staged = _staged(spark, rows)
    reasons = {key[2]: row[REASON] for key, row in staged.items()}
    assert reasons == {
        "Ann": None,
        "Ben": "null_key:id",
        "Cid": "cast_failed:balance",
        "Dan": "cast_failed:joined",
        "Eve": "duplicate_key",
        "Eva": "duplicate_key",
        "Fay": "cast_failed:id",
    }
    assert len(staged) == len(rows)  # nothing dropped: in = valid + quarantined
    # A key that cannot be read holds no key: its key_hash is NULL.
    assert staged[("EU", None, "Ben")]["key_hash"] is None
    assert staged[("US", None, "Fay")]["key_hash"] is None
    assert staged[("EU", 3, "Cid")]["key_hash"] is not None
    raw = json.loads(staged[("EU", 3, "Cid")]["raw_record"])
    assert raw["balance"] == "lots"


def test_every_copy_of_a_duplicate_key_is_quarantined(spark):
    rows = [
        ("EU", "1", "Ann", "10.00", "2026-01-02", "111", "2026-01-01 00:00:00"),
        ("EU", "1", "Abe", "lots", "2026-01-02", "112", "2026-01-01 00:00:00"),
        ("US", "2", "Bo", "1.00", "2026-01-02", "113", "2026-01-01 00:00:00"),
        ("US", "3", "Cy", "1.00", "2026-01-02", "114", "2026-01-01 00:00:00"),
        ("US", "3", "Cy", "1.00", "2026-01-02", "114", "2026-01-01 00:00:00"),
    ]
    expected = {
        "Ann": "duplicate_key",
        "Abe": "cast_failed:balance;duplicate_key",
        "Bo": None,
        "Cy": "duplicate_key",
    }
    staged = {key[2]: row[REASON] for key, row in _staged(spark, rows).items()}
    assert staged == expected
    unique = {key[2]: row[REASON] for key, row in _staged(spark, rows[2:4]).items()}
    assert unique == {"Bo": None, "Cy": None}


def test_missing_extract_column_is_a_clear_error(spark):
    with pytest.raises(ConfigError, match="has no column name, balance, joined, ssn, loaded_at"):
        stage_extract(_raw(spark, [("EU", "1")], ["region", "id"]), CONFIG, "2026-01-01")


def test_a_restore_by_hand_takes_the_undone_dates_out_of_the_applied_ones(spark):
    table = "default.hash_cdc_restored_dates"
    spark.sql(f"drop table if exists {table}")
    spark.sql(f"create table {table} (day string) using delta")
    key = "spark.databricks.delta.commitInfo.userMetadata"
    for day in ("2026-01-01", "2026-01-02", "2026-01-03"):
        spark.conf.set(key, commit_metadata(day))
        spark.sql(f"insert into {table} values ('{day}')")
    spark.conf.unset(key)
    assert [day for _, day in applied_dates(spark, table)] == [
        "2026-01-01",
        "2026-01-02",
        "2026-01-03",
    ]
    # Versions 1-3 applied the three dates; back to version 2 by number: 01-03 is undone.
    spark.sql(f"restore table {table} to version as of 2")
    assert applied_dates(spark, table) == [(1, "2026-01-01"), (2, "2026-01-02")]
    check_date_order(applied_dates(spark, table), table, "2026-01-02")
    with pytest.raises(OutOfOrderDateError, match="latest applied date 2026-01-02"):
        check_date_order(applied_dates(spark, table), table, "2026-01-01")
    # A date applied after the restore counts; then back by timestamp to version 1.
    spark.conf.set(key, commit_metadata("2026-01-03"))
    spark.sql(f"insert into {table} values ('2026-01-03 again')")
    spark.conf.unset(key)
    assert applied_dates(spark, table)[-1] == (5, "2026-01-03")
    when = spark.sql(f"describe history {table}").where("version = 1").first().timestamp
    spark.sql(f"restore table {table} to timestamp as of '{when}'")
    assert applied_dates(spark, table) == [(1, "2026-01-01")]
    # Back to a version that an earlier restore had undone: its dates count again.
    spark.sql(f"restore table {table} to version as of 3")
    assert [day for _, day in applied_dates(spark, table)] == [
        "2026-01-01",
        "2026-01-02",
        "2026-01-03",
    ]
    assert sorted(r.day for r in spark.table(table).collect()) == [
        "2026-01-01",
        "2026-01-02",
        "2026-01-03",
    ]


def test_a_restore_to_a_timestamp_with_an_offset_is_read_in_utc():
    from datetime import datetime
    from types import SimpleNamespace

    from spark_cdc.hash_cdc.extracts import _live_dates

    def commit(version, hour, day=None, operation="WRITE", parameters=None):
        return SimpleNamespace(
            version=version,
            timestamp=datetime(2026, 1, 5, hour),
            operation=operation,
            operationParameters=parameters,
            userMetadata=commit_metadata(day) if day else None,
        )

    history = [
        commit(0, 8, operation="CREATE TABLE"),
        commit(1, 9, "2026-01-01"),
        commit(2, 10, "2026-01-02"),
        # 11:30 at +02:00 is 09:30 UTC: version 1 is the state restored.
        commit(3, 12, operation="RESTORE", parameters={"timestamp": "2026-01-05T11:30:00+02:00"}),
    ]
    assert _live_dates(history) == [(1, "2026-01-01")]


def test_sensitive_columns_stay_out_of_the_current_table():
    assert "ssn" not in current_columns(CONFIG)
    assert "ssn" in CONFIG.tracked


def test_bad_config_is_refused():
    with pytest.raises(ConfigError, match=r"a \(nonkeys\) and a \(keys\) are the same column"):
        DatasetConfig.from_mapping(
            "x", {"key_columns": {"a": "int"}, "nonkey_columns": {"a": "int"}}
        )
    with pytest.raises(ConfigError, match="extract_mode"):
        DatasetConfig.from_mapping("x", {"key_columns": {"a": "int"}, "extract_mode": "weekly"})
    with pytest.raises(ConfigError, match=r"A \(nonkeys\) and a \(keys\) are the same column"):
        DatasetConfig.from_mapping(
            "x", {"key_columns": {"a": "int"}, "nonkey_columns": {"A": "int"}}
        )
    with pytest.raises(ConfigError, match="'full name' cannot be a Delta column name"):
        DatasetConfig.from_mapping(
            "x", {"key_columns": {"a": "int"}, "nonkey_columns": {"full name": "string"}}
        )
    with pytest.raises(ConfigError, match="operation_column is for delta extracts"):
        DatasetConfig.from_mapping("x", {"key_columns": {"a": "int"}, "operation_column": "op"})
    with pytest.raises(ConfigError, match="delete_values must be a list of non-empty values"):
        DatasetConfig.from_mapping(
            "x",
            {"key_columns": {"a": "int"}, "extract_mode": "delta", "operation_column": "op",
             "delete_values": [""]},
        )  # fmt: skip
    with pytest.raises(ConfigError, match=r"OP \(operation\) and op \(nonkeys\)"):
        DatasetConfig.from_mapping(
            "x",
            {"key_columns": {"a": "int"}, "nonkey_columns": {"op": "string"},
             "extract_mode": "delta", "operation_column": "OP"},
        )  # fmt: skip
    with pytest.raises(ConfigError, match="max_delete_fraction must be between 0 and 1"):
        DatasetConfig.from_mapping("x", {"key_columns": {"a": "int"}, "max_delete_fraction": 2})


def test_a_delta_extract_with_an_operation_column_deletes_and_leaves_the_rest(spark):
    """Day 1 inserts 1, 2, 3. Day 2 deletes 1 (its payload kept as the tombstone), lacks 2
    (unchanged: it stays I of day 1), deletes 4 (never seen: no row), updates 3, sends 5 with
    a NULL operation (quarantined: its key has no row to hold). Day 3 sends 1 again (I, by
    the upsert value ``u`` in any case), deletes 3 (``d``: values compare ignoring case), and
    sends 2 with ``DEL``, neither a delete nor an upsert value: quarantined, 2 held."""
    config = DatasetConfig.from_mapping(
        "ops",
        {"key_columns": {"k": "int"}, "nonkey_columns": {"v": "string"},
         "extract_mode": "delta", "operation_column": "op", "delete_values": ["D", "delete"]},
    )  # fmt: skip
    days = [
        ("2026-02-01", [("1", "a", "I"), ("2", "b", "I"), ("3", "c", "I")]),
        ("2026-02-02", [("1", None, "D"), ("4", None, " delete "), ("3", "c2", "U"),
                        ("5", "e", None)]),
        ("2026-02-03", [("1", "a3", "u"), ("3", None, "d"), ("2", "b3", "DEL")]),
    ]  # fmt: skip
    previous, states = None, []
    for date, rows in days:
        raw = spark.createDataFrame(rows, "k string, v string, op string")
        staged = stage_extract(raw, config, date)
        valid = staged.where(F.col(REASON).isNull())
        held = staged.where(F.col(REASON).isNotNull()).select("key_hash")
        previous = apply_extract(valid, previous, config, date, held).localCheckpoint()
        states.append(
            sorted(
                (r.k, r.v, r.operation, r.eff_start_date.isoformat())
                for r in previous.select("k", "v", "operation", "eff_start_date").collect()
            )
        )
        reasons = [r[REASON] for r in staged.where(F.col(REASON).isNotNull()).collect()]
        if date == "2026-02-02":
            assert reasons == ["null_operation:op"]
        if date == "2026-02-03":
            assert reasons == ["unknown_operation:op"]
    assert states[1] == [
        (1, "a", "D", "2026-02-02"),
        (2, "b", "I", "2026-02-01"),
        (3, "c2", "U", "2026-02-02"),
    ]
    assert states[2] == [
        (1, "a3", "I", "2026-02-03"),
        (2, "b", "I", "2026-02-01"),
        (3, "c2", "D", "2026-02-03"),
    ]
    assert "op" not in previous.columns


# --- compare: Spark against the plain-Python model on generated extract sequences -------------

SMALL = DatasetConfig.from_mapping(
    "small", {"key_columns": {"k": "int"}, "nonkey_columns": {"v": "int"}}
)
DATES = ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"]

# A value per key: NULL, a number, or "bad" (does not cast: the row is quarantined, its key held).
extract = st.dictionaries(
    st.integers(0, 6), st.one_of(st.none(), st.integers(0, 2), st.just("bad")), max_size=7
)


def _spark_state(frame) -> dict:
    return {
        (r.k,): (r.v, r.operation, r.eff_start_date.isoformat())
        for r in frame.select("k", "v", "operation", "eff_start_date").collect()
    }


def _ref_state(state: dict[tuple, ReferenceRow]) -> dict:
    return {k: (r.payload["v"], r.operation, r.eff_start_date) for k, r in state.items()}


# With an operation column, a value may also be "del": the row is a delete (operation D).
extract_with_deletes = st.dictionaries(
    st.integers(0, 6),
    st.one_of(st.none(), st.integers(0, 2), st.just("bad"), st.just("del")),
    max_size=7,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    extracts=st.lists(st.tuples(extract_with_deletes, st.booleans()), min_size=1, max_size=4),
    mode=st.sampled_from(["full", "delta", "delta with operations"]),
)
def test_compare_matches_the_reference(spark, extracts, mode):
    """Each extract: values per key, and whether it also has a row whose key is NULL (no key can
    be read from it, so a full extract defers its deletes). With operations, a "del" value is a
    delete row (operation D) and the other rows are upserts (I or U, at random); without, a
    "del" value is a value that does not cast (quarantined, like "bad")."""
    settings_ = {"key_columns": {"k": "int"}, "nonkey_columns": {"v": "int"}}
    settings_["extract_mode"] = mode.split()[0]
    operations = mode == "delta with operations"
    if operations:
        settings_["operation_column"] = "op"
    config = DatasetConfig.from_mapping("small", settings_)
    previous = None
    reference: dict[tuple, ReferenceRow] = {}
    for date, (rows, unreadable) in zip(DATES, extracts, strict=False):
        ops = {k: "D" if v == "del" else ("I" if k % 2 else "U") for k, v in rows.items()}
        values = {
            k: None if (v is None or (v == "del" and operations)) else str(v)
            for k, v in rows.items()
        }
        records = [Row(k=str(k), v=values[k], op=ops[k]) for k in rows]
        records += [Row(k=None, v="1", op="U")] if unreadable else []
        raw = spark.createDataFrame(records, "k string, v string, op string")
        if not operations:
            raw = raw.drop("op")
        staged = stage_extract(raw, config, date)
        valid = staged.where(F.col(REASON).isNull())
        held = staged.where(F.col(REASON).isNotNull()).select("key_hash")
        current = apply_extract(valid, previous, config, date, held, unreadable).localCheckpoint()
        castable = {
            k: v for k, v in rows.items() if v not in ("bad", "del") or (v == "del" and operations)
        }
        good = [{"k": k, "v": None if v == "del" else v, "op": ops[k]} for k, v in castable.items()]
        bad_keys = [(k,) for k in rows if k not in castable]
        reference = reference_apply(reference, good, config, date, bad_keys, unreadable)
        assert _spark_state(current) == _ref_state(reference)
        previous = current
