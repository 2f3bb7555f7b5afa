"""Search tools: `file_search` (Spotlight, fd or find) and `web_search` (DuckDuckGo HTML)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentui.contracts import ToolCallRecord
from agentui.tools import fsaccess, nearby, safety
from agentui.tools.registry import BaseTool, ToolContext, gate, resolve_in, shown
from agentui.tools.shell import run_process, sandboxed

WEB_SEARCH_URL = "https://html.duckduckgo.com/html/"
WEB_SEARCH_URL_ENV = "AGENTUI_WEB_SEARCH_URL"
WEB_SEARCH_MAX_RESULTS = 8
FILE_SEARCH_MAX_RESULTS = 200
FILE_SEARCH_MAX_LINES = 50
FILE_SEARCH_MAX_BYTES = 1_000_000
_USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) agentui"


class FileSearchTool(BaseTool):
    name = "file_search"
    description = ("Find files whose name contains `query` (or matches it, for a glob like *.md) under `path` "
                   "(default: the workspace); when `path` is a file, its lines containing `query`.")
    brief = "find files by name under path (a folder); in a file, its lines containing query"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "part of a file name"},
            "path": {"type": "string", "description": "directory to search (or a file to search inside)"},
        },
        "required": ["query"],
    }

    def __init__(self, platform: str = sys.platform) -> None:
        self.platform = platform

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return str(args["query"])

    def command(self, query: str, root: str) -> list[str]:
        if re.search(r"[*?\[]", query):  # a glob (`*.md`) names whole files, as find -iname reads it
            return ["find", root, "-name", ".git", "-prune", "-o", "-iname", query, "-print"]
        if self.platform == "darwin" and shutil.which("mdfind"):
            return ["mdfind", "-onlyin", root, "-name", query]
        fd = shutil.which("fd") or shutil.which("fdfind")
        if fd:
            return [fd, "--ignore-case", "--fixed-strings", "--absolute-path", "--", query, root]
        pattern = "*" + re.sub(r"([*?\[\]\\])", r"\\\1", query) + "*"
        return ["find", root, "-name", ".git", "-prune", "-o", "-iname", pattern, "-print"]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        query: str = args["query"].strip()
        if not query:
            return self.fail(args, "empty query")
        root = resolve_in(ctx.workspace, args.get("path") or ".")
        real = Path(os.path.realpath(root))
        if real.parts[:2] in (("/", "proc"), ("/", "sys")):
            return self.fail(args, f"file_search does not search {root}: it is a kernel view of processes and "
                                   "devices, not files (use shell, e.g. ls, for a look)")
        if not root.is_dir():
            if root.is_file():
                return await self._in_file(args, query, root, ctx)
            near = await asyncio.to_thread(nearby.hint, ctx.workspace, [args.get("path") or "."])
            return self.fail(args, f"not a directory: {shown(ctx.workspace, root)}{near}")
        denial = await gate(ctx, self.name, f"{query} under {root}", safety.assess_read(root, ctx.workspace,
                                                                                         tool=self.name))
        if denial:
            return self.fail(args, denial)
        argv = self.command(query, str(root))
        result = await run_process(sandboxed(argv, ctx), cwd=ctx.workspace, timeout_s=ctx.timeout_s,
                                   merge_stderr=False)
        paths = sorted(line for line in result.output.splitlines() if line.strip())
        if result.timed_out:
            partial = "\n".join(paths[:FILE_SEARCH_MAX_RESULTS])
            return self.fail(args, f"{argv[0]} timed out after {ctx.timeout_s:g}s", evidence=partial)
        if not paths:
            if result.returncode not in (0, None) and result.stderr.strip():
                return self.fail(args, f"{os.path.basename(argv[0])} failed: {result.stderr.strip()[:500]}")
            return self.ok(args, await asyncio.to_thread(
                nearby.content_hint, ctx.workspace, root, query,
                f"no files matching {query!r} under {shown(ctx.workspace, root)}"))
        text = "\n".join(shown(ctx.workspace, p) for p in paths[:FILE_SEARCH_MAX_RESULTS])
        if len(paths) > FILE_SEARCH_MAX_RESULTS:
            text += f"\n… [{len(paths) - FILE_SEARCH_MAX_RESULTS} more; narrow the query or path]"
        return self.ok(args, text)

    async def _in_file(self, args: dict[str, Any], query: str, path: Any, ctx: ToolContext) -> ToolCallRecord:
        """`path` is a file: its lines holding `query` (in any letter case), as grep -in prints them,
        rather than "is a file, not a directory" (a search in one file is a search all the same)."""
        ws = os.path.realpath(ctx.workspace)
        rel = fsaccess.relative_in(Path(ws), Path(os.path.realpath(path)))
        if rel is None or rel == ".":
            return self.fail(args, f"{args.get('path')} is a file, not a directory: use read_file or shell "
                                   f"(e.g. grep) to look inside it")
        denial = await gate(ctx, self.name, f"{query} in {path}", safety.assess_read(path, ctx.workspace,
                                                                                    tool=self.name))
        if denial:
            return self.fail(args, denial)
        try:
            data, _size = await asyncio.to_thread(fsaccess.read_beneath, Path(ws), rel, FILE_SEARCH_MAX_BYTES)
        except OSError as exc:
            return self.fail(args, f"cannot read {shown(ctx.workspace, path)}: {exc.strerror or exc}")
        name = shown(ctx.workspace, path)
        if fsaccess.looks_binary(data):
            return self.ok(args, f"{name} is a binary file; no text to search")
        needle = query.casefold()
        hits = [f"{name}:{i}: {line[:300]}" for i, line in
                enumerate(data.decode("utf-8", "replace").splitlines(), 1) if needle in line.casefold()]
        if not hits:
            return self.ok(args, f"{name} is a file; none of its lines contains {query!r}")
        more = f"\n… [{len(hits) - FILE_SEARCH_MAX_LINES} more lines]" if len(hits) > FILE_SEARCH_MAX_LINES else ""
        return self.ok(args, "\n".join(hits[:FILE_SEARCH_MAX_LINES]) + more +
                       f"\n({name} is a file: these are its lines containing {query!r}, in any letter case)")


class WebSearchTool(BaseTool):
    name = "web_search"
    description = "Search the web (DuckDuckGo); returns titles, links and snippets."
    brief = "search the web"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }

    def __init__(self, url: str | None = None) -> None:
        self.url = url

    def endpoint(self) -> str:
        """The env override wins, then the configured url, then DuckDuckGo's HTML endpoint."""
        return os.environ.get(WEB_SEARCH_URL_ENV) or self.url or WEB_SEARCH_URL

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return str(args["query"])

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        import httpx  # imported lazily: only this tool needs it

        query: str = args["query"].strip()
        if not query:
            return self.fail(args, "empty query")
        url = self.endpoint()
        host = urlsplit(url).netloc or url
        # the query leaves the machine: ask, showing exactly what is sent where
        denial = await gate(ctx, self.name, query, safety.assess_call(
            self.name, {"query": query}, network=(url,), reason=f"sends this query to {host}"))
        if denial:
            return self.fail(args, denial)
        timeout = httpx.Timeout(min(ctx.timeout_s, 20.0))
        try:
            async with httpx.AsyncClient(
                timeout=timeout, follow_redirects=True, headers={"User-Agent": _USER_AGENT}
            ) as client:
                response = await asyncio.wait_for(
                    client.post(url, data={"q": query}), ctx.timeout_s
                )
        except (httpx.TransportError, OSError, TimeoutError) as exc:
            detail = str(exc) or type(exc).__name__
            return self.fail(args, f"offline: could not reach {host} ({detail})")
        if response.status_code >= 400:
            return self.fail(args, f"web search failed: HTTP {response.status_code} from {host}")
        results = parse_results(response.text)[:WEB_SEARCH_MAX_RESULTS]
        if not results:
            return self.ok(args, f"no results for {query!r}")
        lines = []
        for i, (title, link, snippet) in enumerate(results, 1):
            lines.append(f"{i}. {title}\n   {link}" + (f"\n   {snippet}" if snippet else ""))
        return self.ok(args, "\n".join(lines))


