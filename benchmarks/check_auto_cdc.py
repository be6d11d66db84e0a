"""Whether Spark's own Auto CDC (``pyspark.pipelines.create_auto_cdc_flow``) runs on OSS Spark with
a Delta target, with the installed pyspark and Delta jars.

Writes a one-flow pipeline project (four change events, one key, a delete) into a temporary
folder and runs it with ``spark-pipelines`` (the project's Delta jars, Delta's catalog, Delta as
the default source; not Delta's session extension: a static setting, which the pipeline's
session refuses whether the spec or ``--conf`` gives it); prints
whether the flow ran, else the error classes Spark gave (exit status 1). Re-run it when pyspark
or Delta is upgraded: docs/benchmarks.md records the answer.
Usage: ``python benchmarks/check_auto_cdc.py``
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pyspark

from spark_cdc.session.jars import fetch_delta_jars

FLOW = """from pyspark import pipelines as dp
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.active()


@dp.temporary_view
def changes():
    return spark.readStream.schema("id bigint, name string, seq bigint, op string").parquet(
        {source!r}
    )


dp.create_streaming_table("target")
dp.create_auto_cdc_flow(
    target="target",
    source="changes",
    keys=["id"],
    sequence_by="seq",
    apply_as_deletes=F.expr("op = 'D'"),
    except_column_list=["op", "seq"],
)
"""

SPEC = """name: auto_cdc_check
storage: file://{storage}
configuration:
  spark.sql.catalog.spark_catalog: org.apache.spark.sql.delta.catalog.DeltaCatalog
  spark.sql.sources.default: delta
  spark.sql.session.timeZone: UTC
libraries:
  - glob:
      include: transformations/**
"""


def _project(root: Path) -> Path:
    source = root / "changes"
    source.mkdir()
    events = {"id": [1, 2, 1, 2], "name": ["a", "b", "a2", None], "seq": [1, 1, 2, 3]}
    events["op"] = ["U", "U", "U", "D"]
    pq.write_table(pa.table(events), source / "part-0.parquet")
    project = root / "pipeline"
    (project / "transformations").mkdir(parents=True)
    (project / "transformations" / "flow.py").write_text(FLOW.format(source=str(source)))
    spec = SPEC.format(storage=root / "storage")
    (project / "spark-pipeline.yml").write_text(spec)
    return project


def main() -> int:
    spark_home = Path(pyspark.__file__).parent
    launcher = Path(sys.executable).parent / "spark-pipelines"
    jars = fetch_delta_jars()
    root = Path(tempfile.mkdtemp(prefix="auto_cdc_check_"))
    try:
        project = _project(root)
        env = {**os.environ, "SPARK_HOME": str(spark_home)}
        env["PATH"] = f"{launcher.parent}{os.pathsep}{env.get('PATH', '')}"
        done = subprocess.run(
            [str(launcher), "--jars", ",".join(map(str, jars)), "run"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        output = done.stdout + done.stderr
        errors = sorted(set(re.findall(r"\[([A-Z][A-Z0-9_.]+)\]", output)))
        print(f"pyspark {pyspark.__version__}, {', '.join(jar.name for jar in jars)}")
        if done.returncode == 0:
            print("Auto CDC ran on a Delta target")
            return 0
        reason = ", ".join(errors) or output[-2000:]
        print(f"Auto CDC did not run (exit {done.returncode}): {reason}")
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
