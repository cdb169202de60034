"""coderefine: refine a Python change with a self-refine loop grounded in ruff, pytest and a libcst gate."""

__version__ = "0.1.0"
