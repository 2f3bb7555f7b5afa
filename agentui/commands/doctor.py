"""`agentui doctor`: is everything agentui needs here and answering?

Checks, in order: the config (file and where every effective value came from), the data dir
(writable), each LLM endpoint (model list, one tiny completion, latency — within 10 s), and
LevelDB (the memory store opens). Exit 0 if every check passes, 2 if the data dir, the memory
store or an LLM endpoint cannot be used (what `run` stops on with exit 2; a model the server does
not have included), else 1 (an MCP server, the ACP SDK).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def configure(parser: argparse.ArgumentParser) -> None:
    from agentui.cli import positive_float

    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--timeout", type=positive_float, default=10.0, metavar="S",
                        help="seconds allowed for the LLM check (default 10)")


def _check_data_dir(layout) -> Check:  # noqa: ANN001
    from agentui.paths import DataDirError

    try:
        layout.check()
        return Check("data dir", True, f"{layout.root} (writable)")
    except DataDirError as e:
        return Check("data dir", False, str(e).removeprefix("data dir: "))


def _check_leveldb(path: Path, data_dir_ok: bool) -> Check:
    """Opens the store the way agentui does (never recreating a damaged one), then closes it."""
    if not data_dir_ok:
        return Check("leveldb", False, f"{path}: not checked, the data dir is unusable (see above)")
    try:
        from agentui.memory import MemoryDamaged, MemoryInUse, MemoryUnavailable
        from agentui.memory.leveldb import binding, binding_name, classify, close_db, open_db, scan
    except ImportError as e:
        return Check("leveldb", False, f"the LevelDB binding is not installed ({e}); run `make install`")
    try:
        db = open_db(path, wait=2.0)
    except MemoryInUse as e:  # told apart from a permission problem by the OS error (leveldb.classify)
        # another agentui (the TUI, a run) has it open: that is the store working, not failing
        return Check("leveldb", True, f"{e}: not read here while it is open; `run` uses a temporary "
                                      "memory until that process closes it")
    except (MemoryDamaged, MemoryUnavailable) as e:
        return Check("leveldb", False, str(e))
    try:  # read every block with checksums: a table with a flipped byte opens fine and fails here
        n = sum(1 for _ in scan(db, values=False, fill_cache=False))
    except binding().Error as e:
        return Check("leveldb", False, str(classify(path, e)))
    finally:
        close_db(path, db)
    return Check("leveldb", True, f"{path} opens, {n} keys read back ({binding_name()})")


async def _check_llm(config, timeout_s: float) -> tuple[list[Check], bool]:
    """One line per endpoint, and whether a configured model is missing on its server (exit 2)."""
    from agentui.llm import LLMError, LLMPool

    try:
        pool = LLMPool(config)
    except LLMError as e:
        return [Check("llm", False, str(e))], False
    try:
        results = await pool.preflight(timeout_s=timeout_s)
    finally:
        await pool.aclose()
    out = []
    for r in results:
        if r.ok:
            models = ", ".join(r.models[:5]) + (" …" if len(r.models) > 5 else "") if r.models else "(no model list)"
            # llama.cpp's server answers any model name: not listed is a note, the completion decides
            note = (f" (note: {r.model} is not in the server's model list; the server answered anyway)"
                    if r.unlisted else "")
            out.append(Check(f"llm {r.url}", True,
                             f"model {r.model or '?'}; models: {models}; reply {r.reply!r} in {r.latency_s:.2f} s"
                             + note))
        else:
            out.append(Check(f"llm {r.url}", False, r.error))
    return out, any(r.kind == "model_not_found" for r in results)


def _check_mcp(config) -> list[Check]:
    """One line per MCP server: starts, tool count, latency."""
    if not config.mcp.servers:
        return []
    from agentui.mcp.hub import probe_servers

    return [Check(f"mcp {r.name}", r.ok, f"{r.detail} in {r.latency_s:.2f} s" if r.ok else r.detail)
            for r in asyncio.run(probe_servers(config.mcp.servers))]


def _check_acp() -> Check:
    """The ACP SDK and protocol version `agentui acp` speaks."""
    try:
        from agentui.acp.agent import versions
    except ImportError as e:
        return Check("acp", False, f"the ACP SDK is not installed ({e}); run `make install`")
    sdk, proto = versions()
    return Check("acp", True, f"agent-client-protocol {sdk}, ACP protocol version {proto} (agentui acp)")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args
    from agentui.config_write import api_key_from_keychain
    from agentui.paths import DataLayout

    loaded = load_from_args(args)
    api_key_from_keychain(loaded)  # a key saved from Settings (remote endpoints), as the TUI reads it
    cfg = loaded.config
    checks: list[Check] = []
    file_note = "found" if loaded.file_exists else "not present; defaults apply"
    checks.append(Check("config", True, f"{loaded.file} ({file_note})"))
    layout = DataLayout(cfg.data_path())
    dd = _check_data_dir(layout)
    checks.append(dd)
    llm_checks, no_model = asyncio.run(_check_llm(cfg, args.timeout))
    checks.extend(llm_checks)
    store = _check_leveldb(layout.memory_db, dd.ok)
    checks.append(store)
    checks.extend(_check_mcp(cfg))
    checks.append(_check_acp())
    from agentui.tools.sandbox import (
        sandbox_status,  # informational: no sandbox is not a failure
    )

    checks.append(Check("sandbox", True, sandbox_status()))
    ok = all(c.ok for c in checks)
    # a data dir, memory store or endpoint that cannot be used (a model the server does not have
    # included): exit 2, as `run` exits on them
    code = 0 if ok else 2 if not (dd.ok and store.ok and all(c.ok for c in llm_checks)) or no_model else 1

    if args.json:
        print(json.dumps({"ok": ok, "checks": [asdict(c) for c in checks],
                          "sources": dict(sorted(loaded.sources.items()))}, ensure_ascii=False))
        return code

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console(highlight=False)
    con.print(f"[bold]agentui doctor[/] — python {sys.version.split()[0]}, pid {os.getpid()}")
    src = Table(title="configuration sources", show_header=True, header_style="bold", box=None)
    src.add_column("key")
    src.add_column("value")
    src.add_column("from")
    flat = {
        "llm.provider": cfg.llm.provider, "llm.base_url": cfg.llm.base_url, "llm.model": cfg.llm.model,
        "llm.api_key": "***" if cfg.llm.api_key else None, "llm.gguf": cfg.llm.gguf,
        "llm.brain.base_url": cfg.llm.brain.base_url, "llm.brain.model": cfg.llm.brain.model,
        "llm.tool.base_url": cfg.llm.tool.base_url, "llm.tool.model": cfg.llm.tool.model,
        "data_dir": str(layout.root),
    }
    for key, val in flat.items():
        if val is None and loaded.source_of(key) == "default":
            continue
        src.add_row(escape(key), escape(str(val)), escape(loaded.source_of(key)))
    con.print(src)
    for c in checks:
        mark = "[green]✓[/]" if c.ok else "[red]✗[/]"
        con.print(f"{mark} [bold]{escape(c.name)}[/]: {escape(c.detail)}", soft_wrap=True)
    con.print("[green]all checks passed[/]" if ok else "[red]some checks failed[/]")
    return code
