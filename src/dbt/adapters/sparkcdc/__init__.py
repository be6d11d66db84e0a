"""dbt adapter plugin ``sparkcdc``: dbt-spark plus in-process Python models on a Spark session.

It subclasses dbt-spark's adapter and declares ``spark`` as its dependency, so every ``spark__``
macro and dbt-spark's materializations still apply. It adds two connection methods, ``session``
(the project's embedded Spark runtime: Delta Lake + persistent metastore, a Spark session per
dbt thread) and ``connect`` (a Spark Connect server: the home's warm engine or any other), runs
Python models in the dbt process on the node's session, and carries a few macros of its own
(``dbt/include/sparkcdc/macros``: its incremental materialization, whose Python model result
is a temporary view of the node's session, and a Python model's partitioned first write).
"""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.sparkcdc.connections import (  # noqa: F401
    SparkcdcConnectionManager,
    SparkcdcCredentials,
)
from dbt.adapters.sparkcdc.impl import SparkcdcAdapter
from dbt.include import sparkcdc

Plugin = AdapterPlugin(
    adapter=SparkcdcAdapter,  # type: ignore[arg-type]
    credentials=SparkcdcCredentials,
    include_path=sparkcdc.PACKAGE_PATH,
    dependencies=["spark"],
)
