"""The LLM reasoner: ranks hypotheses and writes the narrative; measurements decide verdicts."""
