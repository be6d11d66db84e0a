"""A captured table applied as a team applies it: a dbt project of its own with the source made
by ``spark-cdc add change-events --debezium``, each delivery landed by ``spark-cdc
land-change-events`` (the capture's files, or the records of its Kafka topic) and applied by
``dbt build`` of the source's models and tests."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from debezium_pipeline import land_from_kafka
from debezium_support import Capture
from pyspark.sql import DataFrame, SparkSession
from support import PROJECT_DIR

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.cli.dbt_invoke import run_dbt
from spark_cdc.cli.main import main


def write_team_project(root: Path, name: str, schema: str) -> Path:
    """A team's dbt project that installs spark_cdc, its profile on the tests' Spark session."""
    root.mkdir(parents=True)
    (root / "models").mkdir()
    (root / "dbt_project.yml").write_text(
        f"name: {name}\nversion: '1.0.0'\nconfig-version: 2\nprofile: {name}\n"
        "dispatch:\n  - macro_namespace: dbt\n"
        f"    search_order: ['{name}', 'spark_cdc', 'dbt']\n"
        "flags:\n  send_anonymous_usage_stats: false\n"
    )
    (root / "packages.yml").write_text(f"packages:\n  - local: {PROJECT_DIR}\n")
    (root / "profiles.yml").write_text(
        f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: sparkcdc\n"
        f"      method: session\n      host: 'local[2]'\n      schema: {schema}\n"
        "      threads: 2\n"
    )
    return root


def dbt(project: Path, *args: str):
    """``dbt <args>`` in ``project`` (its own profile); fails the test when dbt fails."""
    return run_dbt(list(args), project_dir=project, profiles_dir=project)


@dataclass
class ScaffoldedSource:
    """A Debezium source of a team project, delivered and built as its docs say."""

    project: Path
    name: str
    schema: TargetSchema
    target_schema: str
    landing_schema: str
    # (broker, checkpoint): landed from the capture's Kafka topic; else from its files
    kafka: tuple[str, Path] | None = None
    delivered: set[Path] = field(default_factory=set)
    builds: int = 0

    @classmethod
    def added(
        cls,
        project: Path,
        name: str,
        schema: TargetSchema,
        target_schema: str,
        landing_schema: str,
        *flags: str,
        kafka: tuple[str, Path] | None = None,
    ) -> ScaffoldedSource:
        """``spark-cdc add change-events NAME --debezium`` in ``project`` with ``schema``'s
        keys and columns and ``flags``."""
        words = ["add", "change-events", name, "--debezium", f"--landing-schema={landing_schema}"]
        words += [f"--key={key}" for key in schema.keys]
        words += [f"--column={c}:{t}" for c, t in schema.columns.items()]
        assert main([*words, *flags, "--project-dir", str(project)]) == 0
        return cls(project, name, schema, target_schema, landing_schema, kafka)

    @property
    def landed(self) -> str:
        return f"{self.landing_schema}.{self.name}_change_events"

    def table(self, model: str) -> DataFrame | None:
        """The source's model table (``ledger``, ``history``, ``current``), None before it."""
        spark = SparkSession.getActiveSession()
        prefix = "int_change_events__" if model == "ledger" else "change_events__"
        name = f"{self.target_schema}.{prefix}{self.name}_{model}"
        return spark.table(name) if spark.catalog.tableExists(name) else None

    @property
    def ledger(self) -> DataFrame | None:
        return self.table("ledger")

    @property
    def history(self) -> DataFrame | None:
        return self.table("history")

    def deliver(self, spark: SparkSession, capture: Capture, topic: str) -> list[Path]:
        """Land what the capture sent since the last delivery, then ``dbt build`` the source."""
        files = [path for path in capture.files(topic) if path not in self.delivered]
        if self.kafka is not None:
            land_from_kafka(self.landed, self.kafka, topic)
        elif files:
            # the capture's files as a stream folder's batch files, in delivery order (a file
            # landed before is skipped by its name)
            batches = self.project.parent / f"{self.name}_stream" / "batches"
            batches.mkdir(parents=True, exist_ok=True)
            for path in files:
                shutil.copyfile(path, batches / f"batch-{path.stem.zfill(8)}.jsonl")
            command = ["land-change-events", str(batches.parent), "--debezium"]
            assert main([*command, "--table", self.landed]) == 0
        self.delivered.update(files)
        if spark.catalog.tableExists(self.landed):
            selected = f"stg_change_events__{self.name}+"
            dbt(self.project, "build", "--select", selected)
            self.builds += 1
        return files
