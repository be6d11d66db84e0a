"""Locations handed to Spark, made independent of the process that runs Spark.

A Spark Connect server (the warm engine, any remote one) resolves a relative path against its
own working folder, not the client's: a local path is made absolute here, in the process where
the user wrote it, before Spark sees it. URIs (``s3a://``, ``file:/``, ``hdfs://``) are left as
they are.
"""

from __future__ import annotations

import re
from pathlib import Path

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def spark_location(location: str | Path) -> str:
    """``location`` as Spark should read it: a URI unchanged, a local path absolute (against
    this process's current folder, ``~`` expanded)."""
    text = str(location).strip()
    if not text or _URI.match(text):
        return text
    return str(Path(text).expanduser().absolute())
