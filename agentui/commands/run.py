"""`agentui run "TASK"`: one task, headless, with the pipeline printed as it happens.

Exit codes: 0 accept/success (or a conversational reply), 1 abandon or timeout, 2 usage/config
error or an LLM endpoint failure (the preflight's tiny completion, or refused/timeouts/401/404/5xx
during the task), 130 interrupted (Ctrl+C), 143 terminated (SIGTERM), 129 hung up (SIGHUP).
A signal cancels the task, kills its tool process groups and still prints the result (with --json:
the JSON document, "cancelled").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
# the signals handled like Ctrl+C: what `timeout`, `docker stop`, CI runners and a closed terminal send
SIGNALS = {signal.SIGINT: "Ctrl+C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


def catch_stop_signals(loop: asyncio.AbstractEventLoop, handler: Any) -> list[signal.Signals]:
    """Route every signal in SIGNALS to `handler(sig)` on `loop`; returns the ones installed."""
    installed = []
    for sig in SIGNALS:
        try:
            loop.add_signal_handler(sig, handler, sig)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return installed


def release_stop_signals(loop: asyncio.AbstractEventLoop, installed: list[signal.Signals], *, stopping: bool) -> None:
    """Undo :func:`catch_stop_signals`. While stopping, later signals are ignored: a second Ctrl+C
    landing once the handlers are gone cut `run --json`'s result short and killed `tree step` (-2)."""
    for sig in installed:
        loop.remove_signal_handler(sig)
        if stopping:
            signal.signal(sig, signal.SIG_IGN)


def configure(parser: argparse.ArgumentParser) -> None:
    from agentui.cli import non_empty_path, positive_float

    parser.add_argument("task", nargs="*", help='the goal in plain language ("-" reads it from stdin)')
    parser.add_argument("--json", action="store_true", help="print only the FinalResult and stats as JSON")
    parser.add_argument("--yes", "-y", action="store_true",
                        help="approve confirmations for commands that run inside the OS sandbox "
                             "(never secrets, never leaving the sandbox)")
    parser.add_argument("--unconfined", action="store_true",
                        help="DANGEROUS: approve every confirmation and run tools without the OS sandbox "
                             "(the hard deny-list and secret paths still refuse/ask)")
    parser.add_argument("--workspace", "-w", metavar="DIR", type=non_empty_path, default=argparse.SUPPRESS,
                        help="directory the tools work in (default: cwd; also before the command)")
    parser.add_argument("--timeout", type=positive_float, default=900.0, metavar="S",
                        help="cancel the task after S seconds (default 900)")
    parser.add_argument("--verbose", "-v", action="store_true", help="also show LLM usage lines")
    parser.add_argument("--ablation", choices=["naive-retry"], help=argparse.SUPPRESS)
    parser.add_argument("--no-preflight", action="store_true", help=argparse.SUPPRESS)


