"""`agentui bench SUITE.json` — measured task success. Logic in agentui/benchsuite.py."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any


def configure(parser: argparse.ArgumentParser) -> None:
    from agentui.cli import positive_float

    parser.add_argument("suite", metavar="SUITE.json", help="task suite: [{id, description, init, check}]")
    parser.add_argument("--out", metavar="FILE", help="append one JSON line per task result to FILE")
    parser.add_argument("--ids", metavar="ID[,ID…]", help="run only these task ids (comma-separated)")
    parser.add_argument(
        "--timeout", type=positive_float, default=600.0, metavar="S", help="per-task timeout (default 600)"
    )
    parser.add_argument("--ablation", choices=["naive-retry"],
                        help="naive-retry: replace GGS by 'replan with the failure text'")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep each task's workspace and data dir (task log, audit) under DIR")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--shared-memory", action="store_true",
                        help="run every task with one data dir, in the suite's order, so each task meets "
                             "the memory of the tasks before it")
    parser.add_argument("--passes", type=_passes, default=1, metavar="N",
                        help="run the suite N times and print the pass rate of each pass (default 1); with "
                             "--shared-memory, pass 2 meets what pass 1 left in memory")


def _passes(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= n <= 20:
        raise argparse.ArgumentTypeError(f"{n} is out of range: give 1 to 20 passes")
    return n


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from agentui.benchsuite import SuiteError, canonical_line, load_suite, run_suite, summarise

    caught: list[int] = []

    def _terminate(sig: int, _frame: object) -> None:
        caught.append(sig)
        raise KeyboardInterrupt  # unwinds through run_task, which stops the running task (SIGTERM first)

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)

    try:
        tasks = load_suite(args.suite)
    except SuiteError as e:
        print(f"agentui bench: {e}", file=sys.stderr)
        return 2
    if args.ids is not None:
        wanted = [i.strip() for i in args.ids.split(",") if i.strip()]
        if not wanted:  # `--ids ,` would run nothing and report success
            print(f"agentui bench: --ids {args.ids!r} names no task; give ids such as --ids {tasks[0].id}",
                  file=sys.stderr)
            return 2
        unknown = sorted(set(wanted) - {t.id for t in tasks})
        if unknown:
            print(f"agentui bench: unknown task id(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        tasks = [t for t in tasks if t.id in wanted]
    if args.keep is not None:
        from pathlib import Path

        try:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            print(f"agentui bench: --keep {args.keep}: cannot use it as a directory "
                  f"({e.strerror or e}); give a directory path", file=sys.stderr)
            return 2
    run_args: list[str] = []
    for flag in ("config", "base_url", "model", "api_key"):
        val = getattr(args, flag, None)
        if val:
            run_args += [f"--{flag.replace('_', '-')}", str(val)]

    if args.shared_memory or args.passes > 1:
        return _run_passes(args, tasks, run_args, caught)

    err = Console(stderr=True)
    out_fh = open(args.out, "a", encoding="utf-8") if args.out else None  # noqa: SIM115
    try:
        with Progress(TextColumn("[bold]bench[/] {task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err, transient=True) as progress:
            bar = progress.add_task("", total=len(tasks))

            def on_start(t) -> None:
                progress.update(bar, description=t.id)

            def on_result(r) -> None:
                progress.advance(bar)
                mark = "[green]pass[/]" if r["passed"] else \
                    "[bold red]FALSE SUCCESS[/]" if r.get("false_success") else "[red]fail[/]"
                err.print(f"{mark} {r['id']}: {r['directive'] or r['error']} "
                          f"({r['llm_calls']} calls, {r['wall_s']:.1f} s)"
                          + (f" — kept in {r['kept']}" if r.get("kept") else ""))
                if out_fh:
                    out_fh.write(canonical_line({**r, "ablation": args.ablation}) + "\n")
                    out_fh.flush()

            try:
                results = run_suite(tasks, timeout=args.timeout, run_args=run_args, ablation=args.ablation,
                                    on_result=on_result, on_start=on_start, keep=args.keep)
            except KeyboardInterrupt:
                return _interrupted(err, caught)
    finally:
        if out_fh:
            out_fh.close()

    summary = summarise(results)
    if args.json:
        print(json.dumps({"summary": summary, "results": results}, ensure_ascii=False))
    else:
        table = Table(title=f"agentui bench — {args.suite}" + (f" (ablation {args.ablation})" if args.ablation else ""))
        for col in ("task", "result", "answer", "directive", "replans", "LLM calls", "tokens", "repairs", "wall s"):
            table.add_column(col, justify="right" if col not in ("task", "result", "answer", "directive") else "left")
        for r in results:
            result = "pass" if r["passed"] else "FALSE SUCCESS" if r.get("false_success") else "fail"
            table.add_row(r["id"], result, (r.get("answer") or "")[:40], str(r["directive"] or r["error"] or ""),
                          str(r["replans"]), str(r["llm_calls"]),
                          str(r["prompt_tokens"] + r["completion_tokens"]), str(r["parse_repairs"]),
                          f"{r['wall_s']:.1f}")
        Console().print(table)
        print(f"totals: {summary['llm_calls']} LLM calls, {summary['prompt_tokens']} prompt + "
              f"{summary['completion_tokens']} completion tokens, {summary['parse_repairs']} parse repairs, "
              f"{summary['wall_s']} s; success rate {summary['success_rate']:.0%}; "
              f"false successes {summary['false_successes']}; "
              f"{summary['llm_calls_per_task']:.1f} calls/task, {summary['tokens_per_task']:.0f} tokens/task")
    print(f"bench: {summary['passed']} passed, {summary['failed']} failed, "
          f"{summary['false_successes']} false success(es)")
    return 0 if summary["failed"] == 0 else 1


def _interrupted(err: Any, caught: list[int]) -> int:
    """Say which signal stopped the suite (the running task was stopped with it); its exit code."""
    sig = caught[0] if caught else signal.SIGINT
    err.print(f"bench: interrupted ({signal.Signals(sig).name}); the running task was stopped")
    return 128 + sig


def _run_passes(args: argparse.Namespace, tasks: list, run_args: list[str], caught: list[int]) -> int:
    """`--shared-memory` / `--passes N`: the suite in its file's order, N times; one line per task,
    then each pass's pass rate (and with --json one document with every pass's summary)."""
    from rich.console import Console

    from agentui.benchsuite import canonical_line, pass_line, run_passes, summarise

    err = Console(stderr=True)
    memory = "one shared data dir" if args.shared_memory else "a fresh data dir per task"
    err.print(f"bench: {args.passes} pass(es) of {len(tasks)} task(s), in the suite file's order, {memory}")
    out_fh = open(args.out, "a", encoding="utf-8") if args.out else None  # noqa: SIM115

    def on_result(r: dict) -> None:
        mark = "[green]pass[/]" if r["passed"] else "[red]fail[/]"
        err.print(f"{mark} pass {r['pass']} {r['id']}: {r['directive'] or r['error']} "
                  f"({r['llm_calls']} calls, {r['wall_s']:.1f} s)")
        if out_fh:
            out_fh.write(canonical_line({**r, "ablation": args.ablation}) + "\n")
            out_fh.flush()

    try:
        per_pass = run_passes(tasks, passes=args.passes, shared_memory=args.shared_memory, timeout=args.timeout,
                              run_args=run_args, ablation=args.ablation, on_result=on_result, keep=args.keep,
                              on_pass=lambda n, rs: err.print(pass_line(n, rs)))
    except KeyboardInterrupt:
        return _interrupted(err, caught)
    finally:
        if out_fh:
            out_fh.close()
    summaries = [{"pass": n, **summarise(rs)} for n, rs in enumerate(per_pass, 1)]
    if args.json:
        print(json.dumps({"shared_memory": args.shared_memory, "order": [t.id for t in tasks],
                          "passes": summaries, "results": [r for rs in per_pass for r in rs]}, ensure_ascii=False))
    for n, rs in enumerate(per_pass, 1):
        print(pass_line(n, rs))
    failed = sum(s["failed"] for s in summaries)
    print(f"bench: {sum(s['passed'] for s in summaries)} passed, {failed} failed over {len(per_pass)} pass(es)")
    return 0 if failed == 0 else 1
