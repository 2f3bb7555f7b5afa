"""A real MCP server for the tests (stdio): `python -m tests.mcpserver`."""