def _task_text(args: argparse.Namespace) -> str | None:
    from agentui.cli import UsageError, stdin_closed

    if args.task == ["-"]:
        if stdin_closed():
            raise UsageError('agentui run: "-" reads the task from stdin, but stdin is closed; pipe the task in '
                             '(echo "TASK" | agentui run -) or give it as an argument')
        try:
            raw = sys.stdin.buffer.read()
        except OSError as e:
            raise UsageError(f"agentui run: the task cannot be read from stdin ({e.strerror or e}); "
                             "give it as an argument") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise UsageError(f"agentui run: the task on stdin is not valid UTF-8 text (byte 0x{raw[e.start]:02x} "
                             f"at offset {e.start}); convert it, e.g. iconv -t UTF-8") from None
    else:
        text = " ".join(args.task)
    if "\0" in text:  # no tool argument, file name or log line can carry it: bad input, said once
        raise UsageError(f"agentui run: the task contains a NUL byte (at offset {text.index(chr(0))}); "
                         "remove it, e.g. tr -d '\\000'")
    return text.strip() or None


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args
    from agentui.config_write import api_key_from_keychain

    loaded = load_from_args(args)
    api_key_from_keychain(loaded)  # a key saved from Settings (remote endpoints), as the TUI reads it
    text = _task_text(args)
    if not text:
        print('agentui run: give a task, e.g. agentui run "count the .py files here"', file=sys.stderr)
        return EXIT_USAGE
    ws = Path(args.workspace or loaded.config.tools.workspace or Path.cwd()).expanduser()
    if not ws.is_dir():
        print(f"agentui run: workspace {ws} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    if not os.access(ws, os.R_OK | os.X_OK):  # every tool would fail on it: bad input, not a task failure
        print(f"agentui run: workspace {ws} cannot be read by this user (permission denied); "
              f"pick a directory you can read, with --workspace DIR", file=sys.stderr)
        return EXIT_USAGE
    from agentui.paths import DataLayout

    DataLayout(loaded.config.data_path()).check()  # a file / read-only / full data dir: exit 2
    caught: list[int] = []
    try:
        return asyncio.run(_main(args, loaded.config, text, ws.resolve(), caught))
    except (KeyboardInterrupt, asyncio.CancelledError):  # a signal before the task was submitted
        sig = caught[0] if caught else signal.SIGINT
        if args.json:
            print(json.dumps({"task_id": None, "final": None, "stats": {},
                              "cancelled": f"interrupted ({SIGNALS[sig]})"}))
        print(f"agentui: interrupted ({SIGNALS[sig]})", file=sys.stderr)
        return 128 + sig


async def _main(args: argparse.Namespace, config, text: str, workspace: Path, caught: list[int]) -> int:  # noqa: ANN001, C901
    from rich.console import Console
    from rich.markup import escape

    from agentui.contracts import ConfirmationChoice, DispatchManifest
    from agentui.describe import STYLE, line, used_lines
    from agentui.gcpolicy import settle
    from agentui.llm import LLMError, LLMPool
    from agentui.memory import MemoryDamaged, MemoryInUse, MemoryUnavailable, open_memory
    from agentui.paths import DataLayout
    from agentui.runtime import Runtime

    settle()  # the import heap leaves the full collections that would land in bus bursts
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False, soft_wrap=True)
    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()
    current: dict[str, object] = {}  # "rt", "tid" once the task is submitted

    def on_signal(sig: int) -> None:
        """SIGINT/SIGTERM/SIGHUP: cancel the task (its tool process groups are killed), then print
        the result as usual; before a task exists, stop here."""
        if caught:
            return
        caught.append(sig)
        if "tid" in current:
            loop.create_task(current["rt"].cancel(current["tid"], f"interrupted ({SIGNALS[sig]})"))  # type: ignore[attr-defined]
        elif main_task is not None:
            main_task.cancel()

    installed = catch_stop_signals(loop, on_signal)
    try:
        pool = LLMPool(config)
    except LLMError as e:
        err.print(f"agentui run: {escape(str(e))}")
        return EXIT_USAGE
    if not args.no_preflight:
        told = [0.0]  # seconds of waiting already reported

        def waiting(url: str, elapsed: float, why: str) -> None:
            # a slow endpoint is waited for (within the task's --timeout), with a line on stderr at
            # 10, 20, 30 s and then every minute; a dead one still fails at once below
            step = 10.0 if elapsed < 60 else 60.0
            if elapsed == 0.0 or elapsed - told[0] >= step or not told[0]:
                told[0] = max(elapsed, 0.001)
                err.print(f"agentui run: waiting for the model at {escape(url)} ({escape(why)}, {elapsed:.0f} s) "
                          f"— slow, not down; Ctrl+C stops")

        results = await pool.preflight(timeout_s=10.0, completion=True, patience_s=float(args.timeout),
                                       waiting=waiting)
        bad = [r for r in results if not r.ok]
        if bad:
            for r in bad:
                err.print(f"agentui run: {escape(r.error)}")
            if args.json:  # the same document as an endpoint failure during the task (docs/cli.md)
                r = bad[0]
                info = r.info or {"kind": r.kind or "unavailable", "endpoint": r.url, "model": r.model,
                                  "role": "preflight", "said": r.error, "fix": "", "message": r.error}
                out.print(json.dumps({"task_id": None, "final": None, "stats": {}, "infra_failure": info},
                                     ensure_ascii=False), markup=False, highlight=False)
            await pool.aclose()
            return EXIT_USAGE
    layout = DataLayout(config.data_path())
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds

    clock, ids = SystemClock(), UuidIds()
    try:
        memory = open_memory(layout.memory_db, clock, ids)
    except MemoryInUse as e:
        err.print(f"[yellow]warning:[/] {escape(str(e))}; this run uses a temporary memory")
        memory = open_memory(None, clock, ids)
    except (MemoryDamaged, MemoryUnavailable) as e:  # never run on (or recreate) a damaged store
        await pool.aclose()
        err.print(f"agentui run: {escape(str(e))}")
        return EXIT_USAGE

    interactive = sys.stdin is not None and sys.stdin.isatty() and not args.json

    async def confirm(req):  # noqa: ANN001, ANN202
        from agentui.tools.answers import Answer, auto, parse_tty, tty_menu, why_not_auto
        from agentui.tools.safety import sanitize

        given = auto(req, yes=args.yes, unconfined=args.unconfined)
        if given is not None:
            return given
        if not interactive:
            err.print(f"[red]denied[/] ({escape(why_not_auto(req, yes=args.yes))}): {escape(sanitize(req.command))}")
            return Answer(ConfirmationChoice.DENY, "unattended")
        where = "inside the OS sandbox" if req.sandboxed else "[bold]without an OS sandbox[/]"
        title = "run OUTSIDE the sandbox?" if req.escalation else "confirm"
        err.print(f"[bold red]{title}[/] {escape(sanitize(req.tool))} in {escape(sanitize(req.cwd))} ({where})")
        err.print(f"  $ [bold]{escape(sanitize(req.command))}[/]")
        for r in req.reasons:
            err.print(f"  - {escape(sanitize(r))}")
        if req.writes:
            err.print(f"  writes: {escape(sanitize(', '.join(req.writes)))}")
        if req.network:
            err.print(f"  network: {escape(sanitize(', '.join(req.network)))}")
        if req.change is not None:  # a file write: what a yes would change, as a unified diff
            colour = {"+": "green", "-": "red", "@": "cyan"}
            for line in sanitize(req.change.diff).split("\n"):
                style = "bold" if line.startswith(("+++ ", "--- ")) else colour.get(line[:1], "")
                err.print(f"  [{style}]{escape(line)}[/]" if style else f"  {escape(line)}")
        ans = await asyncio.to_thread(input, tty_menu(req))
        return parse_tty(ans, req)

    async def clarify(req):  # noqa: ANN001, ANN202
        if not interactive:
            return ""
        err.print(f"[bold yellow]question[/] {escape(req.question)}")
        return await asyncio.to_thread(input, "  answer (empty = proceed): ")

    from agentui.mcp.projectfile import with_project_servers

    # the project's trusted `.agentui/mcp.toml` joins the configured servers, as in the terminal UI
    # and an editor's session; an untrusted one is never started, and the notice says how to trust it
    notices: list[str] = []
    config = with_project_servers(config, workspace, layout.root, notices)
    for note in notices:
        err.print(f"[yellow]warning:[/] {escape(note)}")
    from agentui.tools import default_registry

    tools = default_registry()
    tools.unconfined = bool(args.unconfined)
    rt = Runtime(config, workspace=workspace, data_dir=layout.root, clock=clock, ids=ids, pool=pool,
                 memory=memory, ablation=args.ablation, clarify=clarify, confirm=confirm, tools=tools)
    await rt.start()
    for problem in rt.problems:  # e.g. an MCP server that failed to start
        err.print(f"[yellow]warning:[/] {escape(problem)}")
    if rt.mcp is not None:  # a server's form (elicitation): asked line by line on a terminal, else declined
        from agentui.mcp.elicit import ask_in_lines

        rt.mcp.why_not_ask = "`agentui run` has no terminal to ask you on"
        rt.mcp.on_log = lambda text: err.print(f"[yellow]warning:[/] {escape(text)}")
        if interactive:
            async def read(prompt: str) -> str:
                return await asyncio.to_thread(input, prompt)

            rt.mcp.ask = lambda req: ask_in_lines(req, read, lambda text: err.print(escape(text)))
    printer = None
    if not args.json:
        tap = rt.bus.tap("cli")

        live = LivePrinter(err)

        async def show() -> None:
            async for env in tap:
                if env.type == "LLMDelta":
                    live.add(env.payload)
                    continue
                if env.type == "LLMUsage" and not args.verbose:
                    continue
                live.close()
                style = STYLE.get(env.type, "")
                err.print(f"[{style}]{escape(line(env))}[/]" if style else escape(line(env)))
                if isinstance(env.payload, DispatchManifest) and env.payload.memory_ids:
                    # the lessons the plan was shown, each with the id `agentui memory forget` takes
                    for used in used_lines(memory, env.payload.memory_ids, 100):
                        err.print(f"  [dim cyan]memory[/] {escape(used)}")

        printer = asyncio.create_task(show())
        if isinstance(getattr(rt.tools, "watchers", None), list):
            rt.tools.watchers.append(ToolProgress(err, live))  # each tool call's start and end
        if rt.auditor is not None:
            from agentui.contracts import AuditEvent

            def on_audit(item) -> None:  # noqa: ANN001
                if isinstance(item, AuditEvent):
                    err.print(f"[red]audit {escape(item.severity.value)} {escape(item.kind.value)}:[/] "
                              f"{escape(item.message)}")

            rt.auditor.channel.listen(on_audit)

    tid = await rt.submit(text)
    current.update(rt=rt, tid=tid)
    if caught:  # a signal came while submitting
        await rt.cancel(tid, f"interrupted ({SIGNALS[caught[0]]})")
    cut = rt.truncated.get(tid)
    if cut:
        err.print(f"[yellow]warning:[/] the task text is {cut[0]:,} characters; the roles see the first "
                  f"{cut[1]:,} (\\[pipeline] max_task_chars); the full text is in {layout.task_log(tid)}")
    try:
        end = await rt.wait(tid, timeout=args.timeout)
    finally:
        release_stop_signals(loop, installed, stopping=bool(caught))
    stats = rt.task_stats(tid)
    if printer is not None:
        await asyncio.sleep(0.05)
        printer.cancel()
        live.close()
    await rt.stop()

    if args.json:
        # the single answer first: what a script reads, never the merged step outputs in its place
        answer = end.final.answer if end.final is not None else None
        doc = {"task_id": tid, "answer": answer, "final": end.as_json_doc(), "stats": stats}
        if end.infra is not None:
            doc["infra_failure"] = end.infra
        elif end.cancelled:
            doc["cancelled"] = end.reason
        if cut:
            doc["task_truncated"] = {"chars": cut[0], "kept": cut[1]}
        if rt.log_errors.get(tid):
            doc["task_log_error"] = rt.log_errors[tid]
        out.print(json.dumps(doc, ensure_ascii=False, default=str), markup=False, highlight=False)
    else:
        _render(out, end, stats, layout, tid)
    if end.infra is not None:
        err.print(f"agentui run: {escape(end.infra.get('message', ''))}")
        return EXIT_USAGE
    if rt.log_errors.get(tid):  # the run's record is incomplete: say so, never exit 0
        err.print(f"agentui run: the task log {layout.task_log(tid)} is incomplete: {escape(rt.log_errors[tid])}")
        return EXIT_FAIL
    if end.cancelled:
        return 128 + caught[0] if caught else EXIT_FAIL
    if end.final is not None:
        return EXIT_OK if end.final.directive.value in ("accept", "success") else EXIT_FAIL
    return EXIT_OK


