"""The project's own demo (``make run``) and its test and benchmark helpers; not in the wheel."""
