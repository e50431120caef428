"""Bounds on what a config or a command line may ask for: past them a value is a typo (a
timeout of 1e300 s overflows every clock a wait uses; 10**20 launches overflow the checkpoint's
integers; 10**20 requests run until the bench's timeout)."""

MAX_SECONDS = 30 * 24 * 3600.0  # a timeout or a budget of at most 30 days
MAX_COUNT = 1_000_000  # requests, launches, steps, LLM calls
MAX_TOKENS = 100_000_000  # a prompt's or an answer's length
MAX_RESULT_BYTES = 256 << 20  # a file a bench writes its results to, read whole
