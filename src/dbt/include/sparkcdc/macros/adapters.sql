{#- The sparkcdc adapter's macros: its incremental materialization (incremental.sql and
    python_result_view.sql), a Python model's partitioned first write (python_table_write.sql); for everything else dispatch falls through to dbt-spark's spark__
    macros (sparkcdc__ -> spark__ -> default__). -#}
