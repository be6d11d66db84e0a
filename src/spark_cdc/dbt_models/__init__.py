"""What the dbt model files of a change-event source, a hash-CDC dataset or a JSON feed call.

A model file (written by ``spark-cdc add``) is a few lines: its materialization, ``meta =
dbt.config.get("meta")`` (the source's settings, from the source's YAML block) and one call of
an entry point here with the refs it reads. The entry points take the source's name and every
setting from that meta, never from a folder or a global.
"""
