"""`debug-agent chat`: the investigation, driven from a prompt.

Slash commands work offline; the engine advances only on /run, and asks before every launch
(a LangGraph interrupt: the launch happens after the answer, never before) unless --yes.
"""

from __future__ import annotations

import io
import re
import shlex
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agent.gather import describe
from agent.llm.options import LLMOptions
from agent.relevance import env_arrival
from agent.session import Session, console_echo, target_or_seed_lab
from agent.state import InvestigationState
from agent.symptom import configured_symptom, given_or_configured, parse_symptom
from tools.config import TargetConfig, load_config
from tools.config_values import env_pair
from tools.errors import ToolError
from tools.experiment import ExperimentOptions, ExperimentSpec, run_experiment
from tools.folders import sessions_root
from tools.lab.create import remove_lab

HELP = """commands:
  /facts                what the bad state's server showed
  /diff                 the candidates
  /hypotheses           hypotheses with status, prior, reasons
  /test ID              test this hypothesis first
  /drop ID REASON       drop a hypothesis, with your reason
  /suggest NAME=VALUE   try an env var on the bad state (one launch, asked first)
  /experiment [--revert IDS | --apply IDS] [--env K=V]   one experiment (asked first)
  /run                  let the engine go on (it asks before each launch)
  /budget [N]           show or set the launch budget
  /report               the report (or where things stand)
  /quit                 leave (the session can be resumed)"""


