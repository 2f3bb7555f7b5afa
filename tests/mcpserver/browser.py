"""A stand-in web browser for the tests (issue #40): `python -m tests.mcpserver.browser URL` GETs URL,
following redirects, as a browser does with an OAuth authorization URL: the test server's /authorize
answers at once with a redirect to the client's callback at 127.0.0.1, which this then requests.

Meant as the BROWSER environment variable, which Python's `webbrowser` honours:
`BROWSER="python -m tests.mcpserver.browser %s"` (from the repository root, or with it on PYTHONPATH;
`python tests/mcpserver/browser.py %s` works from anywhere). With `%s` in BROWSER, `webbrowser`
splits the command with shlex, puts the URL in place of `%s` as one argument, runs it and waits for
it to exit, and `webbrowser.open` returns whether it exited 0: so a client that opens the browser on
the event loop that also serves its callback deadlocks until the timeout below.

It writes the final status to stderr, appends the URL it was given to the file named by
AGENTUI_TEST_BROWSER_LOG if set, and exits 0 once any page answered (a browser shows error pages
too), or 1 with a one-line message when a server refused the connection or did not answer in time.
"""

from __future__ import annotations

import os
import sys

import httpx

TIMEOUT_S = 15.0


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.mcpserver.browser URL", file=sys.stderr)
        return 2
    url = argv[0]
    log = os.environ.get("AGENTUI_TEST_BROWSER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(url + "\n")
    try:
        with httpx.Client(follow_redirects=True, timeout=TIMEOUT_S, trust_env=False) as client:
            response = client.get(url)
    except httpx.ConnectError as exc:
        print(f"test browser: could not connect to {_where(exc, url)}: {_line(exc)}", file=sys.stderr)
        return 1
    except httpx.TimeoutException as exc:
        print(f"test browser: no answer from {_where(exc, url)} within {TIMEOUT_S:g} s", file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:
        print(f"test browser: {type(exc).__name__} at {_where(exc, url)}: {_line(exc)}", file=sys.stderr)
        return 1
    print(f"test browser: {response.status_code} {response.reason_phrase} from {response.url}", file=sys.stderr)
    return 0


def _line(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _where(exc: httpx.HTTPError, url: str) -> str:
    """The URL being requested when it failed: after redirects, not the one given."""
    try:
        return str(exc.request.url)
    except RuntimeError:  # no request attached
        return url


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
