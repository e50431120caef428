"""Which files of the tree the launch opened: the import trace's companion for data files.

A tuning JSON, a config or a binary table matters only if some process reads it, and reading
starts with an open, in any language (Python, a C++ extension, a Rust tokenizer, a shell). The
kernel reports each open in a watched folder through inotify (Linux), whoever opens it, so the
folders of the changed files are watched from before the launch (and its build step) to after
its benchmark, and the events are read as they come (no queue overflow). A file that was
watched and never opened was not read; one that was not watched (no inotify here, the watch
limit reached, a remote node), or that was moved, replaced or deleted meanwhile, proves nothing.
The caller checks that the watch saw the launch at all: the files the import trace shows
loaded from those folders must show as opened. An open is all it sees: a file only tested for
existence (`os.path.exists`) leaves no trace, so an added or deleted file is not judged by it.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel


class OpenTrace(BaseModel):
    watched: list[str] = []  # repo-relative paths of the files in the watched folders
    opened: list[str] = []  # of those, the ones some process opened
    # changed files opened in the user's checkout instead (an absolute path in a config, say):
    # what the scratch tree holds does not change what the launch reads there
    in_checkout: list[str] = []

    @cached_property
    def watched_set(self) -> frozenset[str]:
        return frozenset(self.watched)

    @cached_property
    def opened_set(self) -> frozenset[str]:
        return frozenset(self.opened)

    @cached_property
    def read_set(self) -> frozenset[str]:
        """Opened in the scratch tree or in the user's checkout."""
        return frozenset(self.opened + self.in_checkout)


class Watch:
    """Reads the kernel's events for the watched folders on a thread until `trace`."""

    def __init__(self, tree: Path, paths: Iterable[str], checkout: Path | None = None) -> None:
        self.folders: dict[int, str] = {}  # watch descriptor -> repo-relative folder
        self.in_checkout: dict[int, str] = {}  # the same folders in the user's checkout
        self.changed = set(paths)
        self.opened: set[str] = set()
        self.checkout_opened: set[str] = set()
        self.lost: set[str] = set()  # moved, replaced or deleted: nothing is known of them
        self.overflowed = False
        self.tree = tree
        self.inotify = None
        self.stop = threading.Event()
        folders = sorted({posixpath.dirname(p) for p in self.changed})
        if not folders:  # no instance: their number per user is limited (128 by default)
            return
        try:
            from inotify_simple import INotify, flags
        except (ImportError, OSError):  # not Linux
            return
        try:
            self.inotify = INotify()
        except OSError:  # the instance limit reached
            return
        mask = flags.OPEN | flags.ATTRIB | flags.CREATE | flags.DELETE | flags.MOVED_FROM
        mask |= flags.MOVED_TO | flags.DELETE_SELF | flags.MOVE_SELF | flags.ONLYDIR
        for folder in folders:
            try:
                self.folders[self.inotify.add_watch(str(tree / folder), mask)] = folder
                if checkout is not None and (checkout / folder).is_dir():
                    wd = self.inotify.add_watch(str(checkout / folder), flags.OPEN | flags.ONLYDIR)
                    self.in_checkout[wd] = folder
            except OSError:  # gone, or the watch limit reached: unwatched proves nothing
                continue
        self.reader = threading.Thread(target=self._read, daemon=True, name="open-trace")
        self.reader.start()

    def _read(self) -> None:
        assert self.inotify is not None
        while not self.stop.is_set():
            try:
                self._take(self.inotify.read(timeout=50))
            except OSError:  # closed under it: nothing more to read
                return

    def _take(self, events: list) -> None:
        from inotify_simple import flags

        for event in events:
            folder = self.folders.get(event.wd)
            if event.wd in self.in_checkout and event.mask & flags.OPEN and event.name:
                self.checkout_opened.add(posixpath.join(self.in_checkout[event.wd], event.name))
            elif event.mask & flags.Q_OVERFLOW:
                self.overflowed = True
            elif folder is None or event.mask & flags.IGNORED:
                continue
            elif event.mask & (flags.DELETE_SELF | flags.MOVE_SELF):
                self.lost.add(folder + "/")
            elif event.name:
                rel = posixpath.join(folder, event.name)
                (self.opened if event.mask & flags.OPEN else self.lost).add(rel)

    def trace(self) -> OpenTrace:
        """What was opened, of the files in the watched folders (stops the reading)."""
        if self.inotify is None:
            return OpenTrace()
        self.stop.set()
        self.reader.join()
        self._take(self.inotify.read(timeout=0))  # what came after the thread's last read
        if self.overflowed:  # events were lost: nothing is known unopened
            return OpenTrace()
        gone = {f.rstrip("/") for f in self.lost if f.endswith("/")}
        watched = {
            posixpath.join(folder, name)
            for folder in self.folders.values()
            if folder not in gone
            for name in _files(self.tree / folder)
        } - self.lost
        return OpenTrace(
            watched=sorted(watched),
            opened=sorted(self.opened & watched),
            in_checkout=sorted(self.checkout_opened & self.changed),
        )

    def close(self) -> None:
        if self.inotify is not None:
            self.stop.set()
            self.reader.join()
            self.inotify.close()


def _files(folder: Path) -> list[str]:
    """The folder's plain files (a link is read with readlink, never opened)."""
    try:
        return [e.name for e in folder.iterdir() if e.is_file() and not e.is_symlink()]
    except OSError:
        return []


@contextmanager
def watch_opens(tree: Path, paths: Iterable[str], checkout: Path | None = None) -> Iterator[Watch]:
    """Watch the folders of `paths` (relative to `tree`, and in `checkout`, the user's own
    working tree, which the launch should not read) for opens until the block ends."""
    watch = Watch(tree, paths, checkout)
    try:
        yield watch
    finally:
        watch.close()
