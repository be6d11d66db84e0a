"""Schema drift of JSON events: variation hashes, a schema registry and evolving silver tables.

- :mod:`variation` — the schema variation of a payload (Spark expressions and a plain-Python model);
- :mod:`inference` — Spark types of prototypes and the widening rules of superset schemas;
- :mod:`registry` — the schema registry increment of a run;
- :mod:`silver` — typed, flattened Delta tables per event type.
"""
