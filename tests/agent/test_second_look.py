"""The first bad commit is launched a second time before the search goes inside it: one
process of a good tree slowed as much as the regression reads at the bad level (werkzeug's
1.6 ms tree read 14 ms in a process slowed 8x, and the search inside that harmless commit
ended "suspected" on a hunk that "restored" it). Here a harmless merge's first process is
slowed by 20 ms a call, the whole regression: the bisection takes it as bad, looks again, and
goes on above it to the culprit."""

from __future__ import annotations

from pathlib import Path

from tests.agent.test_partial_step import past_the_noisy_merge


def test_a_first_bad_commit_bad_on_one_slowed_launch_is_looked_at_again(tmp_path: Path) -> None:
    result, noisy = past_the_noisy_merge(tmp_path, slow=1, extra_s=0.02)
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "the first bad commit, commit " in transcript and "once more" in transcript
    [slowed] = [s for s in result["set_aside"] if s["config"] == f"commit {noisy[:8]}"]
    assert slowed["value"] > 15 and slowed["why"].startswith("slowed: "), slowed
