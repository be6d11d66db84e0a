"""Option helpers shared by the ``spark-cdc`` command groups."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from spark_cdc.core.kafka_records import KafkaSource
from spark_cdc.core.kafka_settings import KafkaSettingsError, read_properties, resolve_placeholders
from spark_cdc.dbt_models.settings import SettingsError


def spec_options(parser: argparse.ArgumentParser, defaults: object) -> None:
    """One ``--option`` per field of a generator spec dataclass, defaulting to its value."""
    for name, value in vars(defaults).items():
        option = f"--{name.replace('_', '-')}"
        if isinstance(value, bool):
            parser.add_argument(option, action=argparse.BooleanOptionalAction, default=value)
        else:
            parser.add_argument(option, type=type(value), default=value)


def spec_from(args: argparse.Namespace, spec_class: type) -> Any:
    """The generator spec of the parsed options."""
    return spec_class(**{name: getattr(args, name) for name in vars(spec_class())})


def text_table(columns: list[str], rows: list[tuple]) -> str:
    """Rows as an aligned text table (long values cut at 60 characters)."""

    def text(value: object) -> str:
        shown = "NULL" if value is None else str(value)
        return shown if len(shown) <= 60 else shown[:57] + "..."

    cells = [[text(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def add_kafka_options(parser: argparse.ArgumentParser, instead_of: str) -> None:
    """The options of a Kafka source read ``instead_of`` something else."""
    kafka = parser.add_argument_group(
        "a Kafka source",
        f"read the records of Kafka topics (each value one JSON line) instead of {instead_of}",
    )
    kafka.add_argument("--kafka-bootstrap-servers", metavar="HOST:PORT[,...]", default=None)
    kafka.add_argument("--kafka-topics", metavar="TOPIC[,...]", default=None)
    kafka.add_argument(
        "--kafka-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Kafka consumer setting (repeat), e.g. security.protocol=SASL_SSL; "
        "credentials go in --kafka-settings-file or ${env:NAME}",
    )
    kafka.add_argument(
        "--kafka-settings-file",
        metavar="PATH",
        default=None,
        help="Kafka consumer settings, NAME=VALUE a line (a Kafka client properties file); "
        "--kafka-setting overrides it; a value may read ${env:NAME} or ${file:PATH:KEY}",
    )
    kafka.add_argument(
        "--max-offsets-per-trigger",
        type=positive_count,
        default=None,
        help="records per micro-batch (all)",
    )


def positive_count(text: str) -> int:
    """A count of 1 or more (a micro-batch of no file or record would never end)."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"needs a whole number of 1 or more, not {text!r}")
    return count


def kafka_source(args: argparse.Namespace) -> KafkaSource | None:
    """The Kafka source the options name (none without them); a half-given one is refused."""
    if not args.kafka_bootstrap_servers and not args.kafka_topics:
        if args.kafka_setting or args.kafka_settings_file or args.max_offsets_per_trigger:
            raise SettingsError(
                "--kafka-setting, --kafka-settings-file and --max-offsets-per-trigger need a "
                "Kafka source"
            )
        return None
    if not args.kafka_bootstrap_servers or not args.kafka_topics:
        raise SettingsError(
            "a Kafka source needs both --kafka-bootstrap-servers and --kafka-topics"
        )
    try:
        settings = (
            read_properties(Path(args.kafka_settings_file)) if args.kafka_settings_file else {}
        )
        for given in args.kafka_setting:
            name, equals, value = given.partition("=")
            if not equals or not name.strip():
                raise SettingsError(f"--kafka-setting must read NAME=VALUE, not {name.strip()!r}")
            settings[name.strip()] = value
        settings = resolve_placeholders(settings)
    except KafkaSettingsError as error:
        raise SettingsError(str(error)) from None
    return KafkaSource(
        args.kafka_bootstrap_servers,
        args.kafka_topics,
        settings,
        args.max_offsets_per_trigger,
    )
