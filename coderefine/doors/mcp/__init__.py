"""``coderefine mcp``: the MCP server door, for coding agents. Imports the ``mcp`` SDK only when run."""
