"""A team's own dbt project adopts spark_cdc: it installs the package, runs `spark-cdc add` for
two change-event sources (one of Debezium messages with a composite key), two hash-CDC datasets
and a JSON feed, lands generated data and runs `dbt build` twice with threads: 4. Every table is
checked against the plain-Python references; no source sees another's settings or data; none
of the demo's nodes is in its graph."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from support import PROJECT_DIR

from spark_cdc.change_events.reference import resolve_reference
from spark_cdc.cli.dbt_invoke import run_dbt
from spark_cdc.cli.main import main as spark_cdc
from spark_cdc.generators.change_events import SCHEMA as EVENTS_SCHEMA
from spark_cdc.generators.change_events import StreamSpec, generate_stream, write_stream
from spark_cdc.generators.debezium import SCHEMA as DEBEZIUM_SCHEMA
from spark_cdc.generators.debezium import DebeziumSpec, expected, write_debezium_stream
from spark_cdc.generators.extracts import ExtractSpec, generate_extracts
from spark_cdc.generators.json_events import JsonEventSpec, generate_batches, write_batches
from spark_cdc.hash_cdc.config import DatasetConfig
from spark_cdc.hash_cdc.reference import reference_apply
from spark_cdc.schema_drift.silver import table_suffix

SCHEMA = "team_lake"
LANDING = "team_landing"
DATES = ("2024-03-01", "2024-03-02")
ADDS = [
    [
        "change-events", "accounts", "--key=region", "--key=account_no",
        "--column=region:string", "--column=account_no:bigint", "--column=owner:string",
        "--column=balance:decimal(12,2)", "--debezium", f"--landing-schema={LANDING}",
    ],
    [
        "change-events", "balances", "--key=id", "--column=id:int", "--column=name:string",
        "--column=amount:int", "--initial-rows", f"--landing-schema={LANDING}",
    ],
    # the same events, current only (no history)
    [
        "change-events", "balances_now", "--key=id", "--column=id:int", "--column=name:string",
        "--column=amount:int", "--initial-rows", f"--landing-schema={LANDING}",
        "--stored-as-scd-type=1",
    ],
    # the same events, a new version only when a row starts a life (the generator's updates
    # change every column: no column tracked)
    [
        "change-events", "balances_tracked", "--key=id", "--column=id:int",
        "--column=name:string", "--column=amount:int", "--initial-rows",
        f"--landing-schema={LANDING}", "--track-history-except=name",
        "--track-history-except=amount",
    ],
    [
        "hash-cdc", "products", "--key=key_1:string", "--key=key_2:string",
        "--nonkey=attr_1:bigint", "--nonkey=attr_2:bigint", "--nonkey=attr_3:bigint",
        "--mode=delta", "--format=parquet",
    ],
    [
        "hash-cdc", "stock", "--key=key_1:string", "--key=key_2:string", "--key=key_3:string",
        "--nonkey=attr_1:bigint", "--nonkey=attr_2:bigint", "--max-delete-fraction=0.9",
    ],
    ["schema-drift", "clicks", f"--landing-schema={LANDING}"],
]  # fmt: skip
DATASETS = {
    "products": ExtractSpec(2_000, 2_000, 2, 3, 0.1, 0.3, 0.6, (), file_format="parquet", seed=5),
    "stock": ExtractSpec(1_500, 1_500, 3, 2, 0.2, 0.3, 0.5, (), seed=6),
}
DEBEZIUM = DebeziumSpec(accounts=150, events=1_500, batches=4, seed=21)
EVENTS = StreamSpec(initial_rows=200, events=2_000, batches=4, seed=22)
CLICKS = JsonEventSpec(events=3_000, event_types=4, new_event_types=1, batches=2, seed=23)


def _write_project(root: Path) -> Path:
    """A team's existing dbt project: its own model, spark_cdc as a package, its profile."""
    (root / "models").mkdir(parents=True)
    (root / "models" / "team_kpis.sql").write_text("select 1 as kpi\n")
    (root / "dbt_project.yml").write_text(
        "name: team_lake\nversion: '1.0.0'\nconfig-version: 2\nprofile: team_lake\n"
        "dispatch:\n  - macro_namespace: dbt\n"
        "    search_order: ['team_lake', 'spark_cdc', 'dbt']\n"
        "flags:\n  send_anonymous_usage_stats: false\n"
    )
    (root / "packages.yml").write_text(f"packages:\n  - local: {PROJECT_DIR}\n")
    (root / "profiles.yml").write_text(
        "team_lake:\n  target: dev\n  outputs:\n    dev:\n      type: sparkcdc\n"
        "      method: session\n      host: 'local[2]'\n"
        f"      schema: {SCHEMA}\n      threads: 4\n"
    )
    return root


