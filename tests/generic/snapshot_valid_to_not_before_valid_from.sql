{#- A closed version never ends before it starts. Returns the inverted rows. -#}
{% test snapshot_valid_to_not_before_valid_from(
    model, valid_from='dbt_valid_from', valid_to='dbt_valid_to'
) %}
    select *
    from {{ model }}
    where {{ valid_to }} < {{ valid_from }}
{% endtest %}
