"""Where experiments run: this machine or a node over SSH (connection, tunnel, helper)."""
