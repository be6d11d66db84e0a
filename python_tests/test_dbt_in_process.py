"""dbt runs in-process (dbtRunner) on the shared session: seed, snapshot, Python model, docs."""

from __future__ import annotations

import json


def test_seed_snapshot_python_model_and_docs(spark, dbt, dbt_project):
    dbt("seed", "--select", "raw_customers")
    dbt("snapshot", "--select", "customers_snapshot")
    dbt("run", "--select", "customers_by_segment")

    snapshot = spark.table("spark_cdc.customers_snapshot")
    assert snapshot.count() == 5
    assert snapshot.where("dbt_valid_to is null").count() == 5
    by_segment = {
        r.segment: r.customer_count for r in spark.table("spark_cdc.customers_by_segment").collect()
    }
    assert by_segment == {"retail": 3, "corporate": 2}
    provider = [
        r.data_type
        for r in spark.sql("describe extended spark_cdc.customers_snapshot").collect()
        if r.col_name == "Provider"
    ]
    assert provider == ["delta"]

    dbt("docs", "generate")
    catalog = json.loads((dbt_project / "target" / "catalog.json").read_text())
    assert "snapshot.spark_cdc.customers_snapshot" in catalog["nodes"]
    assert "model.spark_cdc.customers_by_segment" in catalog["nodes"]

    # Every column of every node the catalog lists is described (docs site): the manifest's
    # description of the node's column, by name whatever its case.
    manifest = json.loads((dbt_project / "target" / "manifest.json").read_text())
    undescribed = [
        f"{unique_id}.{column}"
        for unique_id, node in catalog["nodes"].items()
        for column in node["columns"]
        if not {
            name.lower(): entry.get("description", "").strip()
            for name, entry in manifest["nodes"][unique_id]["columns"].items()
        }.get(column.lower())
    ]
    assert undescribed == []