class Chat:
    def __init__(self, console: Console, session: Session, yes: bool) -> None:
        self.console = console
        self.yes = yes
        self.session = session
        self.ctx = session.ctx
        self.folder = session.folder
        self.started = session.first is None  # a reopened session goes on from its checkpoint
        self.done = session.initial().phase == "done"

    def current(self) -> InvestigationState:
        return self.session.current()

    def run(self, resume: bool = True) -> None:
        from langgraph.types import Command

        value: object = (
            self.session.first if not self.started else (Command(resume="skip") if resume else None)
        )
        self.started = True
        while True:
            try:
                result = self.session.run(value)
            except Exception as error:  # noqa: BLE001 - the session still ends with its report
                ended = self.session.fail(error)
                self.done = True
                self.console.print(f"[bold]{ended.get('status')}[/bold]: /report shows the report")
                return
            asks = result.get("__interrupt__") if isinstance(result, dict) else None
            if not asks:
                self.done = True
                status = (
                    (result.get("result") or {}).get("status") if isinstance(result, dict) else None
                )
                self.console.print(f"[bold]{status}[/bold]: /report shows the report")
                return
            what = asks[0].value.get("launch", "?")
            answer = self.ask(f"launch {what}? [y/n] ")
            if answer not in ("y", "yes"):
                self.console.print(
                    "not launched: change things (/drop, /test, /budget) and /run again"
                )
                return
            value = Command(resume="yes")

    def converse(self, line: str, s: InvestigationState) -> None:
        from agent.llm.conversation import converse

        assert self.ctx.reasoner is not None
        answer = converse(
            self.ctx.reasoner, s, line, {c.id for c in self.ctx.runner.cands.candidates}
        )
        if answer.text:
            self.console.print(escape(answer.text))
            self.ctx.transcript.event("chat", "thought", f"model: {answer.text}")
        for error in answer.errors:
            self.console.print(f"[red]{escape(error)}[/red]")
            self.ctx.transcript.event("chat", "error", error)
        for name, args in answer.actions:
            self.ctx.transcript.event("chat", "tool_call", f"model calls {name} {args}", **args)
            if name == "suggest_env":
                self.suggest(f"{args['name']}={args['value']}")
            else:
                kind = "drop" if name == "drop_hypothesis" else "test"
                self.handle(f"/{kind} {args['candidate']} {args.get('reason', '')}".rstrip())

    def raised_budget(self, s: InvestigationState) -> int:
        raised = [d["max_launches"] for d in self.ctx.inbox if d.get("kind") == "budget"]
        return raised[-1] if raised else s.max_launches

    def go_on(self, s: InvestigationState) -> None:
        """The budget stopped the engine and the user raised it: continue where it stopped."""
        budget = self.raised_budget(s)
        self.ctx.inbox = [d for d in self.ctx.inbox if d.get("kind") != "budget"]
        self.session.update(
            {
                "phase": s.stopped_in,
                "stopped_in": None,
                "status": None,
                "result": None,
                "max_launches": budget,
            },
            as_node="judge",
        )
        self.ctx.transcript.event(
            "chat",
            "user",
            f"the user raised the budget to {budget} launches; going on from phase {s.stopped_in}",
        )
        self.done = False
        self.run(resume=False)

    def ask(self, prompt: str) -> str:
        return input(prompt).strip().lower()

    def suggest(self, text: str) -> None:
        try:
            name, value = env_pair(text)
        except ValueError as e:
            self.console.print(f"usage: /suggest NAME=VALUE ({e})", markup=False)
            return
        self.side_experiment(
            ExperimentSpec(base="bad", env={name: value}), f"{name}={value}", watch=(name, value)
        )

    def experiment(self, text: str) -> None:
        spec = ExperimentSpec()
        try:
            words = shlex.split(text)
            if len(words) % 2:
                raise ValueError(f"{words[-1]!r} lacks its value")
            for flag, value in zip(words[::2], words[1::2], strict=True):
                if flag in ("--revert", "--apply"):
                    ids = [i for i in value.split(",") if i]
                    self.ctx.runner.cands.by_id(ids)
                    field = {"--revert": "reverted", "--apply": "applied"}[flag]
                    spec = spec.model_copy(update={field: ids})
                elif flag == "--env":
                    name, value = env_pair(value)
                    spec.env[name] = value
                else:
                    raise ValueError(f"unknown option {flag!r}")
        except ValueError as e:
            self.console.print(
                f"usage: /experiment [--revert IDS | --apply IDS] [--env K=V] ({e})", markup=False
            )
            return
        self.side_experiment(spec, text)

    def side_experiment(
        self, spec: ExperimentSpec, label: str, watch: tuple[str, str] | None = None
    ) -> None:
        """One launch outside the engine's plan, judged against its references."""
        s = self.current()
        if not s.configs.get(s.good_key) or not s.configs[s.good_key].values:
            self.console.print(
                "measure the references first (/run): a suggestion is judged "
                "against the good and bad states"
            )
            return
        what = f"the bad state with {label}" if watch else label
        if not self.yes and self.ask(f"launch {what}? [y/n] ") not in ("y", "yes"):
            return
        runner = self.ctx.runner
        out = self.folder / "side-experiments" / f"{len(list(self.folder.glob('side-*/*')))}"
        result = run_experiment(runner.target, spec, out, ExperimentOptions(metric=s.metric))
        b, g = s.configs[s.bad_key].mean, s.configs[s.good_key].mean
        value = runner.value_of(result, s)
        share = (b - value) / (b - g) if b != g else 0.0
        text = (
            f"{'suggestion' if watch else 'experiment'} {label}: {s.metric} "
            f"{value:.3g} {s.unit}, {share:.0%} of the gap restored"
        )
        if watch:
            arrival = env_arrival(watch[0], watch[1], result.worker_env)
            text += (
                "; whether it reached the workers is unknown (not read)"
                if arrival is None
                else f"; it reached {arrival[0]}/{arrival[1]} {arrival[2]}"
            )
        self.ctx.transcript.event(
            "chat", "experiment", text, spec=spec.model_dump(), value=value
        )  # the echo shows it

    def handle(self, line: str) -> bool:
        """One user line; False to leave."""
        command, _, rest = line.strip().partition(" ")
        s = self.current()
        if not command:
            return True
        if not command.startswith("/"):
            self.ctx.transcript.event("chat", "user", line)
            if self.ctx.reasoner is None:
                self.console.print("free text needs an LLM (--llm-model); try /help")
            else:
                self.converse(line, s)
        elif command == "/quit":
            return False
        elif command in ("/help", "/facts", "/diff", "/hypotheses", "/report"):
            self.show(command, s)
        elif command in ("/drop", "/test", "/budget"):
            self.decide(command, rest, s)
        elif command == "/suggest":
            self.suggest(rest.strip())
        elif command == "/experiment":
            self.experiment(rest)
        elif command == "/run":
            if self.done and s.stopped_in and s.launches < self.raised_budget(s):
                self.go_on(s)
            elif self.done:
                self.console.print("the investigation is over: /report")
            else:
                self.run()
        else:
            self.console.print(f"unknown command {escape(command)}; /help lists them")
        return True

    def show(self, command: str, s: InvestigationState) -> None:
        """/help, /facts, /diff, /hypotheses, /report: offline, from the state."""
        if command == "/help":
            self.console.print(HELP)
        elif command == "/facts":
            for fact in describe(s) or [
                "no facts yet: /run launches the bad and good states once each (with "
                "the import trace) and gathers them"
            ]:
                self.console.print(escape(fact))
        elif command == "/diff":
            for c in self.ctx.runner.cands.candidates:
                self.console.print(
                    escape(f"{c.id}  {c.kind}  {c.file or c.name}  {c.header or ''}")
                )
        elif command == "/hypotheses":
            if not s.hypotheses:
                self.console.print(
                    "no hypotheses yet: /run launches the references, gathers "
                    "their facts and makes every candidate a hypothesis"
                )
            for cid, h in sorted(s.hypotheses.items(), key=lambda kv: -kv[1].prior):
                self.console.print(
                    escape(f"{cid}  {h.status}  prior {h.prior:.2g}  {'; '.join(h.reasons)}")
                )
        else:
            report = self.folder / "report.md"
            self.console.print(
                escape(report.read_text())
                if report.exists()
                else f"not finished: phase {s.phase}, {s.launches} launches"
            )

    def decide(self, command: str, rest: str, s: InvestigationState) -> None:
        """/drop, /test, /budget: the user's decisions, for the plan node at the next /run."""
        if command in ("/drop", "/test"):
            cid, _, reason = rest.partition(" ")
            if cid not in {c.id for c in self.ctx.runner.cands.candidates}:
                self.console.print(f"no hypothesis {escape(repr(cid))} (see /hypotheses)")
            elif command == "/drop" and not reason.strip():  # a drop is recorded with its why
                self.console.print("usage: /drop ID REASON (the reason goes into the transcript)")
            else:
                self.ctx.inbox.append(
                    {"kind": command[1:], "candidate": cid, "reason": reason.strip()}
                )
                self.console.print(f"{command[1:]} {escape(cid)}: applied at the next /run")
        elif not rest.strip():
            self.console.print(f"budget: {s.launches} of {s.max_launches} launches spent")
        elif re.fullmatch(r"[0-9]{1,6}", rest.strip()) and int(rest) >= 2:  # ASCII digits only
            budget = int(rest)
            self.ctx.inbox.append({"kind": "budget", "max_launches": budget})
            spent = f" ({s.launches} are spent: /run stops at once)" if budget <= s.launches else ""
            self.console.print(f"budget: {budget} launches (from the next /run){spent}")
        else:
            self.console.print(
                f"usage: /budget [N], N launches in all (2 to 999999); {s.launches} of "
                f"{s.max_launches} are spent"
            )


