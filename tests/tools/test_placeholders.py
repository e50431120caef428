"""Placeholders in a config's commands: a misspelt or misplaced one is one line when the config
is read; a server's own format strings and JSON pass as written; {python} is filled inside a
word too (`bash -c '{python} -m x'`)."""

from __future__ import annotations

import re

import pytest

from tools.config import ConfigError, TargetConfig
from tools.errors import first_problem

LAUNCH = "{python} -m server --port {port}"


def _config(launch: str, **sections: dict) -> TargetConfig:
    from pydantic import ValidationError

    try:
        return TargetConfig.model_validate({"launch": {"command": launch}, **sections})
    except ValidationError as e:
        raise ConfigError(first_problem(e)) from None


@pytest.mark.parametrize(
    ("launch", "sections", "says"),
    [
        (
            "{python} -m server --port {prot}",
            {},
            "launch.command holds {prot}, which is no placeholder: did you mean {port}?",
        ),
        ("{pyhton} -m server --port {port}", {}, "did you mean {python}?"),
        (
            LAUNCH + " --root {worktree}",
            {},
            "launch.command holds {worktree}, which only other commands fill",
        ),
        (
            LAUNCH,
            {"baseline": {"command": LAUNCH + " --u {base_url}"}},
            "baseline.command holds {base_url}",
        ),
        (
            LAUNCH,
            {"bench": {"kind": "command", "command": "x {base_ur}", "metric_regex": "(x)"}},
            "did you mean {base_url}?",
        ),
        (LAUNCH, {"build": {"command": "make -C {worktre}"}}, "build.command holds {worktre}"),
    ],
)
def test_a_placeholder_the_command_cannot_hold_is_one_line(
    launch: str, sections: dict, says: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        _config(launch, **sections)


def test_format_strings_json_and_brace_lists_pass_as_written() -> None:
    launch = LAUNCH + " --log-format '{time} {message}' --json '{\"a\": 1}' --pick '{a,b}'"
    config = _config(launch)
    argv = config.launch_argv(8000, python="/py")
    assert argv[-5:] == ["{time} {message}", "--json", '{"a": 1}', "--pick", "{a,b}"]


def test_a_library_bench_as_the_launch_holds_a_benchs_placeholders() -> None:
    bench = {
        "kind": "command",
        "command": "{python} bench.py {worktree} {config_dir}",
        "metric_regex": "(x)",
    }
    config = TargetConfig.model_validate({"bench": bench})
    assert config.bench_only


def test_python_inside_a_word_is_filled() -> None:
    config = _config("bash -c '{python} -m server --port {port}'")
    assert config.launch_argv(8000, python="/py") == ["bash", "-c", "/py -m server --port 8000"]
