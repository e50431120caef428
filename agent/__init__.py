"""debug-agent: the investigation (graph, state, reasoners, statistics) and the CLI."""
