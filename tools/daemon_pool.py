"""Calls run on daemon threads, each answered by a concurrent.futures Future, for callers
that give up on a call at a deadline (a server that never answers a bench request, a model
endpoint that sends its reply a byte at a time). ThreadPoolExecutor's workers are joined
when the interpreter exits: after a SIGTERM, one request stuck in its read kept the agent
alive for ever, its cleanup done. A daemon thread is left to the process's end."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")
_Call = tuple[Future, Callable[[], object]]


class DaemonPool:
    def __init__(self, workers: int, name: str) -> None:
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._workers = workers
        for i in range(workers):
            threading.Thread(target=self._work, daemon=True, name=f"{name}-{i}").start()

    def submit(self, call: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self._calls.put((future, call))
        return future

    def _work(self) -> None:
        while (item := self._calls.get()) is not None:
            future, call = item
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(call())
            except BaseException as e:  # the caller's to raise, as Future.result does
                future.set_exception(e)

    def shutdown(self) -> None:
        """Cancel the calls not started; the workers end once their call returns, if ever."""
        while True:
            try:
                item = self._calls.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        for _ in range(self._workers):
            self._calls.put(None)
