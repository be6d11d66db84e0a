{{ config(materialized='incremental', incremental_strategy='merge', merge_replace_from='_batch_id') }}

-- Events of accounts that were not applied, with the raw event and the reason.
{{ spark_cdc.change_events_quarantine(ref('int_change_events__accounts_ledger')) }}
