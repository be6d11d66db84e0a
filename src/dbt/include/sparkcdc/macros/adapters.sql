{#- The sparkcdc adapter adds no macro of its own: dispatch falls through to dbt-spark's
    spark__ macros (sparkcdc__ -> spark__ -> default__). -#}
