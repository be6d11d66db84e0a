"""Cache slots are scoped per model: two models running side by side (dbt threads) may use the
same slot name without releasing each other's frame; a scope's frames go when it ends."""

from __future__ import annotations

import threading

from spark_cdc.core.cache_slots import held_slots, keep, scope


def test_models_side_by_side_keep_their_own_frames(spark):
    both_hold = threading.Barrier(2)
    seen: dict[str, tuple] = {}
    frames = {}

    def model(name: str) -> None:
        with scope(f"schema.{name}"):
            frame = keep(spark.range(100).selectExpr(f"id as {name}"), "change_events.actions")
            frames[name] = frame
            both_hold.wait()  # each has persisted into the same slot name
            keep(frame.limit(1), "other.slot")
            both_hold.wait()
            seen[name] = (frame.storageLevel.useMemory, frame.count())

    threads = [threading.Thread(target=model, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"a": (True, 100), "b": (True, 100)}
    assert not [key for key in held_slots() if key[0].startswith("schema.")]
    assert not frames["a"].storageLevel.useMemory and not frames["b"].storageLevel.useMemory


def test_a_slot_outside_a_scope_replaces_its_previous_frame(spark):
    first = keep(spark.range(5), "test.slot")
    second = keep(spark.range(6), "test.slot")
    assert not first.storageLevel.useMemory and second.storageLevel.useMemory
    assert ("", "test.slot") in held_slots()
