"""The ways in, as library functions: ``fix``/``draft`` (run the loop, write the result), the pre-commit
hook and the plain git hook, sweeps, the CI review (``review/``) and the MCP server (``mcp/``). The public
Python API (``coderefine/api.py``) belongs to this layer too. A door may use every layer below it and the
other doors, never the CLI or the bench."""
