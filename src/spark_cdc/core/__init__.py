"""Small Spark, Delta and dbt helpers the rest of the library builds on."""
