#!/usr/bin/env python3
"""A deliberately slow OpenAI-compatible endpoint: a proxy that holds back every completion.

For trying agentui the way a user meets a busy or loading server: `/v1/models` answers at once,
while each `/v1/chat/completions` (and `/v1/completions`) reply starts only after a delay, then
streams through unchanged.

Usage:
    python scripts/slowproxy.py --upstream http://127.0.0.1:8080/v1 --port 8099 --delay 30
    # then point agentui at http://127.0.0.1:8099/v1
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

import httpx

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host",
       "proxy-connection", "te", "trailer", "upgrade"}
SLOW_PATHS = ("/chat/completions", "/completions")


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    return method, path, headers, body


class Proxy:
    def __init__(self, upstream: str, delay_s: float) -> None:
        self.upstream = upstream.rstrip("/")
        self.delay_s = delay_s
        self.client = httpx.AsyncClient(timeout=None)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            req = await read_request(reader)
        except (asyncio.IncompleteReadError, ValueError, ConnectionError):
            writer.close()
            return
        if req is None:
            return
        method, path, headers, body = req
        # the proxy is mounted at /v1 like the upstream: forward the path below /v1 as is
        sub = path[3:] if path.startswith("/v1") else path
        slow = sub.split("?")[0].endswith(SLOW_PATHS)
        started = time.monotonic()
        fwd = {k: v for k, v in headers.items() if k not in HOP}
        try:
            if slow and self.delay_s:
                await asyncio.sleep(self.delay_s)
            async with self.client.stream(method, self.upstream + sub, headers=fwd,
                                          content=body) as resp:
                out = [f"HTTP/1.1 {resp.status_code} {resp.reason_phrase}"]
                out += [f"{k}: {v}" for k, v in resp.headers.items() if k.lower() not in HOP]
                out += ["transfer-encoding: chunked", "connection: close", "", ""]
                writer.write("\r\n".join(out).encode("latin-1"))
                async for chunk in resp.aiter_raw():
                    writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
            print(f"{method} {path} -> {resp.status_code} in {time.monotonic() - started:.1f} s"
                  f"{' (held ' + str(self.delay_s) + ' s)' if slow else ''}", file=sys.stderr)
        except (httpx.HTTPError, ConnectionError) as e:
            msg = f"upstream error: {e}".encode()
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: " + str(len(msg)).encode()
                         + b"\r\nconnection: close\r\n\r\n" + msg)
        finally:
            try:
                await writer.drain()
                writer.close()
            except ConnectionError:
                pass


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True, help="the real server's /v1 URL")
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--delay", type=float, default=30.0, help="seconds before each completion starts")
    a = ap.parse_args()
    proxy = Proxy(a.upstream, a.delay)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", a.port)
    print(f"slow proxy on http://127.0.0.1:{a.port}/v1 -> {a.upstream} (completions held {a.delay} s)",
          file=sys.stderr)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
