"""The ``spark-cdc`` command: one module per command group."""
