"""The version of coderefine: the one module every layer may read it from (the release process bumps it)."""

__version__ = "0.1.0"
