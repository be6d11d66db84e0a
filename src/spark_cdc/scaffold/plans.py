"""The files ``spark-cdc add`` writes for each kind of source: path (relative to the dbt
project) -> text, rendered from the templates with the validated settings."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field

from spark_cdc.scaffold.names import AddError, refuse_reserved, source_name
from spark_cdc.scaffold.render import render
from spark_cdc.schema_drift.event_groups import GroupingError, parse_grouping

# Columns the change-event tables add to a source's own (besides resolve.VERSION_COLUMNS).
CHANGE_EVENT_TABLE_COLUMNS = ("event_position", "updated_at", "last_change_type", "row_hash")
HASH_CDC_RESERVED = (
    "key_hash",
    "nonkey_hash",
    "operation",
    "eff_start_date",
    "eff_date",
    "raw_record",
    "quarantine_reason",
    "supplied_on",
)
FEED_COLUMNS = (
    ("change_type", "insert, update or delete (case-insensitive)."),
    ("event_ts", "When the change happened at the source (UTC, zone-less)."),
    ("event_seq", "Tie-breaker within one event_ts (an LSN); null counts as 0."),
    ("column_names", "Names of the full row image."),
    ("column_values", "Values of the image as text."),
    ("old_key_names", "Names of the key before the change."),
    ("old_key_values", "Values of the key before the change, as text."),
    ("_landing_error", "Why the line could not be read as an event (NULL when it could)."),
    ("_raw_record", "The line as delivered, kept when it could not be read."),
)
LEDGER_COLUMNS = (
    ("_batch_id", "Ingestion order of the batch that delivered the event."),
    ("_ingested_at", "When the batch was landed (UTC)."),
    ("_source_file", "The batch file the event was read from."),
    ("change_kind", "The change type, trimmed and lower-cased."),
    (
        "event_fingerprint",
        "SHA-256 of the event's canonical text: equal for exact duplicates, the last tie-breaker.",
    ),
    ("image", "The image's target columns cast to their types (null for a delete)."),
    ("old_key", "The key before the change, typed (null for an insert)."),
    ("quarantine_reason", "Why the event is not applied (NULL when it is)."),
    ("status", "applied, duplicate or quarantined."),
    ("watermark", "The batch's watermark (latest event_ts of earlier batches - lateness)."),
    ("process_id", "dbt invocation_id of the run that took the event in."),
)
VERSION_COLUMNS = (
    (
        "created_at",
        "When the row was first created (followed across key changes); null on a deleted version.",
    ),
    ("valid_from", "event_ts of the action that set the version."),
    (
        "valid_to",
        (
            "valid_from of the key's next version (the high end date for the current one); "
            "equal to valid_from (a zero-length version) when the key's next action has the "
            "same event_ts."
        ),
    ),
    ("change_type", "insert, update or delete: the action of the version."),
    (
        "is_deleted",
        "The version is a delete (no row at the key): its data columns and created_at are null.",
    ),
    ("is_current", "The key's latest version."),
    ("event_seq", "event_seq of the event (null for an initial row)."),
    ("event_fingerprint", "Fingerprint of the event (null for an initial row)."),
    (
        "version_id",
        "The event's fingerprint (with ':out' for the old key of a key-changing update), or "
        "'initial' for an existing row.",
    ),
    (
        "is_ambiguous",
        "Another event at the same position (event_position, event_ts, event_seq) touched this "
        "key: the order between them fell back to the fingerprint (the source's tests fail on "
        "it unless the source accepts an ambiguous order).",
    ),
    ("process_id", "dbt invocation_id of the run that last wrote the version."),
    ("row_hash", "MD5 over the version's content (all columns but process_id)."),
)


CHANGED_AT_COLUMN = (
    "changed_at",
    "event_ts of the version's latest change: a change of untracked columns only updates the "
    "version in place (its valid_from stays that of the change that opened it).",
)


def _version_columns(source: ChangeEventSource) -> tuple:
    """The history's own columns: a Debezium source's versions keep their event's position, as
    do those of a source ordered by its own columns; a source with tracked columns keeps each
    version's latest change."""
    columns = VERSION_COLUMNS + ((CHANGED_AT_COLUMN,) if source.tracked else ())
    if not source.debezium and not source.sequence_by:
        return columns
    at = [name for name, _ in columns].index("event_seq") + 1
    return (*columns[:at], POSITION_COLUMN, *columns[at:])