def _resumed(console: Console, folder: Path, yes: bool) -> Chat:
    session = Session.reopen(folder, echo=console_echo(console), approve=not yes)
    phase = session.initial().phase
    session.ctx.transcript.event("chat", "thought", f"chat resumed the session at phase {phase}")
    return Chat(console, session, yes)


def _ask_symptom(console: Console, config: TargetConfig, default: str | None) -> str:
    """On a terminal, the symptom is asked for (Enter takes `default`, the config's [symptom]
    default, checked); elsewhere it is the default, or an error."""
    if not sys.stdin.isatty():
        return given_or_configured(None, config, "chat")
    example = f"Enter for {default!r}" if default else 'e.g. "verify 29ms (was 19)"'
    while True:
        try:
            text = input(f"What got worse? ({example}) ").strip() or default
        except EOFError:
            raise ToolError("chat needs a symptom: none was given") from None
        try:
            if text is None:
                raise ToolError('write what got worse, e.g. "verify 29ms (was 19)"')
            parse_symptom(text, config.bench)
            return text
        except ToolError as e:
            console.print(f"[red]{escape(str(e))}[/red]")


def _started(
    console: Console, symptom: str | None, yes: bool, lab_dir: Path | None, llm: LLMOptions | None
) -> Chat:
    """A new session on the target here (or the seed lab); a seed lab built for it is removed
    again where no session starts on it (a bad symptom, none given)."""
    if symptom is not None:
        parse_symptom(symptom)  # a bad symptom fails before anything is built
    target_dir, lab = target_or_seed_lab(Path.cwd(), lab_dir, console)
    try:
        config = load_config(target_dir)
        default = configured_symptom(config)  # a default it cannot read is wrong either way
        symptom = symptom if symptom is not None else _ask_symptom(console, config, default)
        parse_symptom(symptom, config.bench)
        session = Session.start(
            target_dir,
            symptom,
            sessions_root(Path.cwd(), target_dir).resolve(),
            echo=console_echo(console),
            approve=not yes,
            llm=llm,
        )
    except BaseException:
        if lab is not None and lab_dir is None:
            remove_lab(target_dir)
        raise
    return Chat(console, session, yes)


def chat(
    symptom: str | None,
    yes: bool,
    lab_dir: Path | None,
    resume: str | None = None,
    llm: LLMOptions | None = None,
) -> None:
    console = Console(highlight=False, soft_wrap=True)
    if isinstance(sys.stdin, io.TextIOWrapper):  # bytes that are not text read as U+FFFD
        sys.stdin.reconfigure(errors="replace")
    if resume:
        from agent.sessions import find_session

        conversation = _resumed(console, find_session(resume, sessions_root(Path.cwd(), None)), yes)
    else:
        conversation = _started(console, symptom, yes, lab_dir, llm)
    console.print(f"session {conversation.folder.name}. /help for commands; /run starts.")
    try:
        while True:
            try:
                line = input("chat> ")
            except EOFError:
                break
            try:
                if not conversation.handle(line):
                    break
            except ToolError as e:
                console.print(f"[red]error:[/red] {escape(str(e))}")
        state = conversation.current()
        console.print(
            f"left session {conversation.folder.name} at phase {state.phase} "
            f"({state.launches} launches)"
        )
    finally:
        conversation.session.close()
