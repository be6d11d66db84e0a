"""The adapter's version: the package's own (spark_cdc.__version__)."""

from spark_cdc import __version__ as version

__all__ = ["version"]
