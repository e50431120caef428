"""Profiles of launches: where the time went, and where it moved between two states."""
