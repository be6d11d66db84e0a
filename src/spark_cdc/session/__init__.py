"""Getting a Spark session: settings, the embedded session, Delta jars, the class archive,
who holds a home."""
