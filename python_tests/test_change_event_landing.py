"""Landing generated batches: each landed batch gets the next _batch_id (ingestion order)."""

from __future__ import annotations

from spark_cdc.cli import main
from spark_cdc.generators.change_events import StreamSpec, write_stream


def test_land_change_events_appends_batches_in_ingestion_order(spark, tmp_path, capsys):
    manifest = write_stream(StreamSpec(initial_rows=5, events=60, batches=4), tmp_path, False)
    table, initial = "landing_test.feed", "landing_test.initial_rows"
    spark.sql(f"drop table if exists {table}")
    assert (
        main(
            [
                "land-change-events",
                str(tmp_path),
                "--table",
                table,
                "--batches",
                ":1",
                "--initial-table",
                initial,
            ]
        )
        == 0
    )
    assert main(["land-change-events", str(tmp_path), "--table", table, "--batches", "1:"]) == 0
    counts = {r[0]: r[1] for r in spark.table(table).groupBy("_batch_id").count().collect()}
    assert sorted(counts) == [0, 1, 2, 3] and sum(counts.values()) == manifest["events"]
    assert spark.table(initial).count() == 5
    assert "as _batch_id 1-3" in capsys.readouterr().out
