"""Module summaries kept between runs: parsing a served model's ~1000 modules is the cost of
`paths`, and an SGLang tree rarely changes between two runs.

One JSON file per source tree under the state folder, each entry keyed by the file's size and
mtime (a file that changed is parsed again), or, for facts read from a text that a rule may
have blanked lines of, by the text's digest. Unreadable or unwritable cache files are ignored:
the cache only saves time.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tools.folders import state_dir

VERSION = 1  # of the summary format: another version's entries are not read


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(errors="replace"), digest_size=16).hexdigest()


class SummaryCache:
    def __init__(self, tree: Path) -> None:
        key = hashlib.sha1(os.fsencode(tree.resolve())).hexdigest()[:16]
        self.file = state_dir() / "paths-cache" / f"{key}.json"
        self.entries: dict[str, list] = {}
        self.changed = False
        try:
            data = json.loads(self.file.read_text())
            if data.get("version") == VERSION:
                self.entries = data["entries"]
        except (OSError, ValueError, KeyError, AttributeError):
            pass

    @staticmethod
    def _stamp(path: Path) -> list[int] | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        return [stat.st_size, stat.st_mtime_ns]

    def get(self, path: Path) -> dict | None:
        entry = self.entries.get(str(path))
        if entry and entry[0] == self._stamp(path) and isinstance(entry[1], dict):
            return entry[1]
        return None

    def put(self, path: Path, summary: dict) -> None:
        stamp = self._stamp(path)
        if stamp is not None:
            self.entries[str(path)] = [stamp, summary]
            self.changed = True

    def get_for_text(self, path: Path, kind: str, text: str) -> dict | None:
        """The `kind` of facts about `path` as `text` reads (a rule may have blanked lines)."""
        entry = self.entries.get(f"{kind}:{path}")
        if entry and entry[0] == _digest(text) and isinstance(entry[1], dict):
            return entry[1]
        return None

    def put_for_text(self, path: Path, kind: str, text: str, facts: dict) -> None:
        self.entries[f"{kind}:{path}"] = [_digest(text), facts]
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"version": VERSION, "entries": self.entries}))
            tmp.replace(self.file)
            self.changed = False
        except OSError:
            pass
