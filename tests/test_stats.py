"""The decision rule on numbers whose answer is known."""

from __future__ import annotations

import pytest

from agent.stats import Noise, calibrate, launch_value, pooled_noise, score

BAD = [29.1, 28.8, 29.3]
GOOD = [19.0, 19.2, 18.9]


def test_pooled_noise_uses_replicates_only() -> None:
    noise = pooled_noise([[1.0, 3.0], [10.0], [5.0, 5.0, 8.0]], scale=5.0)
    assert noise.df == 3
    assert noise.sigma == pytest.approx(((2 + 6) / 3) ** 0.5)
    assert pooled_noise([[4.0]], scale=5.0).df == 0


def test_a_launch_is_its_median_or_its_best_request() -> None:
    slowed = [51.1, 59.6, 60.3, 32.3, 28.4]  # an H200 launch whose host slowed for seconds
    assert launch_value(slowed, "median", worse="higher") == 51.1
    assert launch_value(slowed, "best", worse="higher") == 28.4
    assert launch_value([900.0, 450.0, 880.0], "best", worse="lower") == 900.0  # tok/s


def test_three_way_verdicts() -> None:
    noise = pooled_noise([BAD, GOOD], scale=19.0)
    assert score([19.1], BAD, GOOD, noise).verdict == "restored"
    assert score([29.0], BAD, GOOD, noise).verdict == "none"
    half = score([24.1], BAD, GOOD, noise)
    assert half.verdict == "partial" and half.r == pytest.approx(0.5, abs=0.05)
    reproduced = score([29.0], BAD, GOOD, noise, against="good")
    assert reproduced.verdict == "restored" and reproduced.r == pytest.approx(1.0, abs=0.05)


def test_noisy_single_launch_is_unknown() -> None:
    wide = Noise(sigma=4.0, df=2)
    assert score([23.0], BAD, GOOD, wide).verdict == "unknown"


def test_calibration_decides_only_with_enough_evidence() -> None:
    noise = pooled_noise([BAD, GOOD], scale=19.0)
    assert calibrate(BAD, GOOD, noise, "higher", 5).status == "regression"
    # faster, not slower: not the regression the symptom describes
    assert calibrate(GOOD, BAD, noise, "higher", 5).status != "regression"
    same = [19.1, 18.9, 19.0]
    flat = pooled_noise([same, GOOD], scale=19.0)
    assert calibrate(same, GOOD, flat, "higher", 5).status == "no_regression"
    assert calibrate([19.1], [19.0], Noise(sigma=0.1, df=0), "higher", 5).status == "unknown"
