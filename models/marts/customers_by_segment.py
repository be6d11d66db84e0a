"""Open customer versions counted per segment, computed with PySpark on the dbt session."""

from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table")
    history = dbt.ref("customers_snapshot")
    current = history.where(F.col("dbt_valid_to").isNull())
    return current.groupBy("segment").agg(
        F.count("*").alias("customer_count"),
        F.max("updated_at").alias("last_change_at"),
    )
