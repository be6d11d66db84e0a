"""Command line of the project's Python package: ``spark-cdc <command> ...``."""

# One module per command group beside this one; this one builds the parser and runs a command.

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from spark_cdc.cli.engine import add_engine_parser, add_target_parser
from spark_cdc.cli.generate import add_generate_parsers
from spark_cdc.cli.land import add_land_parser
from spark_cdc.cli.sql import add_sql_parser
from spark_cdc.cli.stream import add_stream_parser
from spark_cdc.generators.extracts import GeneratorError
from spark_cdc.scaffold.cli import add_parser as add_scaffold_parser


def build_parser() -> argparse.ArgumentParser:
    """The ``spark-cdc`` argument parser."""
    parser = argparse.ArgumentParser(prog="spark-cdc", description=__doc__)
    parser.add_argument(
        "--target", default=None, help="the profile's target (as dbt's --target; SPARK_CDC_TARGET)"
    )
    parser.add_argument(
        "--profiles-dir",
        default=None,
        help="folder of profiles.yml (as dbt's --profiles-dir; DBT_PROFILES_DIR)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_target_parser(commands)
    add_generate_parsers(commands)
    add_land_parser(commands)
    add_sql_parser(commands)
    add_engine_parser(commands)
    add_stream_parser(commands)
    add_scaffold_parser(commands)
    return parser


def _user_errors() -> tuple[type[Exception], ...]:
    """Errors that are about the input or the environment, reported as one line (exit code 2)."""
    from spark_cdc.change_events.landing import InitialRowsError, LandingConflictError
    from spark_cdc.change_events.model import ChangeEventConfigError
    from spark_cdc.core.streaming_queries import KafkaUnavailableError, StreamStartError
    from spark_cdc.dbt_models.settings import SettingsError
    from spark_cdc.engine.server import EngineError
    from spark_cdc.hash_cdc.config import ConfigError
    from spark_cdc.scaffold.names import AddError
    from spark_cdc.schema_drift.stream import ServerPythonError
    from spark_cdc.session.home_lock import HomeInUseError
    from spark_cdc.session.master_check import MasterUnavailableError
    from spark_cdc.targets import TargetError

    return (
        AddError,
        GeneratorError,
        InitialRowsError,
        LandingConflictError,
        ChangeEventConfigError,
        ConfigError,
        HomeInUseError,
        MasterUnavailableError,
        TargetError,
        EngineError,
        SettingsError,
        ServerPythonError,
        StreamStartError,
        KafkaUnavailableError,
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, turn input errors into a clear message and exit code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # dbt's own flags, read the same way by every command here (targets.current_target).
    if args.target:
        os.environ["SPARK_CDC_TARGET"] = args.target
    if args.profiles_dir:
        os.environ["DBT_PROFILES_DIR"] = str(Path(args.profiles_dir).resolve())
    try:
        return args.handler(args)
    except _user_errors() as error:
        print(f"spark-cdc: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
