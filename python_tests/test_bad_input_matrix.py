"""The bad-input matrix: every entry point against the same families of bad input.

One table of cases. Each row names an entry point, the bad input, and the expected outcome: a
clear error (with the words it must contain) or the quarantine reasons of the bad rows. Each
row also asserts that counts reconcile (rows in = applied + quarantined [+ duplicates]) and that
nothing that was there before is lost (every key live before stays live, every line is kept).

Entry points (the library functions the dbt models and the commands call):

- ``csv`` / ``parquet``: a hash-CDC extract applied to a current state of five live keys
  (read_extract -> stage_extract -> current_state, guards included);
- ``landing``: a change-event batch file through ``land_batch_files`` and the ledger;
- ``feed``: typed change-event rows (an upstream ingestion's table) through the ledger;
- ``debezium``: Debezium messages through ``normalize_debezium`` and the ledger;
- ``json``: a schema-drift landing file through bronze, the registry and the silver writer;
- ``initial``: the existing rows of a change-event source (``land_initial_rows``);
- ``snapshot``: a snapshot's source and vars, through real ``dbt snapshot`` runs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F
from support import copy_project, dbt_invoker, messages, module_schema

from spark_cdc.change_events.config import SourceConfig
from spark_cdc.change_events.debezium.envelope import normalize_debezium
from spark_cdc.change_events.landing import InitialRowsError, land_batch_files, land_initial_rows
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.pipeline import history_increment, ledger_increment
from spark_cdc.hash_cdc.compare import initial_state
from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig
from spark_cdc.hash_cdc.extracts import commit_metadata, read_extract
from spark_cdc.hash_cdc.guards import MassDeleteError
from spark_cdc.hash_cdc.run import USER_METADATA, RunSettings, current_state
from spark_cdc.hash_cdc.stage import REASON, stage_extract
from spark_cdc.schema_drift.bronze import bronze_increment
from spark_cdc.schema_drift.registry import registry_increment
from spark_cdc.schema_drift.silver import METADATA_COLUMNS, parse_events
from spark_cdc_dev.table_state import latest_version

MODULE_SCHEMA = module_schema(__file__)  # this module's tables (conftest.py)

TEN_MB = "x" * (10 * 1024 * 1024)


def deep(levels: int) -> str:
    """A JSON object nested ``levels`` deep."""
    return '{"a": ' * levels + "1" + "}" * levels


@dataclass(frozen=True)
class Case:
    """One row of the matrix: entry point, bad input, and the expected outcome."""

    entry: str
    name: str
    data: object
    error: str | None = None
    reasons: dict[str, int] = field(default_factory=dict)
    rows_in: int | None = None
    config: object = None
    skipped: int = 0  # rows kept as skipped (their reason counted in ``reasons`` too)

    @property
    def id(self) -> str:
        return f"{self.entry}:{self.name}"


@dataclass
class Outcome:
    """What an entry point did with a bad input."""

    error: str | None = None
    reasons: Counter = field(default_factory=Counter)
    rows_in: int = 0
    applied: int = 0
    quarantined: int = 0
    duplicates: int = 0
    skipped: int = 0
    lost: list = field(default_factory=list)


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory) -> Callable:
    """Write a frame as a new Delta table named after ``name`` (by path, no metastore round
    trip; each write a table of its own, so no case reads another's log) and return the table
    as read back."""
    root = tmp_path_factory.mktemp("matrix_tables")
    written_so_far = itertools.count()

    def write(frame, name: str, column_mapping: bool = False):
        location = f"delta.`{root / f'{name}_{next(written_so_far)}'}`"
        writer = frame.writeTo(location).using("delta")
        if column_mapping:
            writer = writer.tableProperty("delta.columnMapping.mode", "name")
        writer.create()
        return spark.table(location)

    return write


# --- hash CDC extracts ----------------------------------------------------------------------

HASH = DatasetConfig.from_mapping(
    "matrix",
    {
        "key_columns": {"id": "bigint"},
        "nonkey_columns": {
            "name": "string",
            "amount": "decimal(10,2)",
            "day": "date",
            "seen_at": "timestamp",
        },
    },
)
HEADER = ["id", "name", "amount", "day", "seen_at"]
GOOD = [[str(i), f"n{i}", "1.50", "2026-01-02", "2026-01-02 10:00:00"] for i in range(1, 6)]
ODD_NAMES = DatasetConfig.from_mapping(
    "matrix_odd",
    {
        "key_columns": {"customer.id": "bigint"},
        "nonkey_columns": {"e-mail": "string", "名前": "string"},
    },
)
# A delta extract that says its deletes (operation column ``op``).
WITH_OPERATIONS = DatasetConfig.from_mapping(
    "matrix_ops",
    {
        "key_columns": {"id": "bigint"},
        "nonkey_columns": {"name": "string"},
        "extract_mode": "delta",
        "operation_column": "op",
    },
)
FIRST_DATE, DATE = "2026-01-01", "2026-01-02"


def _csv(rows: list[list[str]], header: list[str] = HEADER) -> bytes:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([header, *rows])
    return text.getvalue().encode()


def _bad_row(**values: str) -> list[str]:
    row = dict(zip(HEADER, ["99", "bad", "1.00", "2026-01-02", "2026-01-02 00:00:00"], strict=True))
    row.update(values)
    return [row[c] for c in HEADER]


def _parquet(columns: dict[str, pa.Array]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def _good_parquet_plus(row: list[object], types: dict[str, pa.DataType] | None = None) -> bytes:
    columns = {}
    for i, c in enumerate(HEADER):
        kind = (types or {}).get(c, pa.string())
        values = [r[i] for r in GOOD] + [row[i]]
        columns[c] = pa.array(values, type=kind) if kind != pa.string() else pa.array(values)
    return _parquet(columns)


HASH_CASES = [
    Case(
        "csv", "binary garbage", b"\x00\xff\xfe garbage \x89PNG\r\n\x1a\n", error="has no column id"
    ),
    Case("csv", "empty file", b"", error="the full extract has zero rows"),
    Case("csv", "header only", _csv([]), error="the full extract has zero rows"),
    Case(
        "csv",
        "too many fields",
        _csv([*GOOD, [*_bad_row(), "extra"]]),
        reasons={"column_count_mismatch": 1},
    ),
    Case(
        "csv", "too few fields", _csv([*GOOD, _bad_row()[:3]]), reasons={"column_count_mismatch": 1}
    ),
    Case(
        "csv",
        "unparseable number",
        _csv([*GOOD, _bad_row(amount="12,5x")]),
        reasons={"cast_failed:amount": 1},
    ),
    Case(
        "csv",
        "unparseable date",
        _csv([*GOOD, _bad_row(day="2026-02-30")]),
        reasons={"cast_failed:day": 1},
    ),
    Case(
        "csv",
        "unparseable timestamp",
        _csv([*GOOD, _bad_row(seen_at="yesterday")]),
        reasons={"cast_failed:seen_at": 1},
    ),
    Case(
        "csv",
        "overflow bigint key",
        _csv([*GOOD, _bad_row(id="9" * 30)]),
        reasons={"cast_failed:id": 1},
    ),
    Case(
        "csv",
        "overflow decimal",
        _csv([*GOOD, _bad_row(amount="1" * 20)]),
        reasons={"cast_failed:amount": 1},
    ),
    Case("csv", "null key", _csv([*GOOD, _bad_row(id="")]), reasons={"null_key:id": 1}),
    Case("csv", "duplicate keys", _csv([*GOOD, _bad_row(id="1")]), reasons={"duplicate_key": 2}),
    Case("csv", "10 MB value", _csv([*GOOD, _bad_row(name=TEN_MB)])),
    Case("csv", "deep JSON as text", _csv([*GOOD, _bad_row(name=deep(5000))])),
    Case(
        "csv",
        "non-UTF-8 bytes",
        _csv(GOOD) + b"99,caf\xe9,1.00,2026-01-02,2026-01-02 00:00:00\n",
        reasons={"invalid_utf8:name": 1},
    ),
    Case(
        "csv",
        "case-colliding header",
        _csv(GOOD, ["id", "ID", "amount", "day", "seen_at"]),
        error="names a column twice (ignoring case): 'id' and 'ID'",
    ),
    Case("csv", "empty header name", _csv([[*r, "x"] for r in GOOD], [*HEADER, ""])),
    Case(
        "csv",
        "blank and missing operations of a delta extract",
        _csv([["1", "a", "U"], ["2", "b", " "], ["3", "c", ""]], ["id", "name", "op"]),
        config=WITH_OPERATIONS,
        reasons={"null_operation:op": 2},
    ),
    Case(
        "csv",
        "unknown operation codes of a delta extract",
        _csv(
            [["1", "a2", "u"], ["2", "b", "DELETE"], ["4", "d", "x"]],
            ["id", "name", "op"],
        ),
        config=WITH_OPERATIONS,
        reasons={"unknown_operation:op": 2},
    ),
    Case(
        "csv",
        "keys with dots, dashes, unicode",
        _csv([["1", "a b", "名"], ["2", "c", "字"]], ["customer.id", "e-mail", "名前"]),
        config=ODD_NAMES,
        rows_in=2,
    ),
    Case(
        "csv",
        "missing column",
        _csv([r[:4] for r in GOOD], HEADER[:4]),
        error="the extract has no column seen_at",
    ),
    Case("parquet", "binary garbage", b"PAR1 this is not parquet", error="cannot be read"),
    Case("parquet", "empty file", b"", error="the full extract has zero rows"),
    Case(
        "parquet",
        "zero rows",
        _parquet({c: pa.array([], pa.string()) for c in HEADER}),
        error="the full extract has zero rows",
    ),
    Case(
        "parquet",
        "unparseable number",
        _good_parquet_plus(["99", "b", "n/a", "2026-01-02", "2026-01-02 00:00:00"]),
        reasons={"cast_failed:amount": 1},
    ),
    Case(
        "parquet",
        "overflow",
        _good_parquet_plus(["9" * 30, "b", "1.0", "2026-01-02", "2026-01-02 00:00:00"]),
        reasons={"cast_failed:id": 1},
    ),
    Case(
        "parquet",
        "null key",
        _good_parquet_plus([None, "b", "1.0", "2026-01-02", "2026-01-02 00:00:00"]),
        reasons={"null_key:id": 1},
    ),
    Case(
        "parquet",
        "duplicate keys",
        _good_parquet_plus(["2", "b", "1.0", "2026-01-02", "2026-01-02 00:00:00"]),
        reasons={"duplicate_key": 2},
    ),
    Case(
        "parquet",
        "non-UTF-8 bytes",
        _good_parquet_plus(
            [b"99", b"caf\xe9", b"1.0", b"2026-01-02", b"2026-01-02 00:00:00"],
            dict.fromkeys(HEADER, pa.binary()),
        ),
        reasons={"invalid_utf8:name": 1},
    ),
    Case(
        "parquet",
        "case-colliding columns",
        _parquet(
            {
                "id": pa.array(["1"]),
                "ID": pa.array(["2"]),
                "name": pa.array(["n"]),
                "amount": pa.array(["1"]),
                "day": pa.array(["2026-01-01"]),
                "seen_at": pa.array(["2026-01-01 00:00:00"]),
            }
        ),
        error="cannot be read",
    ),
]


@pytest.fixture(scope="module")
def hash_previous(spark, tmp_path_factory):
    """A current table of five live keys applied on FIRST_DATE, per dataset config."""
    tables = {}
    for config in (HASH, ODD_NAMES, WITH_OPERATIONS):
        folder = tmp_path_factory.mktemp(f"previous_{config.name}")
        header = list(config.read_columns)
        rows = {
            HASH.name: GOOD,
            ODD_NAMES.name: [["1", "a b", "名"], ["2", "c", "字"]],
            WITH_OPERATIONS.name: [["1", "a", "I"], ["2", "b", "I"], ["3", "c", "I"]],
        }[config.name]
        (folder / "part.csv").write_bytes(_csv(rows, header))
        staged = stage_extract(read_extract(spark, str(folder), config), config, FIRST_DATE)
        table = f"matrix.{config.name}_current"
        spark.sql("create schema if not exists matrix")
        spark.sql(f"drop table if exists {table}")
        spark.conf.set(USER_METADATA, commit_metadata(FIRST_DATE))
        try:
            initial_state(staged.where(F.col(REASON).isNull()), config, FIRST_DATE).write.format(
                "delta"
            ).saveAsTable(table)
        finally:
            spark.conf.unset(USER_METADATA)
        tables[config.name] = table
    return tables


def _input_rows(case: Case, config: DatasetConfig) -> list[dict[str, str | None]]:
    """The extract's records as plain Python reads them (csv module, pyarrow): the count and
    the values the written tables are checked against, independent of the code under test."""
    if case.entry == "parquet":
        records = pq.read_table(io.BytesIO(case.data)).to_pylist()
        return [
            {
                k: v.decode(errors="replace") if isinstance(v, bytes) else v
                for k, v in record.items()
            }
            for record in records
        ]
    text = case.data.decode(errors="replace")
    # A field may be as long as the whole text; the process-wide limit is put back after.
    limit = csv.field_size_limit(max(len(text) + 1, csv.field_size_limit()))
    try:
        rows = [row for row in csv.reader(io.StringIO(text)) if row]
    finally:
        csv.field_size_limit(limit)
    header, records = rows[0], rows[1:]
    return [dict(zip(header, row, strict=False)) for row in records]


def _run_hash(spark, case: Case, folder: Path, tables: dict[str, str], written) -> Outcome:
    """Apply the extract as the model does and write what it writes (current table and
    quarantine); count applied, quarantined and lost from those written tables."""
    config = case.config or HASH
    if case.entry == "parquet":
        config = DatasetConfig(**{**config.__dict__, "file_format": "parquet"})
    (folder / f"part-00000.{config.file_format}").write_bytes(case.data)
    table = tables[config.name]
    version = latest_version(spark, table)
    run = RunSettings(effective_date=DATE, landing_root=str(folder))
    before = {r.key_hash for r in spark.table(table).where("operation != 'D'").collect()}
    outcome = Outcome()
    try:
        raw = read_extract(spark, str(folder), config, config.file_format)
        staged = stage_extract(raw, config, DATE).localCheckpoint()
        after = current_state(spark, staged, table, config, run)
    except (ConfigError, MassDeleteError) as error:
        outcome.error = str(error)
        assert latest_version(spark, table) == version  # nothing written
        return outcome
    assert latest_version(spark, table) == version  # the library itself wrote nothing
    current = written(after, "hash_after")
    quarantine = written(staged.where(F.col(REASON).isNotNull()), "hash_quarantine")
    # From the written tables only.
    held = quarantine.collect()
    live = [r.asDict() for r in current.where("operation != 'D'").collect()]
    key, value = next(iter(config.keys)), next(iter(config.nonkeys))
    held_keys = set()
    for row in held:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            held_keys.add(json.loads(row.raw_record).get(key))
    live_values = {(str(r[key]), r[value]) for r in live}
    inputs = _input_rows(case, config)
    outcome.rows_in = len(inputs)
    outcome.reasons = Counter(r[REASON] for r in held)
    outcome.quarantined = len(held)
    outcome.applied = sum(
        1
        for r in inputs
        if r.get(key) not in held_keys and (str(r.get(key)), r.get(value)) in live_values
    )
    outcome.lost = sorted(before - {r["key_hash"] for r in live})
    return outcome


# --- change-event landing, feed and Debezium -------------------------------------------------

TARGET = TargetSchema({"id": "int", "name": "string", "amount": "int"}, ("id",))
SOURCE = SourceConfig("matrix", TARGET, evolve_columns=True)


def event(**fields: object) -> dict:
    """A valid insert, with ``fields`` replaced."""
    base = {
        "change_type": "insert",
        "event_ts": "2026-01-01 00:00:00",
        "event_seq": 1,
        "column_names": ["id", "name", "amount"],
        "column_values": ["1", "a", "5"],
    }
    base.update(fields)
    return base


def lines(*items: object) -> bytes:
    """JSON lines: dicts are dumped, str and bytes are written as they are."""
    out = b""
    for item in items:
        if isinstance(item, dict):
            out += json.dumps(item).encode()
        else:
            out += item if isinstance(item, bytes) else item.encode()
        out += b"\n"
    return out


GOOD_EVENT = event(column_values=["2", "b", "7"], event_ts="2026-01-01 00:00:01")

LANDING_CASES = [
    Case(
        "landing",
        "binary garbage",
        lines(GOOD_EVENT, b"\x00\xff\x89PNG\x1a"),
        reasons={"malformed_json": 1},
    ),
    Case("landing", "empty file", b"", rows_in=0),
    Case("landing", "blank lines only", b"\n \n\n", rows_in=0),
    Case(
        "landing",
        "trailing garbage",
        lines(GOOD_EVENT, json.dumps(event()) + "garbage"),
        reasons={"malformed_json": 1},
    ),
    Case(
        "landing",
        "not an object",
        lines(GOOD_EVENT, "[1, 2]", "null", '"text"'),
        reasons={"malformed_json": 3},
    ),
    Case(
        "landing",
        "field of the wrong kind",
        lines(GOOD_EVENT, event(column_names="id")),
        reasons={"malformed_record": 1},
    ),
    Case(
        "landing",
        "unparseable timestamp",
        lines(GOOD_EVENT, event(event_ts="31/12/2026")),
        reasons={"invalid_event_ts": 1},
    ),
    Case(
        "landing",
        "unparseable number",
        lines(GOOD_EVENT, event(event_seq="seven")),
        reasons={"invalid_event_seq": 1},
    ),
    Case(
        "landing",
        "overflow sequence",
        lines(GOOD_EVENT, event(event_seq=10**30)),
        reasons={"invalid_event_seq": 1},
    ),
    Case(
        "landing",
        "overflow value",
        lines(GOOD_EVENT, event(column_values=["3", "c", str(2**40)])),
        reasons={"cast_failed:amount": 1},
    ),
    Case(
        "landing",
        "null key",
        lines(GOOD_EVENT, event(column_values=[None, "c", "1"])),
        reasons={"null_key:id": 1},
    ),
    Case("landing", "duplicate events", lines(GOOD_EVENT, GOOD_EVENT), rows_in=2),
    Case(
        "landing",
        "deep nesting 500 as a value",
        lines(
            GOOD_EVENT,
            event(column_names=["id", "name"], column_values=["4", json.loads(deep(500))]),
        ),
    ),
    Case(
        "landing",
        "deep nesting 5000",
        lines(GOOD_EVENT, '{"x": ' + deep(5000) + "}"),
        reasons={"malformed_json": 1},
    ),
    Case("landing", "10 MB line", lines(GOOD_EVENT, event(column_values=["5", TEN_MB, "1"]))),
    Case(
        "landing",
        "keys with dots, dashes, unicode",
        lines(
            GOOD_EVENT,
            event(
                column_names=["id", "name", "amount", "a.b", "c-d", "名前"],
                column_values=["6", "f", "1", "x", "y", "z"],
            ),
        ),
    ),
    Case(
        "landing",
        "a name no Delta column can have",
        lines(
            GOOD_EVENT,
            event(column_names=["id", "name", "amount", "c d"], column_values=["8", "h", "1", "y"]),
        ),
        reasons={"invalid_name:$.c d": 1},
    ),
    Case(
        "landing",
        "empty column name",
        lines(
            GOOD_EVENT,
            event(column_names=["id", "name", "amount", ""], column_values=["7", "g", "1", "x"]),
        ),
        reasons={"invalid_name:$.": 1},
    ),
    Case(
        "landing",
        "case-colliding names",
        lines(
            GOOD_EVENT,
            event(
                column_names=["id", "name", "amount", "Name"], column_values=["8", "h", "1", "x"]
            ),
        ),
        reasons={"name_collision:$.name:$.Name": 1},
    ),
    Case(
        "landing",
        "repeated column name",
        lines(
            GOOD_EVENT,
            event(column_names=["id", "id", "name", "amount"], column_values=["9", "9", "i", "1"]),
        ),
        reasons={"duplicate_column_name": 1},
    ),
    Case(
        "landing",
        "non-UTF-8 bytes",
        lines(
            GOOD_EVENT,
            json.dumps(event(column_values=["10", "CAFE", "1"]))
            .encode()
            .replace(b"CAFE", b"caf\xe9"),
        ),
        reasons={"malformed_json": 1},
    ),
]

FEED_ROWS = {
    "unknown change type": (dict(change_type="upsert"), "unknown_change_type:upsert"),
    "missing event_ts": (dict(event_ts=None), "missing_event_ts"),
    "missing image": (dict(column_names=None, column_values=None), "missing_image"),
    "image length mismatch": (dict(column_values=["1", "a"]), "image_length_mismatch"),
    "missing old key": (dict(change_type="update"), "missing_old_key"),
    "uncastable old key": (
        dict(change_type="delete", old_key_names=["id"], old_key_values=["x"]),
        "cast_failed:old_id",
    ),
}
FEED_CASES = [
    Case("feed", name, row, reasons={reason: 1}) for name, (row, reason) in FEED_ROWS.items()
]
# A feed ordered by a landing column of its own (sequence_by: [line_no], as text): a part that is
# no exact integer.
SEQUENCE_CASES = [
    Case("sequence", name, text, reasons={"invalid_sequence:line_no": 1})
    for name, text in (("inexact line number", "1.5"), ("null line number", None))
]


def dbz(
    op: str = "c",
    after: object = None,
    ts: object = 1_767_225_600_000,
    lsn: object = 1,
    amount_schema: dict | None = None,
    **source: object,
) -> str:
    """A Debezium message; with ``amount_schema``, its envelope schema, which gives the
    ``amount`` column that Kafka Connect schema."""
    payload = {
        "op": op,
        "after": after if after is not None else {"id": 1, "name": "a", "amount": 2},
        "source": {"ts_ms": ts, "lsn": lsn, **source},
    }
    schema: dict = {}
    if amount_schema is not None:
        row = {
            "type": "struct",
            "optional": True,
            "fields": [
                {"field": "id", "type": "int32"},
                {"field": "name", "type": "string", "optional": True},
                {"field": "amount", "optional": True, **amount_schema},
            ],
        }
        schema = {
            "type": "struct",
            "fields": [
                {"field": "before", **row},
                {"field": "after", **row},
                {"field": "op", "type": "string"},
            ],
        }
    return json.dumps({"schema": schema, "payload": payload})


DEBEZIUM_CASES = [
    Case(
        "debezium",
        "binary garbage",
        [dbz(), b"\x00\xff\x89PNG"],
        reasons={"unknown_change_type:unparseable": 1},
    ),
    Case("debezium", "empty message", [dbz(), ""], reasons={"unknown_change_type:unparseable": 1}),
    Case(
        "debezium",
        "trailing garbage",
        [dbz(), dbz() + "garbage"],
        reasons={"unknown_change_type:unparseable": 1},
    ),
    Case(
        "debezium", "not an object", [dbz(), "[1]"], reasons={"unknown_change_type:unparseable": 1}
    ),
    Case(
        "debezium",
        "unparseable timestamp",
        [dbz(), dbz(ts="yesterday")],
        reasons={"missing_event_ts": 1},
    ),
    Case("debezium", "overflow lsn", [dbz(), dbz(lsn=10**30)], reasons={}, rows_in=2),
    Case(
        "debezium",
        "overflow lsn of a PostgreSQL connector",
        [dbz(), dbz(lsn=10**30, connector="postgresql")],
        reasons={"invalid_position:postgresql": 1},
    ),
    Case(
        "debezium",
        "binlog position without a file",
        [dbz(), dbz(lsn=None, connector="mariadb", pos=4, row=0)],
        reasons={"invalid_position:mariadb": 1},
    ),
    Case(
        "debezium",
        "null key",
        [dbz(), dbz(after={"id": None, "name": "x"})],
        reasons={"null_key:id": 1},
    ),
    Case(
        "debezium",
        "deep nesting 500 in a value",
        [dbz(), dbz(after={"id": 2, "blob": json.loads(deep(500))})],
    ),
    Case(
        "debezium",
        "deep nesting 5000",
        [dbz(), '{"payload": ' + deep(5000) + "}"],
        reasons={"unknown_change_type:unparseable": 1},
    ),
    Case("debezium", "10 MB message", [dbz(), dbz(after={"id": 3, "name": TEN_MB, "amount": 1})]),
    Case(
        "debezium",
        "unicode and dotted keys",
        [dbz(), dbz(after={"id": 4, "名前": "x", "a.b": "y"})],
    ),
    Case(
        "debezium",
        "non-UTF-8 bytes",
        [dbz(), dbz().encode().replace(b'"a"', b'"caf\xe9"')],
        reasons={"unknown_change_type:unparseable": 1},
    ),
    Case("debezium", "tombstone", [dbz(), None], reasons={"tombstone": 1}, skipped=1),
    Case(
        "debezium",
        "an interval of months and days (MicroDuration)",
        [
            dbz(),
            dbz(
                after={"id": 5, "name": "e", "amount": 2_629_800_000_000},
                amount_schema={"type": "int64", "name": "io.debezium.time.MicroDuration"},
            ),
        ],
        reasons={"undecodable:amount:io.debezium.time.MicroDuration into int": 1},
    ),
    Case(
        "debezium",
        "an array of encoded elements",
        [
            dbz(),
            dbz(
                after={"id": 6, "name": "f", "amount": [1, 2]},
                amount_schema={
                    "type": "array",
                    "items": {"type": "int32", "name": "io.debezium.time.Date"},
                },
            ),
        ],
        reasons={"undecodable:amount:array of io.debezium.time.Date into int": 1},
    ),
]


HIGH = "9999-12-31 23:59:59"


def _ledger_outcome(ledger, rows_in: int, written) -> Outcome:
    """Write the ledger and the history resolved from it, as the models do; count from them.
    ``rows_in`` is what the input holds, counted in plain Python."""
    ledger_table = written(ledger, "ledger")
    history = history_increment(ledger_table, None, None, SOURCE, HIGH, "matrix")
    history_table = written(history, "history")
    keys = [F.col(f"image.{k}").alias(k) for k in TARGET.keys]
    rows = ledger_table.select("status", REASON, "change_kind", *keys).collect()
    statuses = Counter(r.status for r in rows)
    kept = {tuple(r[k] for k in TARGET.keys) for r in history_table.collect()}
    applied_keys = {
        tuple(r[k] for k in TARGET.keys)
        for r in rows
        if r.status == "applied" and r.change_kind in ("insert", "update")
    }
    return Outcome(
        reasons=Counter(r[REASON] for r in rows if r[REASON] is not None),
        rows_in=rows_in,
        applied=statuses["applied"],
        quarantined=statuses["quarantined"],
        duplicates=statuses["duplicate"],
        skipped=statuses["skipped"],
        # An applied event whose key has no version in the written history was lost.
        lost=sorted(applied_keys - kept),
    )


def _run_landing(spark, case: Case, folder: Path, written) -> Outcome:
    path = folder / "batch-00000.jsonl"
    path.write_bytes(case.data)
    expected_lines = [line for line in case.data.split(b"\n") if line.strip()]
    table = "matrix.change_events_feed"
    spark.sql(f"drop table if exists {table}")
    land_batch_files(spark, table, [path])
    if not spark.catalog.tableExists(table):
        return Outcome(rows_in=len(expected_lines))  # reconciles only when there was nothing
    landed = spark.table(table)
    assert landed.count() == len(expected_lines)  # every line is kept
    unreadable = landed.where("_landing_error is not null")
    assert unreadable.where("_raw_record is null").count() == 0  # ... with its raw text
    return _ledger_outcome(
        ledger_increment(landed, None, SOURCE, "matrix"), len(expected_lines), written
    )


def _run_feed(spark, case: Case, written) -> Outcome:
    rows = [event(), {**event(column_values=["2", "b", "1"]), **case.data}]
    for row in rows:
        row["event_ts"] = (
            None if row["event_ts"] is None else datetime.fromisoformat(row["event_ts"])
        )
    frame = spark.createDataFrame(
        [{**row, "_batch_id": 0} for row in rows],
        "change_type string, event_ts timestamp, event_seq bigint, column_names array<string>, "
        "column_values array<string>, old_key_names array<string>, old_key_values array<string>, "
        "_batch_id bigint",
    )
    return _ledger_outcome(ledger_increment(frame, None, SOURCE, "matrix"), len(rows), written)


def _run_sequence(spark, case: Case, written) -> Outcome:
    rows = [
        {**event(), "line_no": "1"},
        {**event(column_values=["2", "b", "1"]), "line_no": case.data},
    ]
    frame = spark.createDataFrame(
        [
            {**row, "event_ts": datetime.fromisoformat(row["event_ts"]), "_batch_id": 0}
            for row in rows
        ],
        "change_type string, event_ts timestamp, event_seq bigint, column_names array<string>, "
        "column_values array<string>, old_key_names array<string>, old_key_values array<string>, "
        "line_no string, _batch_id bigint",
    )
    ordered = replace(SOURCE, sequence_by=("line_no",))
    return _ledger_outcome(ledger_increment(frame, None, ordered, "matrix"), len(rows), written)


def _run_debezium(spark, case: Case, written) -> Outcome:
    values = [v.encode() if isinstance(v, str) else v for v in case.data]
    frame = spark.createDataFrame([(0, v) for v in values], "_batch_id long, raw binary")
    messages = frame.select("_batch_id", F.col("raw").cast("string").alias("value"))
    return _ledger_outcome(
        ledger_increment(normalize_debezium(messages, TARGET), None, SOURCE, "m"),
        len(values),
        written,
    )


# --- schema drift landing ----------------------------------------------------------------------

CLICK = {"event_type": "click", "x": 1}
JSON_CASES = [
    Case("json", "binary garbage", lines(CLICK, b"\x00\xff\x89PNG"), reasons={"invalid_utf8": 1}),
    Case("json", "empty file", b"", rows_in=0),
    Case(
        "json",
        "trailing garbage",
        lines(CLICK, json.dumps(CLICK) + "garbage"),
        reasons={"malformed_json": 1},
    ),
    Case("json", "not an object", lines(CLICK, "[1]", "42"), reasons={"not_an_object": 2}),
    Case(
        "json",
        "missing event type",
        lines(CLICK, {"x": 1}, {"event_type": ""}, {"event_type": 3}),
        reasons={"missing_event_type": 3},
    ),
    Case(
        "json",
        "duplicate keys",
        lines(CLICK, '{"event_type": "click", "x": 1, "x": 2}'),
        reasons={"malformed_json": 1},
    ),
    Case(
        "json",
        "type conflict",
        lines(CLICK, {"event_type": "click", "x": {"y": 1}}),
        reasons={"type_conflict:$.x:struct<y:bigint>->bigint": 1},
    ),
    Case("json", "overflow number", lines(CLICK, {"event_type": "big", "n": 10**30})),
    Case(
        "json",
        "deep nesting 500",
        lines(CLICK, '{"event_type": "deep", "a": ' + deep(499) + "}"),
        reasons={"too_deep:500>32": 1},
    ),
    Case(
        "json",
        "deep nesting 5000",
        lines(CLICK, '{"event_type": "deep", "a": ' + deep(4999) + "}"),
        reasons={"malformed_json": 1},
    ),
    Case("json", "10 MB line", lines(CLICK, {"event_type": "big", "blob": TEN_MB})),
    Case(
        "json",
        "keys with dots, dashes, unicode",
        lines(CLICK, {"event_type": "odd", "a.b": 1, "c d": 2, "名前": "x"}),
    ),
    Case(
        "json",
        "empty key name",
        lines(CLICK, {"event_type": "odd", "": 1}),
        reasons={"invalid_name:$.": 1},
    ),
    Case(
        "json",
        "case-colliding names",
        lines(CLICK, {"event_type": "odd", "a": 1, "A": 2}),
        reasons={"name_collision:$.A:$.a": 1},
    ),
    Case(
        "json",
        "non-UTF-8 bytes",
        lines(CLICK, b'{"event_type": "click", "x": "caf\xe9"}'),
        reasons={"invalid_utf8": 1},
    ),
]


def _run_json(spark, case: Case, folder: Path, written) -> Outcome:
    batch = folder / "batch_0001"
    batch.mkdir()
    (batch / "part-00000.jsonl").write_bytes(case.data)
    raw = spark.read.text(str(batch)).select(
        F.col("value").alias("payload"),
        F.col("_metadata.file_path").alias("source_file"),
        F.lit("batch_0001").alias("batch_id"),
        F.col("_metadata.file_modification_time").alias("file_modified_at"),
    )
    bronze = bronze_increment(raw, None, "matrix").localCheckpoint()
    registry = registry_increment(spark, bronze, None, "matrix", METADATA_COLUMNS).localCheckpoint()
    conflicts = registry.where("status = 'conflict'").select(
        "event_type", "variation_hash", "conflict_reason"
    )
    events = bronze.join(conflicts, ["event_type", "variation_hash"], "left")
    reasons = Counter(
        r.parse_error or r.conflict_reason
        for r in events.collect()
        if r.parse_error or r.conflict_reason
    )
    lines_in = [line for line in case.data.split(b"\n") if line != b""]
    bronze_table = written(bronze, "bronze")
    outcome = Outcome(reasons=reasons, rows_in=len(lines_in))
    outcome.quarantined = sum(reasons.values())
    assert bronze_table.count() == len(lines_in)  # bronze keeps every line
    # Every accepted event type is written to a silver table of its own; applied = the rows
    # those written tables hold.
    accepted = registry.where("status = 'accepted'")
    from spark_cdc.schema_drift.inference import schema_from_json

    for number, row in enumerate(
        accepted.groupBy("event_type")
        .agg(F.max_by("superset_schema", "schema_version").alias("s"))
        .collect()
    ):
        rows = bronze.join(
            accepted.select("event_type", "variation_hash", "schema_version"),
            ["event_type", "variation_hash"],
        ).where(F.col("event_type") == row.event_type)
        silver = parse_events(rows, schema_from_json(row.s))
        outcome.applied += written(silver, f"silver_{number}", column_mapping=True).count()
    return outcome


# --- initial rows ---------------------------------------------------------------------------------

INITIAL_CASES = [
    Case(
        "initial",
        "binary garbage",
        lines(
            {
                "id": 1,
                "name": "a",
                "amount": 1,
                "created_at": "2026-01-01 00:00:00",
                "updated_at": "2026-01-01 00:00:00",
            },
            b"\x00\xff",
        ),
        error="malformed_json",
    ),
    Case("initial", "null key", lines({"id": None, "name": "a"}), error="null_key:id"),
    Case(
        "initial",
        "unparseable number",
        lines({"id": 1, "amount": "lots"}),
        error="cast_failed:amount",
    ),
    Case(
        "initial",
        "unparseable timestamp",
        lines({"id": 1, "created_at": "monday"}),
        error="invalid_created_at",
    ),
    Case("initial", "overflow", lines({"id": 2**40}), error="cast_failed:id"),
]


def _run_initial(spark, case: Case, folder: Path) -> Outcome:
    path = folder / "initial_state.jsonl"
    path.write_bytes(case.data)
    table = "matrix.initial_rows"
    spark.sql(f"drop table if exists {table}")
    spark.sql("create schema if not exists matrix")
    spark.sql(f"create table {table} (id int) using delta")
    spark.sql(f"insert into {table} values (42)")
    try:
        land_initial_rows(spark, table, path, TARGET)
    except InitialRowsError as error:
        assert [r.id for r in spark.table(table).collect()] == [42]  # the old rows are kept
        return Outcome(error=str(error))
    return Outcome(rows_in=spark.table(table).count())


# --- the matrix -----------------------------------------------------------------------------------

CASES = [
    *HASH_CASES, *LANDING_CASES, *FEED_CASES, *SEQUENCE_CASES, *DEBEZIUM_CASES, *JSON_CASES,
    *INITIAL_CASES,
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(spark, case: Case, tmp_path, hash_previous, written):
    runners: dict[str, Callable[[], Outcome]] = {
        "csv": lambda: _run_hash(spark, case, tmp_path, hash_previous, written),
        "parquet": lambda: _run_hash(spark, case, tmp_path, hash_previous, written),
        "landing": lambda: _run_landing(spark, case, tmp_path, written),
        "feed": lambda: _run_feed(spark, case, written),
        "sequence": lambda: _run_sequence(spark, case, written),
        "debezium": lambda: _run_debezium(spark, case, written),
        "json": lambda: _run_json(spark, case, tmp_path, written),
        "initial": lambda: _run_initial(spark, case, tmp_path),
    }
    outcome = runners[case.entry]()
    if case.error is not None:
        assert outcome.error is not None and case.error in outcome.error, outcome.error
        return
    assert outcome.error is None, outcome.error
    assert dict(outcome.reasons) == case.reasons
    if case.rows_in is not None:
        assert outcome.rows_in == case.rows_in
    # Counts reconcile: in = applied + quarantined + duplicates + skipped.
    assert outcome.rows_in == (
        outcome.applied + outcome.quarantined + outcome.duplicates + outcome.skipped
    )
    assert outcome.skipped == case.skipped
    assert outcome.quarantined == sum(case.reasons.values()) - case.skipped
    # Nothing that was there before is lost.
    assert outcome.lost == []


# --- snapshot sources and vars, through dbt ----------------------------------------------------

SNAPSHOT_YML = """
sources:
  - name: matrix
    schema: matrix
    tables:
      - name: snapshot_source
snapshots:
  - name: matrix_snapshot
    relation: source('matrix', 'snapshot_source')
    config:
      unique_key: id
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: invalidate
      snapshot_optimize_every: "{{ var('matrix_optimize_every', 10) }}"
"""
SOURCE_SQL = "select * from values {rows} as t(id, name, updated_at) where {where}"
DAY_ONE = "(1, 'a', timestamp'2026-01-01 00:00:00'), (2, 'b', timestamp'2026-01-01 00:00:00')"

# (case, source rows and filter, the snapshot's vars, words of the error). Every kind of bad
# high end date and its error: test_snapshot_macros.py (the macro rendered without a run).
SNAPSHOT_CASES = [
    (
        "duplicate keys",
        {"rows": DAY_ONE + ", (1, 'c', timestamp'2026-01-02 00:00:00')"},
        {},
        "duplicate unique_key values",
    ),
    (
        # both copies as the table already has them: no change to take, still refused
        "duplicate unchanged row",
        {"rows": DAY_ONE + ", (1, 'a', timestamp'2026-01-01 00:00:00')"},
        {},
        "duplicate unique_key values",
    ),
    (
        "null key",
        {"rows": DAY_ONE + ", (null, 'c', timestamp'2026-01-02 00:00:00')"},
        {},
        "NULL or duplicate unique_key values",
    ),
    (
        "empty source",
        {"rows": DAY_ONE, "where": "false"},
        {},
        "the snapshot query returned no rows",
    ),
    (
        "updated_at as text",
        {"rows": "(1, 'a', 'someday'), (2, 'b', '2026-01-01 00:00:00')"},
        {},
        "is of type string; the timestamp strategy needs a date or timestamp",
    ),
    (
        # a day with a change: the setting is refused before the MERGE, not after it
        "maintenance setting not a count",
        {"rows": "(1, 'a', timestamp'2026-01-01 00:00:00'), (2, 'b2', timestamp'2026-01-02')"},
        {"matrix_optimize_every": "weekly"},
        "snapshot_optimize_every must be a whole number",
    ),
    (
        "high end date not a date",
        {"rows": DAY_ONE},
        {"default_high_dttm": "not-a-date"},
        "var default_high_dttm must be",
    ),
]


def _snapshot_source(spark, rows: str, where: str = "true") -> None:
    """The snapshot's source table holds exactly these rows (a table, not a var of the run: dbt
    parses the project again whenever its vars change)."""
    spark.sql("create schema if not exists matrix")
    query = SOURCE_SQL.format(rows=rows, where=where)
    spark.sql(f"create or replace table matrix.snapshot_source using delta as {query}")


@pytest.fixture(scope="module")
def snapshot_project(spark, tmp_path_factory):
    project = copy_project(tmp_path_factory.mktemp("matrix_snapshot") / "spark_cdc")
    (project / "snapshots" / "matrix_snapshot.yml").write_text(SNAPSHOT_YML)
    dbt = dbt_invoker(project)
    spark.sql(f"drop table if exists {MODULE_SCHEMA}.matrix_snapshot")
    _snapshot_source(spark, DAY_ONE)
    dbt("snapshot", "--select", "matrix_snapshot")
    return dbt


@pytest.mark.parametrize(
    ("name", "source", "variables", "error"),
    SNAPSHOT_CASES,
    ids=[c[0] for c in SNAPSHOT_CASES],
)
def test_bad_snapshot_input(spark, snapshot_project, name, source, variables, error):
    table = f"{MODULE_SCHEMA}.matrix_snapshot"
    before = (latest_version(spark, table), sorted(map(tuple, spark.table(table).collect())))
    _snapshot_source(spark, **source)
    options = ["--vars", json.dumps(variables)] if variables else []
    result = snapshot_project(
        "snapshot", "--select", "matrix_snapshot", *options, expect_success=False
    )
    assert not result.success
    assert error in messages(result) + str(result.exception)
    # Nothing written: same version, same rows (every open row still open).
    assert (
        latest_version(spark, table),
        sorted(map(tuple, spark.table(table).collect())),
    ) == before
