"""GPU time from torch profiler traces: SGLang's `/start_profile` and `/stop_profile` on the
lab's server (a real process over real HTTP, on its simulated GPU), the traces read in torch's
Chrome format, and where the GPU time moved."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import pytest

from tests.conftest import git
from tools.config import load_config
from tools.proc.server import free_port, running_server
from tools.profile.movers import movers
from tools.profile.torch_profiler import start_torch_profile, stop_torch_profile
from tools.profile.torch_trace import read_torch_traces

SPLIT = "python/sglang/srt/distributed/parallel_state.py"
ALL_REDUCE = (
    "python/sglang/srt/distributed/device_communicators/pynccl.py:PyNcclCommunicator.all_reduce"
)


def _profiled_verify(lab: Path, folder: Path, tmp_path: Path, env: dict[str, str]) -> float:
    """The lab server profiled over four requests; the median time of a verify cycle."""
    config = load_config(lab)
    port = free_port()
    argv = config.launch_argv(port)
    with running_server(argv, lab, {**config.launch.env, **env}, port, tmp_path / "s.log") as s:
        assert start_torch_profile(s.base_url, str(folder), 0) is None
        verify = []
        for _ in range(4):
            body = {"text": "hello " * 32, "sampling_params": {"max_new_tokens": 16}}
            meta = httpx.post(s.base_url + "/generate", json=body, timeout=60).json()["meta_info"]
            verify.append(meta["e2e_latency"] * 1000 / meta["spec_verify_ct"])
        assert stop_torch_profile(s.base_url) is None
    return sorted(verify)[len(verify) // 2]


def test_the_lab_servers_traces_show_the_split_all_reduce(seed_lab: Path, tmp_path: Path) -> None:
    """The seed's culprit splits each multi-token all-reduce into one per token: the traces
    of the good and the bad tree say that NCCL's all-reduce, launched from pynccl and on the
    way from parallel_state, took the gap."""
    good_dir, bad_dir = tmp_path / "good", tmp_path / "bad"
    assert "if 1 < num_tokens <= 8:" in (seed_lab / SPLIT).read_text()  # the bad tree
    bad = _profiled_verify(seed_lab, bad_dir, tmp_path, {})
    good_lab = tmp_path / "good-lab"
    for path in seed_lab.rglob("*"):
        if ".git" not in path.parts and path.is_file():
            target = good_lab / path.relative_to(seed_lab)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    (good_lab / SPLIT).write_text(git(seed_lab, "show", f"HEAD:{SPLIT}") + "\n")
    good = _profiled_verify(good_lab, good_dir, tmp_path, {})
    [trace] = list(bad_dir.glob("*.trace.json.gz"))
    assert trace.name == "debug-agent-TP-0.trace.json.gz"  # {profile_id}-TP-{rank}, as SGLang
    bad_profile = read_torch_traces(bad_dir, seed_lab)
    good_profile = read_torch_traces(good_dir, good_lab)
    assert bad_profile is not None and good_profile is not None
    assert bad_profile.samples > 10  # kernels
    [top, *_] = movers(bad_profile, good_profile, bad, good, True, "self", "gpu")
    assert top.function == ALL_REDUCE or "PyNcclCommunicator.all_reduce" in top.function, top
    assert top.change == "grew" and top.source == "gpu"
    on_the_way = movers(bad_profile, good_profile, bad, good, True, "inclusive", "gpu")
    assert SPLIT + ":GroupCoordinator.all_reduce" in {m.function for m in on_the_way}
    # the culprit's lines moved the function below it: one name in both traces all the same
    caller = SPLIT + ":tensor_model_parallel_all_reduce"
    assert caller in bad_profile.functions and caller in good_profile.functions
    assert not any("@" in name for name in bad_profile.functions)


def _event(cat: str, name: str, ts: float, dur: float, **args: object) -> dict:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 1,
        "tid": 2,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def test_a_trace_in_torchs_format_is_read_and_garbage_is_left_out(tmp_path: Path) -> None:
    """Nested python_function events, a cudaLaunchKernel inside them, the kernel on the GPU
    tied by correlation; a trace cut short and one of another shape are left out."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    model = tree / "pkg" / "model.py"
    model.write_text("def forward():\n    return attend()\n\n\ndef attend():\n    pass\n")
    events = [
        _event("python_function", f"{model}(1): forward", 0, 100),
        _event("python_function", "/usr/lib/python3/site-packages/torch/x.py(9): wrapper", 1, 90),
        _event("python_function", f"{model}(5): attend", 2, 50),
        _event("cuda_runtime", "cudaLaunchKernel", 3, 1, correlation=7),
        _event("cuda_runtime", "cudaLaunchKernel", 60, 1, correlation=8),  # in forward only
        {**_event("kernel", "flash_fwd", 10, 400, correlation=7), "pid": 0, "tid": 7},
        {**_event("kernel", "gemm", 420, 100, correlation=8), "pid": 0, "tid": 7},
        {**_event("kernel", "orphan", 600, 50), "pid": 0, "tid": 7},  # no launch known
    ]
    folder = tmp_path / "torch"
    folder.mkdir()
    with gzip.open(folder / "run-TP-0.trace.json.gz", "wt") as out:
        json.dump({"traceEvents": events}, out)
    (folder / "run-TP-1.trace.json.gz").write_bytes(gzip.compress(b'{"traceEvents": [')[:30])
    (folder / "run-TP-2.trace.json").write_text('["not an event", 3, null]')
    profile = read_torch_traces(folder, tree)
    assert profile is not None and profile.samples == 3
    assert profile.seconds == 550e-6
    f = profile.functions
    assert f["[kernel] flash_fwd"] == (400e-6, 400e-6)
    assert f["pkg/model.py:attend"] == (400e-6, 400e-6)  # the call site: self time
    assert f["pkg/model.py:forward"] == (500e-6, 100e-6)  # gemm was launched from forward
    assert not any("torch/x.py" in k for k in f)  # not the tree's: no line of its own
    assert profile.roots == ["pkg/model.py:forward"]
    assert profile.stacks == {
        "pkg/model.py:forward;pkg/model.py:attend;[kernel] flash_fwd": 400e-6,
        "pkg/model.py:forward;[kernel] gemm": 100e-6,
        "[kernel] orphan": 50e-6,
    }
    model.unlink()  # a file that cannot be read: named as the trace names it
    assert "pkg/model.py:attend@5" in read_torch_traces(folder, tree).functions  # type: ignore[union-attr]
    assert read_torch_traces(tmp_path / "none", tree) is None


