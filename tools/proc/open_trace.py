"""Which of the tree's non-Python files the launch opened: the import trace's companion for data.

A tuning JSON, a config or a binary table matters only if some process reads it, and reading
starts with an open, in any language (Python, a C++ extension, a Rust tokenizer, a shell). The
kernel reports each open of a watched file through inotify (Linux), whoever opens it, so the
files are watched from before the launch to after its benchmark. A file that was watched and
never opened was not read; one that was not watched (no inotify here, the watch limit reached,
a remote node) proves nothing. An open is all it sees: a file only tested for existence
(`os.path.exists`) leaves no trace, so an added or deleted file is not judged by it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel


class OpenTrace(BaseModel):
    watched: list[str] = []  # repo-relative paths watched for the whole launch
    opened: list[str] = []  # of those, the ones some process opened


class Watch:
    """Reads the kernel's open events for the watched files; `trace` says what was opened."""

    def __init__(self, tree: Path, paths: Iterable[str]) -> None:
        self.by_wd: dict[int, str] = {}
        self.opened: set[str] = set()
        self.overflowed = False
        self.inotify = None
        paths = sorted(set(paths))
        if not paths:  # no instance: their number per user is limited (128 by default)
            return
        try:
            from inotify_simple import INotify, flags
        except (ImportError, OSError):  # not Linux
            return
        try:
            self.inotify = INotify()
        except OSError:  # the instance limit reached
            return
        for rel in paths:
            path = tree / rel
            if path.is_symlink() or not path.is_file():
                continue  # a link's own text is never opened, only read with readlink
            try:
                self.by_wd[self.inotify.add_watch(str(path), flags.OPEN)] = rel
            except OSError:  # the watch limit reached: what is not watched proves nothing
                break

    def drain(self) -> None:
        if self.inotify is None:
            return
        from inotify_simple import flags

        for event in self.inotify.read(timeout=0):
            if event.mask & flags.Q_OVERFLOW:
                self.overflowed = True
            elif event.wd in self.by_wd:
                self.opened.add(self.by_wd[event.wd])

    def trace(self) -> OpenTrace:
        self.drain()
        if self.overflowed:  # events were lost: nothing can be said to be unopened
            return OpenTrace()
        return OpenTrace(watched=sorted(self.by_wd.values()), opened=sorted(self.opened))

    def close(self) -> None:
        if self.inotify is not None:
            self.inotify.close()


@contextmanager
def watch_opens(tree: Path, paths: Iterable[str]) -> Iterator[Watch]:
    """Watch `paths` (relative to `tree`) for opens until the block ends."""
    watch = Watch(tree, paths)
    try:
        yield watch
    finally:
        watch.close()
