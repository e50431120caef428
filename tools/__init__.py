"""debug-agent's tools: plain typed functions with pydantic results, usable without the agent."""
