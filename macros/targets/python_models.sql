{#- on-run-start: on a SQL-only target (thrift, odbc) a selected Python model could not run;
    say so before any node runs, naming the models and the targets that can run them (only for
    the commands that execute models: compile and docs generate run nothing). -#}
{% macro assert_python_models_runnable() %}
    {%- if execute and flags.WHICH in ('run', 'build')
        and target.method not in ('session', 'connect', 'http') -%}
        {%- set python_models = [] -%}
        {%- for node in graph.nodes.values() -%}
            {%- if node.resource_type == 'model' and node.language == 'python'
                and node.unique_id in selected_resources -%}
                {%- do python_models.append(node.name) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if python_models -%}
            {{ exceptions.raise_compiler_error(
                'Target ' ~ target.name ~ ' (method ' ~ target.method ~ ') runs SQL only, and the '
                ~ 'selection has ' ~ python_models | length ~ ' Python model(s): '
                ~ python_models[:5] | join(', ') ~ ('...' if python_models | length > 5 else '')
                ~ '. Python models run on targets with method session (local, cluster) or connect '
                ~ '(engine); leave them out of this selection (--exclude).'
            ) }}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