def column_doc(name: str, kind: str) -> str:
    """A column's description: what the source calls it, and its type."""
    return f"Source column {name} ({kind})."


def _inline(columns: dict[str, str]) -> str:
    """``name: type`` pairs of a YAML flow mapping, each side double-quoted: a type such as
    ``decimal(12,2)`` or ``map<string,int>`` holds commas that an unquoted flow scalar ends at."""
    return ", ".join(f"{_quoted(name)}: {_quoted(kind)}" for name, kind in columns.items())


def _flow_list(names: list[str]) -> str:
    """A YAML flow sequence of double-quoted names."""
    return "[" + ", ".join(_quoted(name) for name in names) + "]"


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # JSON's string syntax is YAML's


def _command(words: list[str]) -> str:
    return "spark-cdc add " + " ".join(shlex.quote(word) for word in words)


@dataclass(frozen=True)
class ChangeEventSource:
    """What ``spark-cdc add change-events`` is given."""

    name: str
    keys: list[str]
    columns: dict[str, str]
    debezium: bool = False
    initial_rows: bool = False
    allowed_lateness: str = "none"
    evolve_columns: bool = False
    landing_schema: str = "landing"
    accept_ambiguous_order: bool = False
    ignore_null_updates: bool = False
    except_columns: tuple[str, ...] = ()
    sequence_by: tuple[str, ...] = ()
    # 1: the current table only, no history (AUTO CDC's stored_as_scd_type)
    stored_as_scd_type: int = 2
    # the columns whose change opens a history version, or those whose change does not (the
    # others' changes update the open version in place); None: every change is a version
    track_history: tuple[str, ...] | None = None
    track_history_except: tuple[str, ...] | None = None

    def command(self) -> str:
        words = ["change-events", self.name]
        words += [f"--key={key}" for key in self.keys]
        words += [f"--column={name}:{kind}" for name, kind in self.columns.items()]
        if self.debezium:
            words.append("--debezium")
        if self.initial_rows:
            words.append("--initial-rows")
        if self.allowed_lateness != "none":
            words.append(f"--allowed-lateness={self.allowed_lateness}")
        if self.evolve_columns:
            words.append("--evolve-columns")
        if self.landing_schema != "landing":
            words.append(f"--landing-schema={self.landing_schema}")
        if self.accept_ambiguous_order:
            words.append("--accept-ambiguous-order")
        if self.ignore_null_updates:
            words.append("--ignore-null-updates")
        words += [f"--except-column={name}" for name in self.except_columns]
        words += [f"--sequence-by={name}" for name in self.sequence_by]
        if self.stored_as_scd_type != 2:
            words.append(f"--stored-as-scd-type={self.stored_as_scd_type}")
        words += [f"--track-history={name}" for name in self.track_history or ()]
        words += [f"--track-history-except={name}" for name in self.track_history_except or ()]
        return _command(words)

    @property
    def tracked(self) -> bool:
        """Whether the history keeps versions for changes of some columns only."""
        return self.track_history is not None or self.track_history_except is not None


POSITION_COLUMN = (
    "event_position",
    "The connector's own position of the change (its family's parts, e.g. a binlog file's "
    "index, pos and row), compared part by part: it orders a key's changes before event_ts.",
)
# What the ledger of a Debezium source adds to the feed's columns (change_events.debezium).
SEQUENCE_POSITION_COLUMN = (
    "event_position",
    "The event's sequence_by columns' values, compared part by part: they order a key's "
    "changes before event_ts.",
)
DEBEZIUM_LEDGER_COLUMNS = (
    POSITION_COLUMN,
    (
        "unchanged_columns",
        "Columns whose value the connector did not send (an unchanged TOASTed value): the "
        "event keeps their previous values.",
    ),
    (
        "_landing_error",
        "Why a value of the message did not decode (undecodable:<column>:<how>; NULL when "
        "every value did).",
    ),
)


