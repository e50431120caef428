"""Secrets from the launch env, the command line and URLs never reach a file of a session, the
terminal, `--json`, `diff --json` or `logs parse --json`; two different secrets stay apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import investigate_seed, run_cli
from tools.lab.create import create_lab
from tools.lab.target_config import lab_env
from tools.secrets import MASK, learn_env, mask, mask_file_text, mask_json, mask_text

HF_BAD, HF_GOOD = "hf_abcdefghijklmnop1234", "hf_zyxwvutsrqponml9876"
OPENAI = "sk-proj-0123456789abcdefXYZ"
API_KEY = "lab-key-0123456789"  # no known token shape: found by its flag
URL_PASSWORD = "s3cr3t-Pa55"
PLAIN = "correct horse battery staple"  # no shape at all: found by its name
SECRETS = (HF_BAD, HF_GOOD, OPENAI, API_KEY, URL_PASSWORD, PLAIN)


def _toml(env: dict[str, str]) -> str:
    return "{ " + ", ".join(f'{k} = "{v}"' for k, v in sorted(env.items())) + " }"


def _secret_lab(tmp_path: Path) -> Path:
    """The seed lab launched with secrets; the good baseline had another HF_TOKEN."""
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    config = (lab / "debug-agent.toml").read_text()
    env = {
        **lab_env(),
        "DB_PASSWORD": PLAIN,
        "HF_ENDPOINT": f"https://alice:{URL_PASSWORD}@mirror.example.com/hub",
    }
    config = config.replace(
        f"env = {_toml(lab_env())}", f"env = {_toml({**env, 'HF_TOKEN': HF_BAD})}"
    )
    config = config.replace("--port {port}", f"--api-key {API_KEY} --port {{port}}")
    config = config.replace(
        "[bench]", f"[baseline]\nenv = {_toml({**env, 'HF_TOKEN': HF_GOOD})}\n\n[bench]"
    )
    assert HF_BAD in config and HF_GOOD in config
    (lab / "debug-agent.toml").write_text(config)
    return lab


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_no_secret_anywhere_in_a_session_or_the_outputs(tmp_path: Path) -> None:
    lab = _secret_lab(tmp_path)
    done = investigate_seed(lab, "--max-launches", "6", env={"OPENAI_API_KEY": OPENAI})
    assert done.returncode == 0, done.stderr[-3000:]
    assert _leaks(done.stdout + done.stderr) == []
    result = json.loads(done.stdout)
    session = Path(result["session_dir"])
    files = [p for p in session.rglob("*") if p.is_file()]
    assert any(p.name == "checkpoints.sqlite" for p in files)
    assert any(p.name.startswith("server-") for p in files)
    for path in files:
        assert _leaks(path.read_bytes().decode("utf-8", "replace")) == [], path
        if path.suffix == ".json":  # masked by value: every JSON file still parses
            json.loads(path.read_text())
    state = json.loads((session / "state.json").read_text())
    assert any(c["id"] == "env-HF_TOKEN" for c in state["candidates"])
    # the server really ran with them: its log shows the key, masked
    logs = "".join(p.read_text() for p in files if p.name.startswith("server-"))
    assert re.search(r"api_key='\*\*\*[0-9a-f]{6}'", logs)

    diff = run_cli("diff", "--json", cwd=lab)
    assert diff.returncode == 0 and _leaks(diff.stdout) == []
    hf = next(c for c in json.loads(diff.stdout)["candidates"] if c.get("name") == "HF_TOKEN")
    assert hf["good"].startswith(MASK) and hf["bad"].startswith(MASK)
    assert hf["good"] != hf["bad"], "two different secrets must stay told apart"

    raw_log = tmp_path / "raw.log"
    raw_log.write_text(
        f"[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m', "
        f"api_key='{API_KEY}', tp_size=8)\nerror: HF_TOKEN={HF_BAD} rejected "
        f"by https://alice:{URL_PASSWORD}@mirror.example.com\n"
    )
    parsed = run_cli("logs", "parse", str(raw_log), "--json")
    assert parsed.returncode == 0 and _leaks(parsed.stdout) == []
    assert json.loads(parsed.stdout)["server_args"]["tp_size"] == 8


def test_masks_keep_ordinary_text_and_tell_values_apart() -> None:
    code = "    token = tokenizer.encode(prompt)\n    max_new_tokens = 32\n"
    assert mask_text(code) == code
    line = (
        "python -m sglang.launch_server --tokenizer-path /m --api-key abc123xyz "
        "--max-new-tokens 32 OPENAI_API_KEY='q9q9q9q9' url=https://u:pw123@h/x"
    )
    out = mask_text(line)
    assert "abc123xyz" not in out and "q9q9q9q9" not in out and "pw123" not in out
    assert "--tokenizer-path /m" in out and "--max-new-tokens 32" in out
    values = mask(
        {
            "HF_TOKEN": "aaaa1111",
            "OTHER_TOKEN": "aaaa1111",
            "API_KEY": "bbbb2222",
            "prompt_tokens": 12,
            "tokenizer_path": "/models/x",
        }
    )
    assert values["HF_TOKEN"] == values["OTHER_TOKEN"] != values["API_KEY"]
    assert values["prompt_tokens"] == 12 and values["tokenizer_path"] == "/models/x"
    # a setting about a credential is not one: ray.init sets RAY_AUTH_MODE=token, and masking
    # "token" everywhere once broke the names in the code debug-agent reads
    settings = {"RAY_AUTH_MODE": "token", "HF_TOKEN_PATH": "/etc/hf", "AUTH_TYPE": "bearer"}
    assert mask(settings) == settings
    learn_env(settings)
    assert mask_text("max_new_tokens: 32 tokens, bearer token") == (
        "max_new_tokens: 32 tokens, bearer token"
    )
    # HTTP headers: a bearer token or a kebab-named credential (curl -H in a bench command);
    # Python's annotation of such a name is no value
    headers = (
        'curl -H "Authorization: Bearer s3cr3tT0k3nV" -H "X-Api-Key: k3yk3yk3y" '
        "-H 'Authorization: Basic dXNlcjpwYXNz' Private-Token: gl1234567890"
    )
    out = mask_text(headers)
    for secret in ("s3cr3tT0k3nV", "k3yk3yk3y", "dXNlcjpwYXNz", "gl1234567890"):
        assert secret not in out, out
    annotated = "    api_key: Optional[str] = None\n    x-request-id: 1234567890\n"
    assert mask_text(annotated) == annotated


# keys a masker may take for credentials, values that look like secrets or like syntax
_KEYS = st.sampled_from(
    ["env-HF_TOKEN", "auth-1", "hunk-auth.py-2", "api_key", "password", "tokenizer_path", "x"]
) | st.text(max_size=12)
_STRINGS = st.sampled_from(
    [
        'KEY = \\"x1y2z3w4\\"',
        '"auth": {',
        "--api-key abc123xyz",
        "https://u:pw123@h/x",
        "hf_abcdefghijklmnop1234",
        "TOKEN='q9q9q9q9'",
        "Authorization: Bearer abcdefgh12",
        "X-Api-Key: {",
        "{",
        "\\",
    ]
) | st.text(max_size=40)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _STRINGS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=20,
)


def _keys(value: object) -> object:
    """The document's shape: its keys, its lists' lengths, its leaves' types."""
    if isinstance(value, dict):
        return {k: _keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_keys(v) for v in value]
    return type(value).__name__


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_any_json_document_masked_parses_with_the_same_keys(document: object) -> None:
    for text in (mask_json(document), mask_file_text("state.json", json.dumps(document))):
        assert _keys(json.loads(text)) == _keys(document)
    lines = json.dumps(document) + "\n" + json.dumps([document]) + "\n"
    for line in mask_file_text("transcript.jsonl", lines).splitlines():
        json.loads(line)