class ToolProgress:
    """A tool call of the run on stderr: one line when it starts (the tool and its command, shown
    on one line with control characters escaped) and one when it ends (ok or failed, seconds), so
    a long command is never silent."""

    def __init__(self, err: Any, live: LivePrinter) -> None:
        self.err = err
        self.live = live

    def __call__(self, ev: Any) -> None:
        from agentui.tools.safety import one_line

        what = one_line(" ".join(str(ev.target or ev.args.get("command") or ev.args.get("path") or "").split()), 160)
        if ev.record is None:
            self.live.say(f"  tool {ev.tool} running: {what}")
            return
        r = ev.record
        how = "ok" if r.ok else f"failed{f' (exit {r.exit_code})' if r.exit_code not in (None, 0) else ''}"
        self.live.say(f"  tool {ev.tool} {how} in {r.duration_s:.1f} s: {what}")


class LivePrinter:
    """A streamed role's text on stderr as it is generated: one line per call, begun with who is
    writing, continued piece by piece, ended when the call or another message comes."""

    def __init__(self, err: Any) -> None:
        self.err = err
        self.open: tuple[str, int] | None = None  # (role, call) of the line being written
        self.waiting: list[str] = []  # lines said while a streamed line was open

    def add(self, p: Any) -> None:
        from agentui.contracts import ROLE_LABELS
        from agentui.tools.safety import one_line

        key = (p.role.value, p.call)
        if key != self.open:
            self.close()
            more = "" if p.fresh else "… "
            self.err.print(f"  {ROLE_LABELS.get(p.role, p.role.value)} ▸ {more}", end="", markup=False,
                           style="dim")
            self.open = key
        text = one_line(p.text, 10**6) if p.text else ""  # escapes and newlines shown, never run
        if text:
            self.err.print(text, end="", markup=False, style="dim")
        if p.done:
            self.close()

    def close(self) -> None:
        if self.open is not None:
            self.err.print("", markup=False)
            self.open = None
        for text in self.waiting:
            self.err.print(text, markup=False, style="dim")
        self.waiting.clear()

    def say(self, text: str) -> None:
        """A line of its own (a tool's progress); while a streamed line is being written it waits
        for that line's end, so the two never interleave."""
        if self.open is not None:
            self.waiting.append(text)
        else:
            self.err.print(text, markup=False, style="dim")


