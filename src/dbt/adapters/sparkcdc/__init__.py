"""dbt adapter plugin ``sparkcdc``: dbt-spark plus in-process Python models on a Spark session.

It subclasses dbt-spark's adapter and declares ``spark`` as its dependency, so every ``spark__``
macro and dbt-spark's materializations still apply; it only adds the ``session`` submission method
for Python models and builds the project's Spark runtime (Delta Lake + persistent metastore).
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
