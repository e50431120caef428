"""Code that runs only under a `vllm` subcommand that starts no server: vLLM 0.34's `vllm bench`
imports its benchmark modules in a function called only when the command line's first
positional argument is the subcommand's own name ("bench"); `vllm serve` runs the same `main()`."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_package
from tools.vllm.cli_branches import other_subcommand_blanked

FILES = {
    "entrypoints/cli/main.py": """
        import sys

        def main():
            import vllm.entrypoints.cli.benchmark.main
            if len(sys.argv) > 1 and sys.argv[1] == "bench":
                from vllm.platforms.cpu import CpuPlatform
            if sys.argv[1:2] != ["snapshot"]:
                from vllm.entrypoints.common import startup
        """,
    "entrypoints/cli/benchmark/main.py": """
        import sys

        def _import_bench_subcommand_modules():
            import vllm.entrypoints.cli.benchmark.serve

        class BenchmarkSubcommand:
            name = "bench"

            def subparser_init(self, subparsers):
                first_positional = next(
                    (arg for arg in sys.argv[1:] if not arg.startswith("-")), None
                )
                if first_positional == self.name:
                    _import_bench_subcommand_modules()
                return subparsers
        """,
    "entrypoints/cli/benchmark/serve.py": "from vllm.benchmarks.serve import main\n",
}


def test_what_only_vllm_bench_runs_is_not_named_by_a_server(tmp_path: Path) -> None:
    pkg = write_package(tmp_path, FILES, name="vllm")
    texts = {p: p.read_text() for p in pkg.rglob("*.py")}

    out = other_subcommand_blanked(texts)

    bench = out[pkg / "entrypoints/cli/benchmark/main.py"]
    # the branch a server never takes: the function's name is left on its `def` line alone
    assert bench.count("_import_bench_subcommand_modules") == 1
    assert "vllm.entrypoints.cli.benchmark.serve" not in bench  # the function only it called
    main = out[pkg / "entrypoints/cli/main.py"]
    assert "vllm.platforms.cpu" not in main
    # a subcommand that may serve (or one not known to start no server) decides nothing
    assert "vllm.entrypoints.common" in main
    assert "import vllm.entrypoints.cli.benchmark.main" in main
    for path, text in texts.items():
        assert len(out[path].splitlines()) == len(text.splitlines())
