"""Messages between the main process and the schedulers.

SGLang uses ZMQ sockets; the lab uses a multiprocessing pipe with a lock for writers. `put` sends
synchronously: a queue's feeder thread would wait for the GIL while the scheduler computes.
"""

from __future__ import annotations

import queue


class Channel:
    def __init__(self, ctx) -> None:
        self._reader, self._writer = ctx.Pipe(duplex=False)
        self._lock = ctx.Lock()

    def put(self, msg) -> None:
        with self._lock:
            self._writer.send(msg)

    def get(self, timeout: float | None = None):
        if timeout is not None and not self._reader.poll(timeout):
            raise queue.Empty
        return self._reader.recv()

    def get_nowait(self):
        return self.get(timeout=0)
