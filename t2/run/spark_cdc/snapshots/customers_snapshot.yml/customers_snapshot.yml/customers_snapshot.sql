
      merge into spark_cdc.customers_snapshot as DBT_INTERNAL_DEST
    using spark_cdc.customers_snapshot__dbt_tmp_95015437efad487a as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_scd_id = DBT_INTERNAL_DEST.dbt_scd_id
    when matched
        and DBT_INTERNAL_DEST.dbt_valid_to is null
        and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update set
            dbt_valid_to = DBT_INTERNAL_SOURCE.dbt_valid_to,
            dbt_close_process_id = DBT_INTERNAL_SOURCE.dbt_close_process_id,
            dbt_closed_at = DBT_INTERNAL_SOURCE.dbt_closed_at,
            dbt_valid_to_high = DBT_INTERNAL_SOURCE.dbt_valid_to
    when not matched
        and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert (`customer_id`, `first_name`, `last_name`, `email`, `segment`, `updated_at`, `dbt_updated_at`, `dbt_valid_from`, `dbt_valid_to`, `dbt_scd_id`, `dbt_insert_process_id`, `dbt_inserted_at`, `dbt_close_process_id`, `dbt_closed_at`, `dbt_valid_to_high`)
        values (
            DBT_INTERNAL_SOURCE.`customer_id`,
            DBT_INTERNAL_SOURCE.`first_name`,
            DBT_INTERNAL_SOURCE.`last_name`,
            DBT_INTERNAL_SOURCE.`email`,
            DBT_INTERNAL_SOURCE.`segment`,
            DBT_INTERNAL_SOURCE.`updated_at`,
            DBT_INTERNAL_SOURCE.`dbt_updated_at`,
            DBT_INTERNAL_SOURCE.`dbt_valid_from`,
            DBT_INTERNAL_SOURCE.`dbt_valid_to`,
            DBT_INTERNAL_SOURCE.`dbt_scd_id`,
            DBT_INTERNAL_SOURCE.`dbt_insert_process_id`,
            DBT_INTERNAL_SOURCE.`dbt_inserted_at`,
            DBT_INTERNAL_SOURCE.`dbt_close_process_id`,
            DBT_INTERNAL_SOURCE.`dbt_closed_at`,
            DBT_INTERNAL_SOURCE.`dbt_valid_to_high`
        )
  