"""The decision rule on numbers whose answer is known."""

from __future__ import annotations

import math

import pytest

from agent.stats import Noise, calibrate, launch_value, pooled_noise, score

BAD = [29.1, 28.8, 29.3]
GOOD = [19.0, 19.2, 18.9]


def test_pooled_noise_uses_replicates_only() -> None:
    noise = pooled_noise([[1.0, 3.0], [10.0], [5.0, 5.0, 8.0]])
    assert noise.df == 3
    ln = [math.log(v) for v in (1.0, 3.0, 5.0, 5.0, 8.0)]
    ss = sum((v - (ln[0] + ln[1]) / 2) ** 2 for v in ln[:2]) + sum(
        (v - sum(ln[2:]) / 3) ** 2 for v in ln[2:]
    )
    assert noise.sigma == pytest.approx((ss / 3) ** 0.5)
    assert pooled_noise([[4.0]]).df == 0


def test_noise_is_relative_so_levels_far_apart_pool_honestly() -> None:
    # 5 % launch noise at 15 ms and at 60 ms is one noise, not 0.75 ms and 3 ms
    at_15, at_60 = [15.0 * f for f in (0.95, 1.0, 1.05)], [60.0 * f for f in (0.95, 1.0, 1.05)]
    assert pooled_noise([at_15]).sigma == pytest.approx(pooled_noise([at_60]).sigma)
    assert pooled_noise([at_15, at_60]).sigma == pytest.approx(0.05, rel=0.01)


def test_one_slowed_launch_at_the_bad_level_does_not_hide_a_restore() -> None:
    # a CI run of the tp lab on a 2-core VM: one bad launch and one revert launch slowed 2x as
    # a whole; in absolute units the bad level's 60 ms outlier made sigma 24 ms and the revert
    # stayed "unknown" after 4 launches (p = 0.019); relative noise sees what happened
    bad, good = [55.0, 53.0, 64.0, 115.0], [14.5, 13.0, 18.0, 15.0]
    revert = [37.6, 15.0, 16.0]
    noise = pooled_noise([bad, good, revert])
    assert score(revert, bad, good, noise).verdict == "restored"


def test_a_launch_is_its_median_or_its_best_request() -> None:
    slowed = [51.1, 59.6, 60.3, 32.3, 28.4]  # an H200 launch whose host slowed for seconds
    assert launch_value(slowed, "median", worse="higher") == 51.1
    assert launch_value(slowed, "best", worse="higher") == 28.4
    assert launch_value([900.0, 450.0, 880.0], "best", worse="lower") == 900.0  # tok/s


def test_three_way_verdicts() -> None:
    noise = pooled_noise([BAD, GOOD])
    assert score([19.1], BAD, GOOD, noise).verdict == "restored"
    assert score([29.0], BAD, GOOD, noise).verdict == "none"
    half = score([23.6, 23.4], BAD, GOOD, noise)  # the geometric middle: r is on a log scale
    assert half.verdict == "partial" and half.r == pytest.approx(0.5, abs=0.05)
    # one launch between the ends may be a launch the machine slowed: a second one decides
    assert score([23.5], BAD, GOOD, noise).verdict == "unknown"
    reproduced = score([29.0], BAD, GOOD, noise, against="good")
    assert reproduced.verdict == "restored" and reproduced.r == pytest.approx(1.0, abs=0.05)


def test_noisy_single_launch_is_unknown() -> None:
    wide = Noise(sigma=0.2, df=2)
    assert score([23.0], BAD, GOOD, wide).verdict == "unknown"


MARGIN = math.log(29 / 19) / 2  # half the gap "verify 29ms (was 19)" implies


def test_calibration_decides_only_with_enough_evidence() -> None:
    noise = pooled_noise([BAD, GOOD])
    assert calibrate(BAD, GOOD, noise, "higher", 5, MARGIN).status == "regression"
    # faster, not slower: not the regression the symptom describes
    assert calibrate(GOOD, BAD, noise, "higher", 5, MARGIN).status != "regression"
    same = [19.1, 18.9, 19.0]
    flat = pooled_noise([same, GOOD])
    assert calibrate(same, GOOD, flat, "higher", 5, MARGIN).status == "no_regression"
    unmeasured = Noise(sigma=0.005, df=0)
    assert calibrate([19.1], [19.0], unmeasured, "higher", 5, MARGIN).status == "unknown"


def test_no_regression_is_shown_by_an_equivalence_test_not_assumed() -> None:
    """A flat result on noisy launches is not "no regression" until the gap is significantly
    under the margin; after the cap it is inconclusive (within this bench's noise)."""
    noisy_bad, noisy_good = [19.0, 24.0, 16.0], [18.0, 23.0, 15.5]
    noise = pooled_noise([noisy_bad, noisy_good])  # about 20 % launch noise
    small_margin = math.log(1.05)
    assert calibrate(noisy_bad, noisy_good, noise, "higher", 5, small_margin).status == "unknown"
    capped = calibrate(noisy_bad, noisy_good, noise, "higher", 3, small_margin)
    assert capped.status == "inconclusive" and "within this bench's noise" in capped.reason
    assert calibrate(noisy_bad, noisy_good, noise, "higher", 5, MARGIN).status == "unknown"
    wide = math.log(29 / 10) / 2  # "29ms (was 10)": a gap this noise can rule out
    assert calibrate(noisy_bad, noisy_good, noise, "higher", 5, wide).status == "no_regression"


def test_no_search_verdict_without_measured_noise() -> None:
    """One launch each: whatever the values, every comparison is unknown (no assumed noise)."""
    unmeasured = pooled_noise([[29.0], [19.0], [19.1]])
    assert unmeasured.df == 0
    assert score([19.1], [29.0], [19.0], unmeasured).verdict == "unknown"
    measured = Noise(sigma=0.01, df=2)
    assert score([19.1], [29.0, 29.2], [19.0, 19.1], measured, alpha=0.05).verdict == "restored"