def _dbt(project: Path, *args: str):
    return run_dbt(list(args), project_dir=project, profiles_dir=project)


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory) -> dict:
    """The project after two deliveries and two builds, and the generated inputs."""
    for schema in (SCHEMA, f"{SCHEMA}_restricted", LANDING):
        spark.sql(f"drop schema if exists {schema} cascade")
    root = tmp_path_factory.mktemp("team")
    project = _write_project(root / "team_lake")
    for words in ADDS:
        done = subprocess.run(
            [str(Path(sys.executable).parent / "spark-cdc"), "add", *words],
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    data = root / "data"
    write_debezium_stream(DEBEZIUM, data / "accounts")
    write_stream(EVENTS, data / "balances", show_progress=False)
    for name, spec in DATASETS.items():
        outputs = tuple(data / "extracts" / name / date for date in DATES)
        generate_extracts(ExtractSpec(**{**vars(spec), "outputs": outputs}), show_progress=False)
    write_batches(data / "generated_clicks", CLICKS)
    variables = json.dumps(
        {
            "hash_cdc_landing_root": str(data / "extracts"),
            "schema_drift_landing_roots": {"clicks": str(data / "clicks")},
        }
    )
    _dbt(project, "deps")
    runs = []
    for delivery, date in enumerate(DATES):
        part = "0:2" if delivery == 0 else "2:"
        accounts = [str(data / "accounts"), "--debezium", "--batches", part]
        assert (
            spark_cdc(
                ["land-change-events", *accounts, "--table", f"{LANDING}.accounts_change_events"]
            )
            == 0
        )
        for source in ("balances", "balances_now", "balances_tracked"):
            balances = [str(data / "balances"), "--batches", part]
            if delivery == 0:
                balances += ["--initial-table", f"{LANDING}.{source}_initial_rows"]
            table = f"{LANDING}.{source}_change_events"
            assert spark_cdc(["land-change-events", *balances, "--table", table]) == 0
        batch = f"batch_{delivery + 1:04d}"
        (data / "clicks").mkdir(exist_ok=True)
        (data / "generated_clicks" / batch).rename(data / "clicks" / batch)
        day = json.loads(variables) | {"hash_cdc_effective_date": date}
        result = _dbt(project, "build", "--vars", json.dumps(day))
        runs.append(result)
    return {"project": project, "data": data, "runs": runs}


def _state(spark, table: str, columns: tuple[str, ...]) -> set[tuple]:
    frame = spark.table(table).select(*columns, "created_at", "updated_at", "last_change_type")
    return {tuple(row) for row in frame.collect()}


def _expected_state(result, columns: tuple[str, ...]) -> set[tuple]:
    return {
        (*(row.values[c] for c in columns), row.created_at, row.updated_at, row.last_change_type)
        for row in result.state.values()
    }


def _versions(spark, table: str, keys: tuple[str, ...]) -> Counter:
    frame = spark.table(table).select(*keys, "valid_from", "is_deleted")
    return Counter((tuple(row[:-2]), row.valid_from, row.is_deleted) for row in frame.collect())


def _expected_versions(result) -> Counter:
    return Counter(
        (key, version.valid_from, version.is_deleted)
        for key, versions in result.history.items()
        for version in versions
    )


def test_change_event_sources_match_their_references(spark, lake):
    references = {
        "accounts": (DEBEZIUM_SCHEMA, expected(_debezium_batches())),
        "balances": (EVENTS_SCHEMA, generate_stream(EVENTS)[2]),
    }
    for source, (schema, result) in references.items():
        columns = tuple(schema.columns)
        current = f"{SCHEMA}.change_events__{source}_current"
        assert _state(spark, current, columns) == _expected_state(result, columns), source
        history = f"{SCHEMA}.change_events__{source}_history"
        assert _versions(spark, history, schema.keys) == _expected_versions(result), source
        quarantine = spark.table(f"{SCHEMA}.change_events__{source}_quarantine")
        reasons = Counter(row.quarantine_reason for row in quarantine.collect())
        assert reasons == Counter(reason for _, reason in result.quarantined), source
        summary = spark.table(f"{SCHEMA}.change_events__{source}_run_summary").collect()
        assert sum(r.applied for r in summary) == result.applied
        assert sum(r.duplicates for r in summary) == result.duplicates
        assert len(summary) == 2  # one row per build


def test_a_current_only_source_matches_the_reference_without_a_history(spark, lake):
    """``--stored-as-scd-type=1``: the current table holds the reference's state, built from
    the ledger alone; there is no history table; the run summary counts the events and leaves
    the version counts NULL."""
    result = generate_stream(EVENTS)[2]
    columns = tuple(EVENTS_SCHEMA.columns)
    current = f"{SCHEMA}.change_events__balances_now_current"
    assert _state(spark, current, columns) == _expected_state(result, columns)
    assert not spark.catalog.tableExists(f"{SCHEMA}.change_events__balances_now_history")
    summary = spark.table(f"{SCHEMA}.change_events__balances_now_run_summary").collect()
    assert len(summary) == 2 and sum(r.applied for r in summary) == result.applied
    assert {(r.versions_written, r.ambiguous_versions) for r in summary} == {(None, None)}


def test_a_source_with_tracked_columns_matches_the_reference(spark, lake):
    """``--track-history-except`` both columns: a version per life of a row; an update
    changes the open version in place (changed_at and the current row's updated_at move,
    valid_from stays)."""
    initial, batches, _ = generate_stream(EVENTS)
    events = [event for batch in batches for event in batch]
    result = resolve_reference(initial, events, EVENTS_SCHEMA, tracked=())
    columns = tuple(EVENTS_SCHEMA.columns)
    current = f"{SCHEMA}.change_events__balances_tracked_current"
    assert _state(spark, current, columns) == _expected_state(result, columns)
    history = spark.table(f"{SCHEMA}.change_events__balances_tracked_history")
    got = Counter(
        (r.id, r.valid_from, r.is_deleted, r.name, r.amount, None if r.is_deleted else r.changed_at)
        for r in history.collect()
    )
    want = Counter(
        (key[0], v.valid_from, v.is_deleted, *((v.values or {}).get(c) for c in ("name", "amount")),
         v.changed_at)
        for key, versions in result.history.items()
        for v in versions
    )  # fmt: skip
    assert got == want
    # fewer versions than the history of every change, as many events applied
    assert len(history.collect()) < spark.table(f"{SCHEMA}.change_events__balances_history").count()


def _debezium_batches() -> list[list[str]]:
    from spark_cdc.generators.debezium import generate_messages

    return generate_messages(DEBEZIUM)


def _extract_rows(folder: Path, file_format: str) -> list[dict]:
    rows = []
    for path in sorted(folder.glob(f"part-*.{file_format}")):
        table = pq.read_table(path) if file_format == "parquet" else pa_csv.read_csv(path)
        rows += table.to_pylist()
    return rows


def test_hash_cdc_datasets_match_their_references(spark, lake):
    for name, spec in DATASETS.items():
        keys = {f"key_{i}": "string" for i in range(1, spec.key_columns + 1)}
        nonkeys = {f"attr_{i}": "bigint" for i in range(1, spec.nonkey_columns + 1)}
        mode = "delta" if name == "products" else "full"
        config = DatasetConfig.from_mapping(
            name, {"key_columns": keys, "nonkey_columns": nonkeys, "extract_mode": mode}
        )
        state: dict = {}
        for date in DATES:
            folder = lake["data"] / "extracts" / name / date
            state = reference_apply(state, _extract_rows(folder, spec.file_format), config, date)
        expected_rows = {
            key: (row.operation, row.eff_start_date, *(row.payload[c] for c in nonkeys))
            for key, row in state.items()
        }
        frame = spark.table(f"{SCHEMA}.hash_cdc__{name}_current").select(
            *keys, "operation", "eff_start_date", *nonkeys
        )
        actual = {
            tuple(row[: len(keys)]): (row.operation, str(row.eff_start_date), *row[len(keys) + 2 :])
            for row in frame.collect()
        }
        assert actual == expected_rows, name
        assert {o for o, *_ in actual.values()} >= ({"X"} if mode == "delta" else {"D"})
        summary = spark.table(f"{SCHEMA}.hash_cdc__{name}_run_summary").orderBy("eff_date")
        assert [str(r.eff_date) for r in summary.collect()] == list(DATES)
        assert spark.table(f"{SCHEMA}.hash_cdc__{name}_quarantine").count() == 0


def test_the_json_feed_matches_its_lines(spark, lake):
    batches, manifest = generate_batches(CLICKS)
    per_type: Counter = Counter()
    for line in (line for batch in batches for line in batch):
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        per_type[event["event_type"]] += 1
    conflicting = sum(v for k, v in manifest["counts"].items() if k.startswith("conflict_"))
    bronze = spark.table(f"{SCHEMA}.int_schema_drift__clicks_bronze")
    assert bronze.count() == sum(manifest["events_per_batch"])
    assert bronze.where("parse_error = 'malformed_json'").count() == manifest["counts"]["malformed"]
    prefix = "schema_drift_silver__clicks__"
    tables = {t.name for t in spark.catalog.listTables(SCHEMA) if t.name.startswith(prefix)}
    assert tables == {prefix + table_suffix(event_type) for event_type in per_type}
    quarantine = spark.table(f"{SCHEMA}.schema_drift__clicks_quarantine")
    conflicts = Counter(
        row.event_type
        for row in quarantine.where("quarantine_reason like 'type_conflict%'").collect()
    )
    assert sum(conflicts.values()) <= conflicting
    for event_type, lines in per_type.items():
        silver = spark.table(f"{SCHEMA}.{prefix}{table_suffix(event_type)}").count()
        assert silver + conflicts[event_type] == lines, event_type
    assert quarantine.count() == manifest["counts"]["malformed"] + sum(conflicts.values())


def test_sources_of_one_kind_keep_to_their_own_settings_and_data(spark, lake):
    ledgers = {
        source: spark.table(f"{SCHEMA}.int_change_events__{source}_ledger")
        for source in ("accounts", "balances")
    }
    assert ledgers["accounts"].schema["image"].dataType.names == list(DEBEZIUM_SCHEMA.columns)
    assert ledgers["balances"].schema["image"].dataType.names == list(EVENTS_SCHEMA.columns)
    assert ledgers["accounts"].schema["old_key"].dataType.names == ["region", "account_no"]
    shapes = (("accounts", DEBEZIUM_SCHEMA), ("balances", EVENTS_SCHEMA))
    for source, schema in (*shapes, ("balances_now", EVENTS_SCHEMA)):
        columns = spark.table(f"{SCHEMA}.change_events__{source}_current").columns
        assert columns == [
            *schema.columns,
            "created_at",
            "updated_at",
            "last_change_type",
            "process_id",
        ]
    products = spark.table(f"{SCHEMA}.hash_cdc__products_current").columns
    stock = spark.table(f"{SCHEMA}.hash_cdc__stock_current").columns
    assert "key_3" in stock and "key_3" not in products and "attr_3" not in stock
    # Each built with four threads, nodes of different sources side by side.
    for result in lake["runs"]:
        threads = {r.thread_id for r in result.result.results}
        assert len(threads) == 4, threads


def test_only_the_teams_nodes_are_in_its_graph(lake):
    manifest = json.loads((lake["project"] / "target" / "manifest.json").read_text())
    packages = {n["package_name"] for n in manifest["nodes"].values()}
    packages |= {s["package_name"] for s in manifest["sources"].values()}
    assert packages == {"team_lake"}
    models = {n["name"] for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    assert "team_kpis" in models and "change_events__accounts_current" in models
    assert not {"change_events__customers_current", "hash_cdc__synthetic_current"} & models
