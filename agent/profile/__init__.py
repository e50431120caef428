"""Profiles as evidence: where the time moved between the references, and the priors it gives."""
