"""The MCP server: the contract runtime exposed to agent harnesses."""