def change_event_files(source: ChangeEventSource) -> dict[str, str]:
    """The files of a change-event source."""
    from spark_cdc.change_events.config import parse_lateness

    s = source_name(source.name, "change-event source")
    source_name(source.landing_schema, "landing schema")
    if not source.columns:
        raise AddError("give the source's columns: --column name:type (repeat)")
    missing = [key for key in source.keys if key not in source.columns]
    if not source.keys or missing:
        raise AddError(f"every --key must be one of the --column names (not: {missing or '-'})")
    if source.debezium and source.initial_rows:
        raise AddError(
            "--initial-rows is for the events input (a Debezium feed starts with its "
            "snapshot reads)"
        )
    from spark_cdc.change_events.resolve import VERSION_COLUMNS as RESOLVED

    tracking = ("changed_at", "_is_deleted") if source.tracked else ()
    reserved = (*RESOLVED, *CHANGE_EVENT_TABLE_COLUMNS, *tracking)
    refuse_reserved(source.columns, reserved, "change-event source")
    parse_lateness(source.allowed_lateness)
    _check_tracking(source)
    key_tests = "[unique, not_null]" if len(source.keys) == 1 else "[not_null]"
    staged = (
        ["value", "_batch_id", "_ingested_at", "_source_file"]
        if source.debezium
        else [name for name, _ in FEED_COLUMNS[:7]]
        + ["_batch_id", "_ingested_at", "_source_file", "_landing_error", "_raw_record"]
        + list(source.sequence_by)
    )
    ledger_columns = [
        *FEED_COLUMNS[:7],
        *LEDGER_COLUMNS[:3],
        *(DEBEZIUM_LEDGER_COLUMNS if source.debezium else FEED_COLUMNS[7:8]),
        *([SEQUENCE_POSITION_COLUMN] if source.sequence_by else []),
        *((name, "A sequence_by column, as landed.") for name in source.sequence_by),
        ("_raw_record", "The message as delivered." if source.debezium else FEED_COLUMNS[8][1]),
        *LEDGER_COLUMNS[3:],
    ]
    values = {
        "s": s,
        "command": source.command(),
        "schema": source.landing_schema,
        "debezium": source.debezium,
        "initial_rows": source.initial_rows,
        "columns": source.columns,
        "columns_inline": _inline(source.columns),
        "keys": source.keys,
        "keys_flow": _flow_list(source.keys),
        "key_tests": key_tests,
        "allowed_lateness": source.allowed_lateness,
        "evolve_columns": source.evolve_columns,
        "ignore_null_updates": source.ignore_null_updates,
        "current_only": source.stored_as_scd_type == 1,
        "tracked": source.tracked,
        "track_history_flow": _flow_list(list(source.track_history or ())),
        "track_history_except_flow": _flow_list(list(source.track_history_except or ())),
        "except_columns_flow": _flow_list(source.except_columns),
        "sequence_by": source.sequence_by,
        "sequence_by_flow": _flow_list(source.sequence_by),
        "feed_columns": FEED_COLUMNS,
        "ledger_columns": ledger_columns,
        "version_columns": _version_columns(source),
        "accept_ambiguous_order": source.accept_ambiguous_order,
        "staged_columns": staged,
        "column_doc": column_doc,
        "history_key": repr([*source.keys, "version_id"]).replace("'", '"'),
        "current_key": repr(source.keys).replace("'", '"')
        if len(source.keys) > 1
        else f'"{source.keys[0]}"',
    }
    staging, intermediate, marts = (
        f"{layer}/change_events" for layer in ("staging", "intermediate", "marts")
    )
    files = {
        f"{staging}/_change_events__{s}.yml": "change_events/source.yml.j2",
        f"{staging}/stg_change_events__{s}.sql": "change_events/staging.sql.j2",
    }
    if source.initial_rows:
        files[f"{staging}/stg_change_events__{s}_initial.sql"] = "change_events/initial.sql.j2"
    files |= {
        f"{intermediate}/int_change_events__{s}_ledger.py": "change_events/ledger.py.j2",
        f"{marts}/change_events__{s}_current.py": "change_events/current.py.j2",
        f"{marts}/change_events__{s}_quarantine.sql": "change_events/quarantine.sql.j2",
        f"{marts}/change_events__{s}_run_summary.sql": "change_events/run_summary.sql.j2",
    }
    if source.stored_as_scd_type != 1:
        files[f"{marts}/change_events__{s}_history.py"] = "change_events/history.py.j2"
    return {path: render(template, **values) for path, template in files.items()}


