"""The releases of a package between two versions: what a search goes through once a package is
the culprit, like commits between two tags.

Read from a wheel folder (file names, as `pip download` writes them) or from a package index's
JSON simple API (PEP 691: the files of each project, yanked ones marked). Pre-releases count only
where one end is a pre-release (as pip chooses), yanked files never; a release is one version
however many files it has.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from tools.errors import ToolError
from tools.json_text import parse_json

if TYPE_CHECKING:
    import httpx

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
INDEX_LIMIT = 128 << 20  # bytes of one project's page: torch's, thousands of files, is a few MB
PYPI = "https://pypi.org/simple"


def index_url(configured: str | None) -> str:
    """The index uv installs from: the configured one, uv's own variables, else PyPI."""
    return (
        configured or os.environ.get("UV_INDEX_URL") or os.environ.get("UV_DEFAULT_INDEX") or PYPI
    )


class ReleasesError(ToolError):
    pass


def version_of(filename: str, name: str) -> Version | None:
    """The version a distribution file holds, when it is one of `name`'s."""
    try:
        if filename.endswith(".whl"):
            project, version, *_ = parse_wheel_filename(filename)
        else:
            project, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return version if project == canonicalize_name(name) else None


def between(versions: set[Version], good: str, bad: str) -> list[str]:
    """The versions strictly between `good` and `bad` (either order), oldest first."""
    low, high = sorted((Version(good), Version(bad)))
    pre = low.is_prerelease or high.is_prerelease
    return [str(v) for v in sorted(versions) if low < v < high and (pre or not v.is_prerelease)]


def releases_in_folder(folder: Path, name: str) -> set[Version]:
    if not folder.is_dir():
        raise ReleasesError(f"the wheel folder {folder} is not a folder")
    found = (version_of(p.name, name) for p in folder.iterdir())
    return {v for v in found if v is not None}


def _check_answer(answer: httpx.Response, url: str, name: str, index_url: str) -> None:
    if answer.status_code == 404:
        raise ReleasesError(f"{name} is not on the index {index_url}")
    if answer.status_code != 200 or SIMPLE_JSON not in answer.headers.get("content-type", ""):
        raise ReleasesError(
            f"the index at {url} answered {answer.status_code} "
            f"({answer.headers.get('content-type', 'no type')}), not its JSON API (PEP 691)"
        )


def releases_on_index(index_url: str, name: str, timeout_s: float = 30.0) -> set[Version]:
    """From `{index_url}/{name}/` (PEP 691 JSON), e.g. https://pypi.org/simple."""
    import httpx

    from tools.server_http import environment_problem, read_body

    url = f"{index_url.rstrip('/')}/{canonicalize_name(name)}/"
    try:
        with (
            httpx.Client(timeout=timeout_s, follow_redirects=True) as client,
            client.stream("GET", url, headers={"Accept": SIMPLE_JSON}) as answer,
        ):
            _check_answer(answer, url, name, index_url)
            body = read_body(answer, INDEX_LIMIT, 4 * timeout_s)
    except (httpx.HTTPError, httpx.InvalidURL) as e:
        raise ReleasesError(f"cannot list the releases of {name} at {url}: {e}") from None
    except (OSError, ImportError) as e:  # the environment's certificates or proxy: say which
        why = environment_problem() or e
        raise ReleasesError(f"cannot list the releases of {name} at {url}: {why}") from None
    if body is None:
        raise ReleasesError(f"the index at {url} sent over {INDEX_LIMIT:,} bytes, or too slowly")
    try:
        files = parse_json(body)["files"]
        found = {version_of(f["filename"], name) for f in files if not f.get("yanked")}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ReleasesError(f"the index at {url} sent a project page without files: {e}") from None
    return {v for v in found if v is not None}