def test_hostile_traces_are_left_out_or_read_in_what_they_hold(tmp_path: Path) -> None:
    """A server writes what it likes into the trace folder: fields of the wrong type (a list
    as correlation or pid, text as a duration), a gzip stream garbled mid-way, an event
    nested 100,000 deep, a trace of 12 MB in the top-level list form. None stops the reading;
    what can be read counts."""
    folder = tmp_path / "torch"
    folder.mkdir()
    odd = [
        _event("cuda_runtime", "cudaLaunchKernel", 3, 1, correlation=[7]),
        {**_event("python_function", "a.py(1): f", 0, "long"), "pid": [1]},  # type: ignore[arg-type]
        {**_event("kernel", "k_list", 10, 400, correlation={"a": 1}), "pid": 0, "tid": 7},
        {**_event("kernel", "k_inf", 10, float("inf")), "pid": 0, "tid": 7},
        {**_event("kernel", "k_text", 10, "9"), "pid": 0, "tid": 7},  # type: ignore[arg-type]
    ]
    (folder / "odd-TP-0.trace.json").write_text(json.dumps({"traceEvents": odd}))
    garbled = bytearray(gzip.compress(json.dumps({"traceEvents": odd * 400}).encode()))
    garbled[len(garbled) // 2 : len(garbled) // 2 + 16] = bytes(16)
    (folder / "garbled-TP-1.trace.json.gz").write_bytes(bytes(garbled))
    deep = '{"traceEvents": [' + "[" * 100_000 + "]" * 100_000 + "]}"
    (folder / "deep-TP-2.trace.json").write_text(deep)
    many = [{**_event("kernel", "gemm", i, 2), "pid": 0, "tid": 7} for i in range(100_000)]
    (folder / "list-TP-3.trace.json").write_text(json.dumps(many))
    profile = read_torch_traces(folder, tmp_path)
    assert profile is not None and profile.processes == 2  # odd and list: the rest cut short
    assert profile.samples == 1 + 100_000
    assert profile.functions["[kernel] k_list"] == (400e-6, 400e-6)
    assert profile.functions["[kernel] gemm"][0] == pytest.approx(0.2)


def test_a_server_without_the_routes_answers_why(tmp_path: Path) -> None:
    """A server with no torch profiler (here, nothing listening): one line, no exception."""
    url = f"http://127.0.0.1:{free_port()}"
    refused = start_torch_profile(url, str(tmp_path), 0)
    assert refused is not None and refused.startswith("/start_profile")