def parse_results(html: str) -> list[tuple[str, str, str]]:
    """(title, link, snippet) triples from a DuckDuckGo HTML (or lite) result page."""
    parser = _ResultParser()
    parser.feed(html)
    parser.close()
    return [(t, link, s) for t, link, s in parser.results if t and link]


_TITLE_CLASSES = {"result__a", "result-link"}
_SNIPPET_CLASSES = {"result__snippet", "result-snippet"}


class _ResultParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[tuple[str, str, str]] = []
        self._field: str | None = None  # "title" or "snippet" while capturing
        self._tag = ""
        self._depth = 0
        self._buf: list[str] = []
        self._title = ""
        self._link = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._field is not None:
            if tag == self._tag:
                self._depth += 1
            return
        attr = dict(attrs)
        classes = set((attr.get("class") or "").split())
        if classes & _TITLE_CLASSES:
            self._flush()
            self._start("title", tag)
            self._link = _unwrap_link(attr.get("href") or "")
        elif classes & _SNIPPET_CLASSES and self._title:
            self._start("snippet", tag)

    def handle_endtag(self, tag: str) -> None:
        if self._field is None or tag != self._tag:
            return
        if self._depth > 0:
            self._depth -= 1
            return
        text = " ".join("".join(self._buf).split())
        if self._field == "title":
            self._title = text
        else:
            self.results.append((self._title, self._link, text))
            self._title = self._link = ""
        self._field = None

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self._buf.append(data)

    def close(self) -> None:
        super().close()
        self._flush()

    def _start(self, field: str, tag: str) -> None:
        self._field, self._tag, self._depth, self._buf = field, tag, 0, []

    def _flush(self) -> None:
        if self._title and self._link:  # a result without a snippet
            self.results.append((self._title, self._link, ""))
        self._title = self._link = ""


def _unwrap_link(href: str) -> str:
    """DuckDuckGo wraps result links as //duckduckgo.com/l/?uddg=<target>."""
    if href.startswith("//"):
        href = "https:" + href
    parts = urlsplit(href)
    if parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg")
        if target:
            return target[0]
    return href