def _render(out, end, stats, layout, tid) -> None:  # noqa: ANN001
    from rich.markup import escape
    from rich.table import Table

    if end.infra is not None:
        out.print("[bold red]LLM endpoint failed[/] — the task was not judged")
    elif end.cancelled:
        out.print(f"[bold red]cancelled[/]: {escape(end.reason)}")
    elif end.reply is not None:
        out.print(escape(end.reply.text))
    elif end.final is not None:
        f = end.final
        colour = "green" if f.directive.value in ("accept", "success") else "red"
        if f.answer:
            out.print(f"[bold]answer:[/] {escape(f.answer)}")
        out.print(f"[bold {colour}]{f.directive.value}[/] after {f.replans} replan(s): {escape(f.summary)}")
        if f.output not in (None, "", {}, []) and f.output != f.answer:
            body = f.output if isinstance(f.output, str) else json.dumps(f.output, ensure_ascii=False, indent=2)
            out.print(escape(body))
        if f.partial_result:
            out.print("[bold]partial result:[/] " + escape(json.dumps(f.partial_result, ensure_ascii=False)[:2000]))
        for m in f.next_moves:
            out.print(f"  → {escape(m)}")
    t = Table(title="cost", box=None, header_style="bold")
    for col in ("role", "calls", "prompt tok", "completion tok", "seconds", "repairs", "parse fail", "cut"):
        t.add_column(col, justify="right" if col != "role" else "left")
    for role, r in stats.get("by_role", {}).items():
        t.add_row(role, str(r["calls"]), str(r["prompt_tokens"]), str(r["completion_tokens"]),
                  f"{r['seconds']:.1f}", str(r["parse_repairs"]), str(r.get("parse_failures", 0)),
                  str(r.get("runaways_cut", 0)))
    t.add_row("[bold]total[/]", str(stats.get("llm_calls", 0)), str(stats.get("prompt_tokens", 0)),
              str(stats.get("completion_tokens", 0)), "", str(stats.get("parse_repairs", 0)),
              str(stats.get("parse_failures", 0)), str(stats.get("runaways_cut", 0)))
    t.add_row("tools", str(stats.get("tool_calls", 0)), "", "", f"{stats.get('tool_seconds', 0):.1f}", "")
    out.print(t)
    out.print(f"[dim]wall {stats.get('wall_s', 0):.1f} s · log {layout.task_log(tid)}[/]")
