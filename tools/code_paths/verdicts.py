"""One file's verdict (on / off / unknown) and its evidence, from the selection and the imports.

The order of evidence: the registry (or an older layout's branches) for backend modules, the
model classes for model files, then the import chain from a root; what did not reach a file
(an import under a GPU guard false here, an import by an unselected backend) is quoted too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tools.code_paths.branches import MLA_FLAG, Condition, Registration, mentions_mla
from tools.code_paths.closure import Closure
from tools.code_paths.elsewhere import elsewhere, package_texts
from tools.code_paths.imports import Reach, chain, lookup_in
from tools.code_paths.layout import SGLANG, Layout
from tools.code_paths.modules import ModuleGraph, expression
from tools.code_paths.other_models import defined_models, other_models
from tools.code_paths.serving import Serving
from tools.gpu.guards import decide
from tools.gpu.info import GpuInfo

Status = Literal["on", "off", "unknown"]


class FileVerdict(BaseModel):
    path: str
    status: Status
    evidence: list[str]


@dataclass
class Judge:
    """What one `paths` run knows: the selection, the log, the GPU, and (once `reach` ran) the
    import chains; `verdict` turns that into one file's status and evidence."""

    graph: ModuleGraph
    pkg: Path
    registrations: list[Registration]
    servings: list[Serving]  # the target model, and the draft when there is one
    server_args: dict
    args_line: int | None
    gpu: GpuInfo | None
    served: dict[str, str | None]  # architecture -> the model file defining it
    log_text: str = ""
    found: Reach = field(default_factory=lambda: Reach({}, {}, {}))
    stops: set[Path] = field(default_factory=set)  # unselected backends' modules, not reached
    other_models: set[Path] = field(default_factory=set)  # model files of models not served
    closure: Closure | None = None  # every file the server could import, at any level
    layout: Layout = SGLANG

    def gpu_line(self) -> str:
        gpu = self.gpu
        return f"the GPU: {gpu.describe()} ({gpu.source})" if gpu else "the GPU is not known"

    @property
    def active(self) -> set[str]:
        return {b for s in self.servings for b in s.backends}

    def per_model(self, r: Registration, c: Condition) -> tuple[bool | None, list[str]]:
        """A test of the model's attention kind (`use_mla_backend`), for each model whose
        runner builds this backend; a draft's backends also read the target's flag (SGLang's
        draft backends ask the global server args), so both are tried."""
        target = self.servings[0] if self.servings else None
        results: list[bool | None] = []
        evidence: list[str] = []
        lookup = lookup_in(self.graph, self.pkg / r.source)
        for s in self.servings:
            if r.backend not in s.backends:
                continue
            kinds = {s.mla, target.mla if target and s.role == "draft" else s.mla}
            for mla in kinds:
                if mla is None:
                    results.append(None)
                    continue
                value = decide(
                    expression(c.test), lookup, self.gpu or GpuInfo(source=""), {MLA_FLAG: mla}
                ).value
                results.append(None if value is None else value == c.when)
            evidence.append(
                f"the {s.role} model {s.architecture or '(architecture unknown)'} "
                f"{'is not' if s.mla is False else 'is' if s.mla else 'may be'} an MLA "
                f"architecture ({self.layout.model_config or 'the release'})"
            )
        if any(results):
            return True, evidence
        return (False if results and None not in results else None), evidence

    def holds(self, r: Registration, c: Condition) -> tuple[bool | None, list[str]]:
        """Whether a module's condition holds here, by the log's server_args, the models'
        attention kind or the GPU."""
        by_args = c.holds(self.server_args)
        if by_args is not None:
            return by_args, [f"the log's server_args has {c.flag}={self.server_args[c.flag]!r}"]
        if mentions_mla(expression(c.test)):
            return self.per_model(r, c)
        if self.gpu is None or c.flag is not None:
            return None, []
        lookup = lookup_in(self.graph, self.pkg / r.source)
        decision = decide(expression(c.test), lookup, self.gpu)
        if decision.value is None:
            return None, []
        verdict = "holds" if decision.value == c.when else "is false"
        return decision.value == c.when, [
            *decision.notes,
            f"`{c.test}` {verdict} on this GPU",
            self.gpu_line(),
        ]

    def roots(self) -> dict[Path, str]:
        """Modules every serving process imports: the selected backends', the model's file,
        the model runner; and the HTTP server's, where the log shows it ran."""
        roots: dict[Path, str] = {}
        for r in self.registrations:
            if r.backend not in self.active:
                continue
            held = [c.module for c in r.conditional if self.holds(r, c)[0]]
            for module in [*r.modules, *held]:
                if (self.pkg / module).is_file():
                    roots.setdefault(
                        self.pkg / module,
                        f"the selected attention backend {r.backend!r}, {r.source}:{r.line}",
                    )
        for s in self.servings:
            file = self.served.get(s.architecture or "")
            if file:
                roots.setdefault(self.pkg / file, f"the {s.role} model {s.architecture}")
        for path, why in self.layout.process_roots(
            self.pkg, self.log_text, bool(self.servings)
        ).items():
            roots.setdefault(path, why)
        return roots

    def backend(self, rel: str, users: list[Registration]) -> tuple[list[str], Status]:
        """The selections that use `rel`, and whether one of the active backends really does."""
        evidence: list[str] = []
        status: Status = "off"
        for r in users:
            condition = next((c for c in r.conditional if c.module == rel), None)
            if condition is None:
                evidence.append(f"{r.source}:{r.line}: {r.selector} uses {rel}")
                status = "on" if r.backend in self.active else status
                continue
            evidence.append(
                f"{r.source}:{r.line}: {r.selector} uses {rel} only "
                f"{'if' if condition.when else 'if not'} {condition.test}"
            )
            if r.backend in self.active and status != "on":
                holds, why = self.holds(r, condition)
                evidence += why
                status = "unknown" if holds is None else ("on" if holds else status)
        where = f" ({self.layout.args_name} at log line {self.args_line})" if self.args_line else ""
        resolved = "; ".join(
            f"the {s.role} ({s.architecture or 'architecture unknown'}) builds "
            f"{', '.join(s.backends) or 'no known backend'}"
            for s in self.servings
        )
        how = [e for s in self.servings for e in s.evidence if "backend" in e]
        return [*evidence, f"{resolved or 'no backend known'}{where}", *how], status

    @property
    def served_known(self) -> bool:
        """Every served model's architecture is known and its file found."""
        return bool(self.servings) and all(
            self.served.get(s.architecture or "") for s in self.servings
        )

    def other_model_files(self) -> set[Path]:
        """The files of models the server does not serve (other_models.py); none where a
        served model's file is not known."""
        if not self.served_known:
            return set()
        reached = self.found.via.keys() | self.found.roots.keys()
        return other_models(
            self.pkg,
            self.graph,
            reached,
            package_texts(self.pkg),
            self.layout.model_dirs,
            self.layout.processor_dirs,
            self.layout.model_glob,
        )

    @cached_property
    def stop_imports(self) -> dict[Path, list[tuple[Path, int]]]:
        """What the unselected backends and the other models' files (not on the path, not
        followed) import: file -> (that module, line of its first import of it)."""
        found: dict[Path, list[tuple[Path, int]]] = {}
        for stop in sorted(self.stops | self.other_models):
            summary = self.graph.summary(stop)
            firsts: dict[Path, int] = {}
            for stmt in summary.imports if summary else []:
                for target in self.graph.targets(stmt):
                    firsts.setdefault(target, stmt.line)
            for target, line in firsts.items():
                found.setdefault(target, []).append((stop, line))
        return found

    @cached_property
    def world_bounds(self) -> tuple[frozenset[str] | None, frozenset[str]]:
        """The files the server can import at all (None: not known) and those the selection
        decided off, package-relative, for elsewhere()."""
        runs = None if self.closure is None else self._relative(self.closure.files)
        return runs, self._relative(self.stops | self.other_models)

    def _relative(self, paths: Iterable[Path]) -> frozenset[str]:
        return frozenset(p.relative_to(self.pkg).as_posix() for p in paths)

    def not_reached(self, path: Path) -> list[str]:
        """Why no chain reaches `path`: imports under a false GPU guard, or by a dead end."""
        shown = self.graph.display
        lines = []
        for blocked in self.found.blocked.get(path, [])[:3]:
            hop = blocked.hop
            lines.append(
                f"{shown(hop.importer)}:{hop.line} imports it only "
                f"{blocked.guard}, which is false on this GPU"
            )
            lines += blocked.notes
        if lines:
            lines = [*dict.fromkeys(lines), self.gpu_line()]  # guards share their aliases
        for stop, line in self.stop_imports.get(path, []):
            why = (
                "is a file of models the server does not serve (their registry imports "
                "it, but the server builds only the served models' classes)"
                if stop in self.other_models
                else "belongs to a backend the server did not select, which no module on the "
                "path imports"
            )
            lines.append(f"{shown(stop)}:{line} imports it, but {shown(stop)} {why}")
        return lines

    def model_verdict(self, given: str, rel: str, reached: bool) -> FileVerdict:
        """A model file (the layout's model folders): on when an import chain reaches it, off
        when it defines only other models than the ones served, each served model's file found."""
        path = self.pkg / rel
        defined = defined_models(self.graph, path)
        evidence = [f"{rel} defines {', '.join(defined) or 'no model class'}"]
        for s in self.servings:
            file = self.served.get(s.architecture or "")
            evidence.append(
                f"the {s.role} model is {s.architecture} (defined in {file or 'no file found'})"
                if s.architecture
                else f"the {s.role} model's architecture is not known"
            )
        if reached:
            return FileVerdict(
                path=given,
                status="on",
                evidence=[*evidence, *chain(self.graph, self.found, path)],
            )
        return FileVerdict(
            path=given,
            status="off" if defined and self.served_known else "unknown",
            evidence=[*evidence, *self.not_reached(path)],
        )

    def verdict(self, given: str, rel: str) -> FileVerdict:
        path = self.pkg / rel
        reached = self.found.via.get(path) is not None or path in self.found.roots
        users = sorted(
            (
                r
                for r in self.registrations
                if rel in r.modules or any(c.module == rel for c in r.conditional)
            ),
            key=lambda r: (r.backend not in self.active, r.line),
        )
        if users and self.active:
            evidence, status = self.backend(rel, users)
            if status != "on" and reached:
                return FileVerdict(
                    path=given,
                    status="on",
                    evidence=[
                        *evidence,
                        *chain(self.graph, self.found, path),
                        "it is not the selected backend, but an on-path module imports it at "
                        "module "
                        "level: its module-level code runs, and what that module uses from it",
                    ],
                )
            if status == "off":
                evidence += self.not_reached(path)
            return FileVerdict(path=given, status=status, evidence=evidence)
        if self.layout.is_model_file(rel) and self.servings:
            return self.model_verdict(given, rel, reached)
        if reached:
            return FileVerdict(
                path=given, status="on", evidence=chain(self.graph, self.found, path)
            )
        if self.closure and path.is_file() and path not in self.closure.files:
            return FileVerdict(
                path=given,
                status="off",
                evidence=[
                    "nothing the server can run names it: no import of it at any level (in "
                    "functions too), no dynamic import that can reach it and no string naming "
                    f"it in the {len(self.closure.files)} of {self.closure.searched} files "
                    "reachable from the server's processes and entry points",
                    *self.not_reached(path),
                ],
            )
        apart = elsewhere(rel, self.pkg, self.gpu, *self.world_bounds)
        if apart:
            return FileVerdict(path=given, status="off", evidence=apart)
        return FileVerdict(
            path=given,
            status="unknown",
            evidence=[
                "no module-level import chain reaches it from the selected backend, the served "
                "model or the model runner"
                if self.servings
                else "no server_args in the log to judge against",
                *self.not_reached(path),
            ],
        )
