"""Releases between two versions, from a wheel folder and from an index's JSON API served on
127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tools.stack.releases import (
    SIMPLE_JSON,
    ReleasesError,
    between,
    releases_in_folder,
    releases_on_index,
)

FILES = [
    "markdown2-2.5.0-py3-none-any.whl",
    "markdown2-2.5.1-py3-none-any.whl",
    "markdown2-2.5.1.tar.gz",
    "markdown2-2.5.2rc1-py3-none-any.whl",
    "markdown2-2.5.2-py3-none-any.whl",
    "markdown2-2.5.3-py3-none-any.whl",
    "markdown2-2.5.4-py3-none-any.whl",
    "markdown-3.3-py3-none-any.whl",  # another project
    "README.txt",
]


def test_from_a_wheel_folder(tmp_path: Path) -> None:
    for name in FILES:
        (tmp_path / name).write_bytes(b"")
    found = releases_in_folder(tmp_path, "Markdown2")
    assert between(found, "2.5.0", "2.5.3") == ["2.5.1", "2.5.2"]
    assert between(found, "2.5.3", "2.5.0") == ["2.5.1", "2.5.2"]  # a downgrade too
    assert between(found, "2.5.0", "2.5.2rc1") == ["2.5.1"]  # pre-releases where an end is one
    assert between(found, "2.5.1", "2.5.4") == ["2.5.2", "2.5.3"]
    with pytest.raises(ReleasesError, match="not a folder"):
        releases_in_folder(tmp_path / "none", "markdown2")


class Index(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/simple/markdown2/":
            files = [{"filename": f, "yanked": f.startswith("markdown2-2.5.2-")} for f in FILES]
            body, kind = json.dumps({"meta": {"api-version": "1.1"}, "files": files}), SIMPLE_JSON
        elif self.path == "/simple/html-only/":
            body, kind = "<html></html>", "text/html"
        elif self.path == "/simple/odd-files/":  # an AttributeError once
            body, kind = json.dumps({"files": [1, 2]}), SIMPLE_JSON
        elif self.path == "/simple/endless/":  # read whole once: the run hung
            self.send_response(200)
            self.send_header("Content-Type", SIMPLE_JSON)
            self.end_headers()
            with contextlib.suppress(OSError):
                while True:
                    self.wfile.write(b" " * 1_000_000)
            return
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


def test_from_an_index(index: str) -> None:
    found = releases_on_index(index, "Markdown2")
    assert between(found, "2.5.0", "2.5.4") == ["2.5.1", "2.5.3"]  # 2.5.2 was yanked
    for name, says in [
        ("nothere", "not on the index"),
        ("html-only", "not its JSON API"),
        ("odd-files", "sent a project page without files"),
        ("endless", "sent over 134,217,728 bytes, or too slowly"),
    ]:
        with pytest.raises(ReleasesError, match=says):
            releases_on_index(index, name)
    for unreachable in ("http://127.0.0.1:9/simple", "http://[::1", "not a url"):
        with pytest.raises(ReleasesError, match="cannot list the releases"):
            releases_on_index(unreachable, "markdown2", timeout_s=2)


def test_an_index_past_certificates_that_are_not_there_is_one_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A missing SSL_CERT_FILE was a FileNotFoundError out of httpx (an internal error)."""
    monkeypatch.setenv("SSL_CERT_FILE", "/no/such/bundle.pem")
    with pytest.raises(ReleasesError, match="SSL_CERT_FILE or SSL_CERT_DIR name cannot be read"):
        releases_on_index("https://127.0.0.1:9/simple", "slowlib")