def _check_tracking(source: ChangeEventSource) -> None:
    """The tracked column lists as the source's settings would refuse them."""
    from spark_cdc.change_events.config import SourceConfig
    from spark_cdc.change_events.model import ChangeEventConfigError, TargetSchema

    try:
        SourceConfig(
            source.name,
            TargetSchema(source.columns, tuple(source.keys)),
            stored_as_scd_type=source.stored_as_scd_type,
            track_history=source.track_history,
            track_history_except=source.track_history_except,
        )
    except ChangeEventConfigError as error:
        raise AddError(
            str(error).replace("track_history lists", "--track-history columns")
        ) from error


DEFAULT_HASH_LANDING_ROOT = (
    "{{ var('hash_cdc_landing_root', env_var('SPARK_CDC_HOME', '.spark_cdc') ~ '/landing') }}"
)


@dataclass(frozen=True)
class HashCdcDataset:
    """What ``spark-cdc add hash-cdc`` is given."""

    name: str
    keys: dict[str, str]
    nonkeys: dict[str, str]
    sensitive: dict[str, str] = field(default_factory=dict)
    mode: str = "full"
    file_format: str = "csv"
    max_delete_fraction: float = 0.5
    landing_root: str | None = None
    operation_column: str | None = None
    delete_values: tuple[str, ...] = ()
    upsert_values: tuple[str, ...] = ()

    def command(self) -> str:
        words = ["hash-cdc", self.name]
        words += [f"--key={name}:{kind}" for name, kind in self.keys.items()]
        words += [f"--nonkey={name}:{kind}" for name, kind in self.nonkeys.items()]
        words += [f"--sensitive={name}:{kind}" for name, kind in self.sensitive.items()]
        if self.mode != "full":
            words.append(f"--mode={self.mode}")
        if self.file_format != "csv":
            words.append(f"--format={self.file_format}")
        if self.max_delete_fraction != 0.5:
            words.append(f"--max-delete-fraction={self.max_delete_fraction}")
        if self.landing_root:
            words.append(f"--landing-root={self.landing_root}")
        if self.operation_column:
            words.append(f"--operation-column={self.operation_column}")
        words += [f"--delete-value={value}" for value in self.delete_values]
        words += [f"--upsert-value={value}" for value in self.upsert_values]
        return _command(words)


def hash_cdc_files(dataset: HashCdcDataset) -> dict[str, str]:
    """The files of a hash-CDC dataset."""
    from spark_cdc.hash_cdc.config import ConfigError, DatasetConfig

    d = source_name(dataset.name, "hash-CDC dataset")
    if not dataset.keys:
        raise AddError("give the dataset's key: --key name:type (repeat for a composite key)")
    everything = {**dataset.keys, **dataset.nonkeys, **dataset.sensitive}
    refuse_reserved(everything, HASH_CDC_RESERVED, "hash-CDC dataset")
    try:
        DatasetConfig.from_mapping(
            d,
            {
                "key_columns": dataset.keys,
                "nonkey_columns": dataset.nonkeys,
                "sensitive_columns": dataset.sensitive,
                "extract_mode": dataset.mode,
                "extract_format": dataset.file_format,
                "max_delete_fraction": dataset.max_delete_fraction,
                "operation_column": dataset.operation_column,
                "delete_values": list(dataset.delete_values) or None,
                "upsert_values": list(dataset.upsert_values) or None,
            },
        )
    except ConfigError as error:
        raise AddError(str(error)) from None
    values = {
        "d": d,
        "command": dataset.command(),
        "mode": dataset.mode,
        "file_format": dataset.file_format,
        "max_delete_fraction": dataset.max_delete_fraction,
        "operation_column": dataset.operation_column,
        "delete_values": list(dataset.delete_values or ("D",)),
        "upsert_values": list(dataset.upsert_values or ("I", "U")),
        "keys": dataset.keys,
        "nonkeys": dataset.nonkeys,
        "sensitive": dataset.sensitive,
        "all_columns": everything
        | ({dataset.operation_column: "string"} if dataset.operation_column else {}),
        "stored_columns": {**dataset.keys, **dataset.nonkeys},
        "landing_root": dataset.landing_root or DEFAULT_HASH_LANDING_ROOT,
        "inline": _inline,
        "column_doc": column_doc,
    }
    staging, marts = "staging/hash_cdc", "marts/hash_cdc"
    files = {
        f"{staging}/_hash_cdc__{d}.yml": "hash_cdc/dataset.yml.j2",
        f"{staging}/stg_hash_cdc__{d}.py": "hash_cdc/staging.py.j2",
        f"{marts}/hash_cdc__{d}_current.py": "hash_cdc/current.py.j2",
        f"{marts}/hash_cdc__{d}_history.sql": "hash_cdc/history.sql.j2",
        f"{marts}/hash_cdc__{d}_quarantine.sql": "hash_cdc/quarantine.sql.j2",
        f"{marts}/hash_cdc__{d}_run_summary.sql": "hash_cdc/run_summary.sql.j2",
    }
    if dataset.sensitive:
        files[f"{marts}/hash_cdc__{d}_sensitive.py"] = "hash_cdc/sensitive.py.j2"
    return {path: render(template, **values) for path, template in files.items()}


