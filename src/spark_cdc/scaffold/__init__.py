"""``spark-cdc add``: the files of a change-event source, a hash-CDC dataset or a JSON feed in
any dbt project (model files of a few lines over spark_cdc.dbt_models and the package's macros,
one YAML file per source with its settings block, docs and tests)."""
