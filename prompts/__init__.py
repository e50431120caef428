"""Prompt templates of the LLM reasoner (text files, shipped with the package)."""