@dataclass(frozen=True)
class JsonFeed:
    """What ``spark-cdc add schema-drift`` is given."""

    name: str
    landing_schema: str = "landing"
    landing_root: str | None = None
    owner: str = "data platform"
    # (group, selectors) in order: the feed's event groups (none: one stream for its silver).
    event_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def command(self) -> str:
        words = ["schema-drift", self.name]
        if self.landing_schema != "landing":
            words.append(f"--landing-schema={self.landing_schema}")
        if self.landing_root:
            words.append(f"--landing-root={self.landing_root}")
        if self.owner != "data platform":
            words.append(f"--owner={self.owner}")
        for group, selectors in self.event_groups:
            words.append(f"--event-group={group}={','.join(selectors)}")
        return _command(words)


def event_groups_option(values: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``--event-group NAME=SELECTOR[,SELECTOR...]`` options as (group, selectors), checked as
    a grouping (:func:`spark_cdc.schema_drift.event_groups.parse_grouping`)."""
    groups: dict[str, tuple[str, ...]] = {}
    for value in values:
        name, equals, selectors = value.partition("=")
        if not equals or not selectors.strip():
            raise AddError(f"--event-group must read NAME=SELECTOR[,SELECTOR...], not {value!r}")
        if name in groups:
            raise AddError(f"event group {name!r} given twice")
        groups[name] = tuple(part.strip() for part in selectors.split(","))
    try:
        parse_grouping(groups)
    except GroupingError as error:
        raise AddError(str(error)) from error
    return tuple(groups.items())


def schema_drift_files(feed: JsonFeed) -> dict[str, str]:
    """The files of a JSON feed."""
    f = source_name(feed.name, "JSON feed")
    source_name(feed.landing_schema, "landing schema")
    root = feed.landing_root or (
        "{{ var('schema_drift_landing_roots', {}).get('" + f + "', "
        "env_var('SPARK_CDC_HOME', '.spark_cdc') ~ '/landing/schema_drift/" + f + "') }}"
    )
    values = {
        "f": f,
        "command": feed.command(),
        "schema": feed.landing_schema,
        "landing_root": root,
        "silver_prefix": f"schema_drift_silver__{f}__",
        "owner": feed.owner,
        "event_groups": [(name, list(selectors)) for name, selectors in feed.event_groups],
    }
    staging, intermediate, marts = (
        f"{layer}/schema_drift" for layer in ("staging", "intermediate", "marts")
    )
    files = {
        f"{staging}/_schema_drift__{f}.yml": "schema_drift/feed.yml.j2",
        f"{staging}/stg_schema_drift__{f}.sql": "schema_drift/staging.sql.j2",
        f"{intermediate}/int_schema_drift__{f}_bronze.py": "schema_drift/bronze.py.j2",
        f"{marts}/schema_drift__{f}_registry.py": "schema_drift/registry.py.j2",
        f"{marts}/schema_drift__{f}_silver_loads.py": "schema_drift/silver_loads.py.j2",
        f"{marts}/schema_drift__{f}_quarantine.sql": "schema_drift/quarantine.sql.j2",
        f"{marts}/schema_drift__{f}_run_summary.sql": "schema_drift/run_summary.sql.j2",
    }
    return {path: render(template, **values) for path, template in files.items()}
