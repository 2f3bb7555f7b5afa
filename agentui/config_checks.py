"""The values an endpoint is configured with (`[llm]` and its tiers): a base URL and an API key,
checked here so no command meets a bad one later."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator


def check_api_key(key: str | None) -> str | None:
    """An API key goes into an HTTP header: no control characters, Latin-1 only."""
    if key is None:
        return None
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in key):
        raise ValueError("the API key contains a control character (a pasted newline?); set it again")
    try:
        key.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError("the API key has characters an HTTP header cannot carry; set it again") from None
    return key


def _is_ip(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def check_base_url(url: str | None, *, example: str = "") -> str | None:
    """An endpoint URL, checked here so no command meets a bad one later: http(s), a host,
    a port in 1–65535. The value is kept as given (the client adds ``/v1`` when missing)."""
    if url is None:
        return None
    text = url.strip()
    example = example or "give an http(s) URL such as http://127.0.0.1:8080/v1"
    if not text:
        raise ValueError(f"the endpoint URL is empty; {example}")
    parts = urlsplit(text if "://" in text else "http://" + text)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{url!r} is not an http(s) URL; {example}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{url!r} has an invalid port (ports are 1–65535); {example}") from None
    if not parts.hostname:
        raise ValueError(f"{url!r} has no host; {example}")
    host = parts.hostname
    try:  # names (IDNA, as httpx will encode them), IPv4, IPv6 (unbracketed here)
        ok = _is_ip(host) or (
            bool(re.fullmatch(r"[\w~-]+(\.[\w~-]+)*\.?", host)) and bool(host.encode("idna")))
    except UnicodeError:
        ok = False
    if not ok:
        raise ValueError(f"{url!r} has an invalid host {host!r}; {example}")
    if port == 0:
        raise ValueError(f"{url!r} has port 0 (ports are 1–65535); {example}")
    if any(c.isspace() for c in text):
        raise ValueError(f"{url!r} contains spaces; {example}")
    return text


# one rule per value wherever an endpoint is configured ([llm] and its tiers): checked on load and on assignment
BaseUrl = Annotated[str | None, AfterValidator(check_base_url)]
ApiKey = Annotated[str | None, AfterValidator(check_api_key)]
