"""Refresh the web page's pictures in docs/ (docs/screenshot.png, docs/screenshot-conflict.png).

The test run never writes into the checkout: the browser tests whose names end in
``_screenshot`` save their pictures in pytest's ``tmp_path``. This script runs exactly
those tests with ``RAG_LAB_SCREENSHOTS`` pointing at ``docs/``, so the pictures are the
ones the tests check. Needs the ``test`` extra and Chromium (``.ci/install-browser``).

    python scripts/refresh_screenshots.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
DOCS = CHECKOUT / "docs"
PICTURES = ("screenshot.png", "screenshot-conflict.png")


def main() -> int:
    before = {name: (DOCS / name).stat().st_mtime_ns if (DOCS / name).exists() else None for name in PICTURES}
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "screenshot",
        str(CHECKOUT / "tests" / "server" / "test_server_browser.py"),
    ]
    done = subprocess.run(command, cwd=CHECKOUT, env={**os.environ, "RAG_LAB_SCREENSHOTS": str(DOCS)}, check=False)
    if done.returncode != 0:
        print("refresh_screenshots: the screenshot tests failed; docs/ may be partly updated", file=sys.stderr)
        return done.returncode
    stale = [name for name in PICTURES if not (DOCS / name).exists() or (DOCS / name).stat().st_mtime_ns == before[name]]
    if stale:
        print(f"refresh_screenshots: not written: {', '.join(stale)} (were the tests skipped?)", file=sys.stderr)
        return 1
    for name in PICTURES:
        print(f"wrote docs/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
