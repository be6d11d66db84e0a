"""The keys a history run re-resolves: those its new events act on, grown by every key a key
change links to them (old key to new key and back), and the events acting on them."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_cdc.change_events.inheritance import leaves_unchanged
from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.resolve import KeyMoves, key_struct, moves_a_key


def action_keys(events: DataFrame, schema: TargetSchema) -> DataFrame:
    """``_key`` (a struct of the key columns) of every key the events act on: an insert's or
    update's image key, a delete's old key, both for an update that moves its key."""
    upserts = events.where(F.col("change_kind").isin("insert", "update"))
    outs = events.where((F.col("change_kind") == "delete") | moves_a_key(schema))
    return (
        upserts.select(key_struct(F.col("image"), schema).alias("_key"))
        .unionByName(outs.select(F.col("old_key").alias("_key")))
        .distinct()
    )


# A run's key moves up to this many are linked on the driver (as key hashes, one collect);
# a window with more is linked in Spark, one join and count per step of the longest chain.
DRIVER_LINKED_MOVES = 200_000


def linked_keys(
    keys: DataFrame, events: DataFrame, schema: TargetSchema
) -> tuple[DataFrame, KeyMoves]:
    """``keys`` grown by every key that a key-moving event of ``events`` links to one of them
    (old key to new key and back), until no event adds one: the keys whose versions can change
    together (a move-in inherits created_at from its source key's run); and what ``events``
    say about key moves (for resolve_versions).

    The moves are read once, as (old key, new key) hashes and whether the move leaves a column
    unchanged; the hashes' connected components are found on the driver, and the keys of every
    component that holds one of ``keys`` are added. Two keys that share a hash share a
    component: a collision can only add keys, which then resolve to the versions they have."""
    moving = events.where(moves_a_key(schema))
    image_key = key_struct(F.col("image"), schema)
    leaves = leaves_unchanged(events)
    found = (
        moving.select(
            F.xxhash64("old_key").alias("_from"), F.xxhash64(image_key).alias("_to"), leaves
        )
        .limit(DRIVER_LINKED_MOVES + 1)
        .collect()
    )
    if not found:
        return keys, KeyMoves(any=False, leave_unchanged=False)
    moves = KeyMoves(any=True, leave_unchanged=any(row[2] for row in found))
    if len(found) > DRIVER_LINKED_MOVES:
        return _linked_keys_in_spark(keys, moving, schema), moves
    component = _components((row[0], row[1]) for row in found)
    spark = events.sparkSession
    components = spark.createDataFrame(list(component.items()), "_hash bigint, _component bigint")
    hit = (
        keys.select(F.xxhash64("_key").alias("_hash"))
        .join(F.broadcast(components), "_hash")
        .select("_component")
        .distinct()
    )
    ends = moving.select(F.col("old_key").alias("_key")).unionByName(
        moving.select(image_key.alias("_key"))
    )
    linked = (
        ends.withColumn("_hash", F.xxhash64("_key"))
        .join(F.broadcast(components), "_hash")
        .join(F.broadcast(hit), "_component", "left_semi")
        .select("_key")
    )
    return keys.unionByName(linked).distinct().localCheckpoint(), moves


def _components(edges: Iterable[tuple[int, int]]) -> dict[int, int]:
    """Each node of ``edges`` (pairs of hashes) with its connected component's smallest node."""
    parent: dict[int, int] = {}

    def root(node: int) -> int:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in edges:
        first, second = root(a), root(b)
        if first != second:
            parent[max(first, second)] = min(first, second)
    return {node: root(node) for node in parent}


def _linked_keys_in_spark(keys: DataFrame, moving: DataFrame, schema: TargetSchema) -> DataFrame:
    """linked_keys for a window of many moves: grown in Spark, one step per join."""
    moves = moving.select(
        F.col("old_key").alias("_from"), key_struct(F.col("image"), schema).alias("_to")
    )
    edges = moves.unionByName(
        moves.select(F.col("_to").alias("_from"), F.col("_from").alias("_to"))
    ).localCheckpoint()
    reached = keys.localCheckpoint()
    count = reached.count()
    while True:
        linked = edges.join(
            F.broadcast(reached.withColumnRenamed("_key", "_from")), "_from", "left_semi"
        ).select(F.col("_to").alias("_key"))
        grown = reached.unionByName(linked).distinct().localCheckpoint()
        grown_count = grown.count()
        if grown_count == count:
            return grown
        reached, count = grown, grown_count


def on_keys(events: DataFrame, keys: DataFrame, schema: TargetSchema) -> DataFrame:
    """The events that act on one of ``keys`` (by their image key or their old key)."""
    flagged = keys.select("_key", F.lit(True).alias("_hit"))
    by_image = flagged.select(F.col("_key").alias("_image_key"), F.col("_hit").alias("_hit_i"))
    by_old = flagged.select(F.col("_key").alias("_old_key"), F.col("_hit").alias("_hit_o"))
    return (
        events.withColumn(
            "_image_key",
            F.when(
                F.col("change_kind").isin("insert", "update"), key_struct(F.col("image"), schema)
            ),
        )
        .withColumn("_old_key", F.col("old_key"))
        .join(F.broadcast(by_image), "_image_key", "left")
        .join(F.broadcast(by_old), "_old_key", "left")
        .where(F.coalesce(F.col("_hit_i"), F.col("_hit_o"), F.lit(False)))
        .drop("_image_key", "_old_key", "_hit_i", "_hit_o")
    )


def key_columns_of(keys: DataFrame, schema: TargetSchema) -> DataFrame:
    return keys.select(*(F.col("_key")[k].alias(k) for k in schema.keys))
