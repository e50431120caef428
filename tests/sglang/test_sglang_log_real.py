"""The four real logs in tests/data/sglang-logs/ read as their README says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import run_cli
from tests.sglang.support import real_log
from tools.sglang.log import parse_log, parse_log_file

NSA_DECOYS = (
    "nsa_prefill_backend",
    "nsa_decode_backend",
    "decode_attention_backend",
    "prefill_attention_backend",
    "mm_attention_backend",
)


def printed_keys(path_text: str) -> list[str]:
    """The keys of the ServerArgs(...) dump, read independently with ast (the dumps are whole)."""
    line = next(line for line in path_text.splitlines() if "server_args=ServerArgs(" in line)
    inner = line.split("server_args=ServerArgs(", 1)[1]
    call = ast.parse("f(" + inner, mode="eval").body
    assert isinstance(call, ast.Call)
    return [k.arg for k in call.keywords if k.arg]


def test_034_ray_prefixed_startup_traceback() -> None:
    path = real_log("034")
    text = path.read_text()
    assert all(line.startswith("(SGLangEngine pid=206831) ") for line in text.splitlines())
    data = parse_log_file(path).to_json_dict()
    assert data["errors"] == [
        {
            "line": 2,
            "kind": "traceback",
            "message": "AttributeError: 'FusedMoE' object has no attribute 'w13_weight'",
        }
    ]
    assert data["server_args"] is None and data["bench"] is None
    assert data["decode"] == [] and data["prefill"] == []


def test_042_glm5_server_args_complete() -> None:
    path = real_log("042")
    args = parse_log_file(path).to_json_dict()["server_args"]
    assert args is not None
    assert args["attention_backend"] == "triton"
    assert args["speculative_algorithm"] is None
    assert args["tp_size"] == 8
    assert args["model_path"] == "zai-org/GLM-5-FP8"
    assert args["disable_cuda_graph"] is False
    # Decoys are their own keys, with their own values.
    assert args["nsa_prefill_backend"] == "flashmla_auto"
    assert args["nsa_decode_backend"] == "flashmla_kv"
    assert args["decode_attention_backend"] is None
    assert args["prefill_attention_backend"] is None
    assert args["mm_attention_backend"] is None
    # Every printed key, in order, with Python values turned into JSON ones.
    assert list(args) == printed_keys(path.read_text())
    assert args["kv_cache_dtype"] == "fp8_e4m3" and args["mem_fraction_static"] == 0.908
    assert args["model_loader_extra_config"] == "{}"
    assert args["uvicorn_access_log_exclude_prefixes"] == []
    assert args["cuda_graph_bs"][:4] == [1, 2, 4, 8] and args["cuda_graph_bs"][-1] == 512
    assert args["kt_method"] == "AMXINT4" and args["forward_hooks"] is None


def test_042_warnings_are_not_errors() -> None:
    data = parse_log_file(real_log("042")).to_json_dict()
    assert data["errors"] == []
    assert data["decode"] == [] and data["bench"] is None


def test_042_dump_cut_short_keeps_whole_values_only() -> None:
    text = real_log("042").read_text()
    line = next(line for line in text.splitlines() if "server_args=" in line)
    cut = line[: line.index("tp_size=8") + len("tp_size=")] + "\n[2026-02-26 05:19:58] next\n"
    args = parse_log(cut).to_json_dict()["server_args"]
    assert args["model_path"] == "zai-org/GLM-5-FP8" and args["device"] == "cuda"
    assert "tp_size" in args and args["tp_size"] is None
    assert "attention_backend" not in args  # printed after the cut


def test_043_multi_rank_crash() -> None:
    data = parse_log_file(real_log("043")).to_json_dict()
    assert data["errors"] == [
        {
            "line": 46,
            "kind": "traceback",
            "message": "TypeError: cannot unpack non-iterable ForwardMetadata object",
        },
        {
            "line": 103,
            "kind": "error",
            "message": "Received sigquit from a child process. It usually means the child failed.",
        },
        # TP6's traceback is cut by the end of the excerpt: its header is all there is.
        {
            "line": 104,
            "kind": "traceback",
            "message": "Scheduler hit an exception: Traceback (most recent call last):",
        },
    ]
    assert data["server_args"] is None and data["decode"] == []


def test_046_kimi_server_args() -> None:
    path = real_log("046")
    data = parse_log_file(path).to_json_dict()
    args = data["server_args"]
    assert args["attention_backend"] == "triton"
    assert args["speculative_algorithm"] is None
    assert args["tp_size"] == 8
    assert args["model_path"] == "moonshotai/Kimi-K2.5"
    assert args["disable_cuda_graph"] is False
    assert args["trust_remote_code"] is True
    assert args["mem_fraction_static"] == 0.8260405859375
    assert args["reasoning_parser"] == "kimi_k2" and args["tool_call_parser"] == "kimi_k2"
    for decoy in NSA_DECOYS:
        assert args[decoy] is None
    assert list(args) == printed_keys(path.read_text())
    # The UserWarning and "Ignore import error" lines are not errors.
    assert data["errors"] == []


def test_real_dumps_cut_anywhere_give_whole_values_or_null() -> None:
    for number in ("042", "046"):
        text = real_log(number).read_text()
        full = parse_log(text).to_json_dict()["server_args"]
        line = next(line for line in text.splitlines() if "server_args=" in line)
        for cut in range(len(line) - 1, 40, -97):  # cut points all over the dump
            args = parse_log(line[:cut]).to_json_dict()["server_args"] or {}
            for key, value in args.items():
                assert value is None or value == full[key], (number, cut, key, value)
            assert re.fullmatch(r"\w+", next(reversed(args), "x"))


def test_a_log_a_windows_shell_wrote_reads_as_the_same_log(tmp_path: Path) -> None:
    """PowerShell's `>` writes UTF-16 with a byte-order mark and lines ending "\\r\\n"; read
    as UTF-8 it was NUL bytes between letters and the log showed nothing."""
    path = real_log("046")
    text = path.read_text()
    expected = parse_log_file(path).to_json_dict()
    for encoding in ("utf-16", "utf-16-be", "utf-8-sig"):
        copy = tmp_path / f"{encoding}.log"
        bom = "\ufeff" if encoding == "utf-16-be" else ""  # Python writes the others' mark
        copy.write_bytes((bom + text.replace("\n", "\r\n")).encode(encoding))
        assert parse_log_file(copy).to_json_dict() == expected, encoding
        done = run_cli("logs", "parse", str(copy), "--server", "sglang", "--json")
        assert done.returncode == 0 and "Kimi-K2.5" in done.stdout, done.stderr
