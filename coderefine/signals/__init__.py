"""The facts the critic is grounded in: ruff, ruff format, pytest and syntax, with baseline comparison."""
