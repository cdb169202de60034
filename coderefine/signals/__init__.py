"""The facts the critic is grounded in: ruff, ruff format, pytest and syntax, compared with a baseline
(``evaluate.py``), and ``check.py``, which is those facts for a change with no model. Imports the project
layer and the base modules."""
