"""`debug-agent replay SESSION --rerun`: re-measure a session's decisive configurations here.

Calibration (bad, good) and confirmation (the culprits reverted, the culprits applied) are
launched again on this machine, in a new session linked to the old one, and each result is
judged as it was: does it still hold?
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from agent.levels import between, noise, update_levels
from agent.runner import Runner
from agent.session import new_session_id
from agent.sessions import final_state
from agent.state import Failure, InvestigationState
from agent.transcript import Transcript, read_transcript
from tools.config import load_config
from tools.errors import ToolError
from tools.own_files import replace_text
from tools.repo.target import target_candidates
from tools.secrets import mask_text


def _target(old: InvestigationState, header: dict) -> Path:
    target = Path(old.config_path)
    if (target / "debug-agent.toml").exists():
        return target
    if header.get("lab") == "seed":  # the committed example: rebuild the lab it ran on
        from tools.lab.create import TEMP_PREFIXES, create_lab

        lab = Path(tempfile.mkdtemp(prefix=TEMP_PREFIXES[1])) / "lab"
        create_lab("seed", lab)
        return lab
    raise ToolError(f"the session's target {target} is gone; nothing to re-run it on")


def rerun(session: Path, sessions: Path, echo=None) -> dict:
    old = final_state(session, "did not finish: nothing to re-run")
    header = read_transcript(session / "transcript.jsonl").header.model_dump(by_alias=True)
    target = _target(old, header)
    try:
        return _rerun(old, header, target, sessions, echo)
    finally:
        if target != Path(old.config_path):  # a lab rebuilt for this re-run
            from tools.lab.create import remove_lab

            remove_lab(target)


def _rerun(old: InvestigationState, header: dict, target: Path, sessions: Path, echo=None) -> dict:
    config = load_config(target)
    cands = target_candidates(config, target)
    live, saved = [c.id for c in cands.candidates], [c.id for c in old.candidates]
    if live != saved:
        if [mask_text(i) for i in live] == saved:  # the same changes, some named like a token
            raise ToolError(
                "the session saved some candidates under masked names (a file named like a "
                "credential): it cannot say which change each one is; investigate again"
            )
        raise ToolError(
            "the target's candidates differ from the session's: the re-run would "
            "not test the same changes"
        )
    new = _new_session(old, target, sessions)
    transcript = Transcript(Path(new.session_dir) / "transcript.jsonl", echo=echo)
    transcript.header(
        {
            "session": new.session_id,
            "rerun_of": old.session_id,
            "symptom": old.symptom.model_dump(),
            "lab": header.get("lab"),
            "target": {"repo": str(target), "good": config.target.good},
        }
    )
    _remeasure(old, new, Runner(config, target, cands), transcript)
    update_levels(new)
    checks = _checks(old, new)
    for check in checks:
        transcript.event(
            "rerun",
            "verdict",
            f"{check['check']}: {'holds' if check['holds'] else 'does NOT hold'}",
            **check,
        )
    result = {
        "session": new.session_id,
        "rerun_of": old.session_id,
        "status": old.status,
        "holds": all(c["holds"] for c in checks),
        "checks": checks,
        "launches": new.launches,
        "session_dir": new.session_dir,
    }
    replace_text(Path(new.session_dir) / "result.json", json.dumps(result, indent=2))
    return result


def _new_session(old: InvestigationState, target: Path, sessions: Path) -> InvestigationState:
    """The old session's state in a new session folder, its launches not yet made."""
    new_id = new_session_id()
    new = old.model_copy(
        deep=True,
        update={
            "session_id": new_id,
            "session_dir": str(sessions / new_id),
            "config_path": str(target),
            "launches": 0,
            "result": None,
        },
    )
    for cfg in new.configs.values():
        cfg.launches, cfg.failures, cfg.level = [], [], None
    Path(new.session_dir).mkdir(parents=True)
    return new


def _remeasure(
    old: InvestigationState, new: InvestigationState, runner: Runner, transcript: Transcript
) -> None:
    """One launch each of the references and of the confirmation's two counterfactuals."""
    keys = [old.bad_key, old.good_key]
    if old.confirmation:
        keys += [old.confirmation.revert_key, old.confirmation.apply_key]
    for request, key in enumerate(keys, 1):
        outcome = runner.launch(new, new.configs[key], request)
        new.launches += 1
        if isinstance(outcome, Failure):
            new.configs[key].failures.append(outcome)
            transcript.event(
                "rerun",
                "error",
                f"{new.configs[key].label}: unresolved ({outcome.stage}: {outcome.error})",
                config=new.configs[key].label,
            )
            continue
        launch = outcome[0]
        new.configs[key].launches.append(launch)
        transcript.event(
            "rerun",
            "experiment",
            f"{new.configs[key].label}: {new.metric} "
            f"{launch.value:.3g} (was {old.configs[key].mean:.3g})",
            config=new.configs[key].label,
            value=launch.value,
            was=old.configs[key].mean,
        )


def _checks(old: InvestigationState, new: InvestigationState) -> list[dict]:
    """Does each of the old verdicts still hold on the new launches?"""
    checks = []
    if old.confirmation:
        measured = noise(old)  # one launch each: the session's own measure of the noise
        revert = between(
            new, old.confirmation.revert_key, new.bad_key, new.good_key, measured=measured
        )
        apply = between(
            new, old.confirmation.apply_key, new.good_key, new.bad_key, measured=measured
        )
        names = ", ".join(old.confirmation.culprits)
        checks = [
            {
                "check": f"reverting {{{names}}} restores the good value",
                "holds": revert.verdict == "restored",
                "r": round(revert.r, 3),
            },
            {
                "check": f"applying {{{names}}} to good reproduces the regression",
                "holds": apply.verdict == "restored",
                "r": round(apply.r, 3),
            },
        ]
    gap = new.configs[new.bad_key].mean - new.configs[new.good_key].mean
    checks.insert(
        0,
        {
            "check": "the bad state is still slower than the good one",
            "holds": gap * (1 if new.worse == "higher" else -1) > 0,
            "gap": round(gap, 4),
        },
    )
    return checks
