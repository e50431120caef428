"""Lab targets: SGLang-shaped git repositories with known regressions, for practice and tests."""
