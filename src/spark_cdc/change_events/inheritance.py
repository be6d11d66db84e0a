"""What crosses keys when a key changes: the links from a move-in run to the run it inherits
from, resolved along chains by pointer jumping, and the values an upsert leaves unchanged taken
along them (change_events.resolve's module doc has the rules)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_cdc.change_events.model import TargetSchema
from spark_cdc.change_events.normalize import UNCHANGED_COLUMNS


def inherited_values(
    acts: DataFrame, links: DataFrame, schema: TargetSchema, order: Sequence[str]
) -> DataFrame:
    """Per move-in run, the values of the columns its upserts leave unchanged with nothing sent
    before them in the run: the parent run's last value (the source key's run when the source
    row was live, else the key's own previous live run, as for created_at), following parents
    while the parent left the column unchanged too (a chain of moves); NULL without a parent."""
    nonkeys = [c for c in schema.columns if c not in schema.keys]
    steps = links.select(
        F.col("node_key").alias("hop_key"),
        F.col("node_run").alias("hop_run"),
        F.col("parent_key").alias("hop_parent_key"),
        F.col("parent_run").alias("hop_parent_run"),
    ).localCheckpoint()
    parents = (
        steps.where(F.col("hop_parent_key").isNotNull())
        .select(F.col("hop_parent_key").alias("_key"), F.col("hop_parent_run").alias("_run"))
        .distinct()
    )
    last = (
        acts.where(F.col("_kind") == "U")
        .join(F.broadcast(parents), ["_key", "_run"])
        .groupBy(F.col("_key").alias("last_key"), F.col("_run").alias("last_run"))
        .agg(F.max_by(F.struct("_values", "_unsent"), F.struct(*order)).alias("l"))
        .localCheckpoint()
    )
    value_type = acts.schema["_values"].dataType
    state = steps.select(
        F.col("hop_key").alias("node_key"),
        F.col("hop_run").alias("node_run"),
        F.col("hop_parent_key").alias("at_key"),
        F.col("hop_parent_run").alias("at_run"),
        F.lit(None).cast(value_type).alias("got"),
        F.array(*(F.lit(c) for c in nonkeys)).cast("array<string>").alias("want"),
    )
    while True:
        looked = state.join(
            F.broadcast(last),
            (F.col("at_key") == F.col("last_key")) & (F.col("at_run") == F.col("last_run")),
            "left",
        ).join(
            F.broadcast(steps),
            (F.col("at_key") == F.col("hop_key")) & (F.col("at_run") == F.col("hop_run")),
            "left",
        )
        found = F.col("l").isNotNull()
        still = F.coalesce(F.col("l._unsent"), F.array().cast("array<string>"))
        got = [
            F.when(
                found & F.array_contains("want", c) & ~F.array_contains(still, c),
                F.col("l._values")[c],
            )
            .otherwise(F.col("got")[c])
            .alias(c)
            if c in nonkeys
            else F.lit(None).alias(c)
            for c in schema.columns
        ]
        want = F.when(found & F.col("hop_parent_key").isNotNull(), F.array_intersect("want", still))
        state = looked.select(
            "node_key",
            "node_run",
            F.when(want.isNotNull(), F.col("hop_parent_key")).alias("at_key"),
            F.when(want.isNotNull(), F.col("hop_parent_run")).alias("at_run"),
            F.struct(*got).cast(value_type).alias("got"),
            F.coalesce(want, F.array().cast("array<string>")).alias("want"),
        ).localCheckpoint()
        if state.where(F.size("want") > 0).isEmpty():
            return state.select(
                F.col("node_key").alias("inherit_key"),
                F.col("node_run").alias("inherit_run"),
                F.col("got").alias("inherited"),
            )


def links_of(acts: DataFrame) -> DataFrame:
    """Move-in runs: node (key, run) and what they inherit from (parent run, or own event_ts)."""
    ins = acts.where(F.col("_reset") & F.col("_src").isNotNull()).select(
        "_fp",
        F.col("_key").alias("node_key"),
        F.col("_run").alias("node_run"),
        F.col("_ts"),
        F.when(F.col("_prev_kind") == "U", F.col("_run") - 1).alias("own_previous_run"),
    )
    outs = acts.where(F.col("_is_out")).select(
        "_fp",
        F.col("_key").alias("source_key"),
        F.col("_run").alias("source_run"),
        (F.col("_prev_kind") == "U").alias("source_live"),
    )
    joined = ins.join(outs, "_fp", "left")
    source_live = F.coalesce(F.col("source_live"), F.lit(False))
    parent_key = F.when(source_live, F.col("source_key")).when(
        F.col("own_previous_run").isNotNull(), F.col("node_key")
    )
    parent_run = F.when(source_live, F.col("source_run")).otherwise(F.col("own_previous_run"))
    return joined.select(
        "node_key",
        "node_run",
        parent_key.alias("parent_key"),
        F.when(parent_key.isNotNull(), parent_run).alias("parent_run"),
        F.when(parent_key.isNull(), F.col("_ts")).alias("created"),
    )


def resolve_links(acts: DataFrame, links: DataFrame) -> DataFrame:
    """created for every move-in run: parents that are plain runs first, then pointer jumping."""
    parents = (
        links.where(F.col("parent_key").isNotNull())
        .select(F.col("parent_key").alias("_key"), F.col("parent_run").alias("_run"))
        .distinct()
    )
    plain = (
        acts.where(F.col("_reset") & F.col("_src").isNull())
        .select("_key", "_run", F.col("_run_created").alias("plain_created"))
        .join(F.broadcast(parents), ["_key", "_run"])
    )
    links = (
        links.join(
            F.broadcast(plain),
            (F.col("parent_key") == F.col("_key")) & (F.col("parent_run") == F.col("_run")),
            "left",
        )
        .select(
            "node_key",
            "node_run",
            F.when(F.col("plain_created").isNull(), F.col("parent_key")).alias("parent_key"),
            F.when(F.col("plain_created").isNull(), F.col("parent_run")).alias("parent_run"),
            F.coalesce("created", "plain_created").alias("created"),
        )
        .localCheckpoint()
    )
    while not links.where(F.col("created").isNull()).isEmpty():
        hop = links.select(
            F.col("node_key").alias("hop_key"),
            F.col("node_run").alias("hop_run"),
            F.col("parent_key").alias("hop_parent_key"),
            F.col("parent_run").alias("hop_parent_run"),
            F.col("created").alias("hop_created"),
        )
        jumped = links.join(
            F.broadcast(hop),
            (F.col("parent_key") == F.col("hop_key")) & (F.col("parent_run") == F.col("hop_run")),
            "left",
        )
        links = jumped.select(
            "node_key",
            "node_run",
            F.when(F.col("created").isNull(), F.col("hop_parent_key")).alias("parent_key"),
            F.when(F.col("created").isNull(), F.col("hop_parent_run")).alias("parent_run"),
            F.coalesce("created", "hop_created").alias("created"),
        ).localCheckpoint()
    return links.select("node_key", "node_run", F.col("created").alias("link_created"))


def leaves_unchanged(events: DataFrame) -> Column:
    """Whether an event of ``events`` leaves a column unchanged (an unchanged-TOAST
    placeholder); false for events without that column."""
    if UNCHANGED_COLUMNS not in events.columns:
        return F.lit(False)
    return F.size(F.coalesce(F.col(UNCHANGED_COLUMNS), F.array().cast("array<string>"))) > 0


def with_inherited(resolved: DataFrame, inherited: DataFrame) -> DataFrame:
    """Upserts of move-in runs take the inherited value of each column left unchanged with
    nothing sent before it in the run (inherited_values)."""
    joined = resolved.join(
        F.broadcast(inherited),
        (F.col("_key") == F.col("inherit_key")) & (F.col("_run") == F.col("inherit_run")),
        "left",
    )
    value_type = resolved.schema["_values"].dataType
    values = [
        F.when(
            F.col("inherited").isNotNull() & F.array_contains(F.col("_unsent"), field.name),
            F.col("inherited")[field.name],
        )
        .otherwise(F.col("_values")[field.name])
        .alias(field.name)
        for field in value_type.fields
    ]
    filled = F.when(F.col("_values").isNotNull(), F.struct(*values).cast(value_type))
    return joined.withColumn("_values", filled).drop("inherit_key", "inherit_run", "inherited")
