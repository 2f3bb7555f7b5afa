"""`agentui audit`: the Auditor's report, from the append-only audit log under the data dir.

Works after a restart and while no LLM is configured: everything comes from `<data>/audit/`.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter


def configure(parser: argparse.ArgumentParser) -> None:
    from agentui.cli import non_negative_int

    parser.add_argument("--json", action="store_true", help="machine-readable report")
    parser.add_argument(
        "--events", type=non_negative_int, default=20, metavar="N", help="show the last N events (default 20)"
    )
    parser.add_argument("--approvals", type=non_negative_int, default=20, metavar="N",
                        help="show the last N safety-gate approvals and denials (default 20)")
    parser.add_argument("--task", metavar="ID", help="only events and approvals of this task (id or prefix)")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args
    from agentui.clock import SystemClock, iso
    from agentui.ids import UuidIds
    from agentui.paths import FIX, DataDirError, DataLayout
    from agentui.roles.auditor import AuditLog, build_report

    loaded = load_from_args(args)
    cfg = loaded.config
    layout = DataLayout(cfg.data_path())
    layout.check(writable=False)  # only reads: a file in its place is an error
    source = loaded.source_of("data_dir")
    if source != "default" and not layout.root.is_dir():
        # a data dir the user named that is not there (a typo, an unmounted disk) is not "0 runs";
        # the default one is simply not made yet before the first run
        raise DataDirError(f"data dir: {layout.root} (from {source}) does not exist, so it holds no audit "
                           f"log; {FIX}")
    if layout.audit_dir.exists() and not layout.audit_dir.is_dir():  # not "runs 0"
        raise DataDirError(f"data dir: {layout.audit_dir} is a file, where the audit log's directory "
                           f"belongs; move it away; {FIX}")
    alog = AuditLog(layout.audit_dir)
    events = alog.events()
    approvals = alog.approvals()
    if args.task:
        events = [e for e in events if (e.task_id or "").startswith(args.task)]
        approvals = [a for a in approvals if a.task_id.startswith(args.task)]
        if not events and not approvals and not _task_known(layout, args.task):  # no such task, not "no anomalies"
            from agentui.cli import UsageError

            raise UsageError(f"agentui audit: no task {args.task!r} in {layout.tasks_dir} (give a task id or "
                             "its prefix, as `agentui audit` or Ctrl+G history lists them)")
    stats = alog.stats()
    totals = stats.get("totals", {})
    report = build_report({"messages_seen": totals.get("messages_seen", 0),
                           "tasks_seen": totals.get("tasks_seen", 0), **stats},
                          events, trigger="on_demand", ids=UuidIds(), now=iso(SystemClock().now()),
                          window_start=events[0].ts if events else None)
    if args.json:
        doc = report.model_dump(mode="json")
        doc["events"] = [e.model_dump(mode="json") for e in events[-args.events:]] if args.events else []
        doc["log"] = str(alog.events_path)
        doc["approvals_by_decision"] = dict(sorted(Counter(a.decision for a in approvals).items()))
        doc["approvals"] = [a.model_dump(mode="json") for a in approvals[-args.approvals:]] if args.approvals else []
        doc["approvals_log"] = str(alog.approvals_path)
        print(json.dumps(doc, ensure_ascii=False))
        return 0

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console(highlight=False, soft_wrap=True)
    con.print(f"[bold]audit[/] — {escape(str(layout.audit_dir))}")
    con.print(f"runs {stats.get('runs', 0)}, messages {totals.get('messages_seen', 0)}, "
              f"tasks {totals.get('tasks_seen', 0)}, events {len(events)}")
    if not events:
        con.print("[green]no anomalies recorded[/]")
    else:
        t = Table(box=None, header_style="bold")
        t.add_column("kind")
        t.add_column("count", justify="right")
        for kind, n in sorted(Counter(e.kind.value for e in events).items()):
            t.add_row(kind, str(n))
        con.print(t)
        colour = {"critical": "red", "warning": "yellow", "info": "dim"}
        for e in events[-args.events:]:
            c = colour.get(e.severity.value, "")
            con.print(f"[{c}]{e.ts} {e.severity.value:8} {e.kind.value}[/] "
                      f"{escape((e.task_id or '-')[:12])} {escape(e.message)}")
    _show_approvals(con, approvals, args.approvals)
    last = stats.get("last_run", {})
    rates = {**{f"parse repairs {k}": v for k, v in last.get("parse_repair_rate", {}).items()},
             **{f"tool errors {k}": v for k, v in last.get("tool_error_rate", {}).items()}}
    if rates:
        con.print("last run: " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()))
    return 0


def _show_approvals(con, approvals: list, n: int) -> None:  # noqa: ANN001 - a rich Console
    """Every safety-gate outcome: decision, scope, who decided, the stored pattern, the command."""
    from rich.markup import escape

    if not approvals:
        con.print("approvals: none recorded")
        return
    by_decision = Counter(a.decision for a in approvals)
    scopes = Counter(a.scope for a in approvals if a.decision == "approved")
    con.print(f"approvals {len(approvals)}: " + ", ".join(
        f"{d} {by_decision[d]}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(scopes.items())) + ")"
                                   if d == "approved" and scopes else "")
        for d in ("approved", "denied", "refused") if by_decision[d]))
    colour = {"approved": "green", "denied": "yellow", "refused": "red"}
    for a in approvals[-n:] if n else []:
        pattern = f" [pattern: {'; '.join(a.patterns)}]" if a.patterns else ""
        con.print(f"[{colour[a.decision]}]{a.ts or '-'} {a.decision:8} {a.scope or '-':7}[/] by {a.by:11} "
                  f"{escape(a.task_id[:12] or '-')} {escape(a.tool)}: {escape(a.command[:160])}{escape(pattern)}")


def _task_known(layout, prefix: str) -> bool:  # noqa: ANN001 - a DataLayout
    """A task with this id (prefix) ran here: its task log exists (a task without anomalies or
    approvals has neither events nor approval records)."""
    d = layout.tasks_dir
    return bool(prefix) and d.is_dir() and any(p.name.startswith(prefix) for p in d.glob("*.jsonl"))
