"""A tensor-parallel decoder served over HTTP, with speculative decoding (lab target)."""
