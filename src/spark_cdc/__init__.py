"""spark_cdc: change data capture on Apache Spark + Delta Lake, driven by dbt."""

__version__ = "0.1.0"
