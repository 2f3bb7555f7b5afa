"""`agentui memory`: inspect and edit the MKCT memory (works with no LLM configured, except `dream`
which asks the brain tier to distil rules — and falls back to a template when none answers).

    agentui memory stats | list [--level L] [--space S] [--entity E] [--limit N] | show ID
    agentui memory remember [--level C] [--space S] [--entity E] TEXT | forget ID-PREFIX [--yes]
    agentui memory dream | export [--out FILE] | repair

A damaged store is never opened (nor recreated empty): every action stops with a message naming
`agentui memory repair`, which copies the store aside, repairs it and reports the counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

#: the user-wide space every plan reads; the same string as agentui.roles.calibration.USER_SPACE
#: (not imported: the CLI parser stays free of pydantic at start-up)
USER_SPACE = "user"


def configure(parser: argparse.ArgumentParser) -> None:
    from agentui.cli import non_negative_int

    parser.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.add_parser("stats", help="counts by level, tag pairs")
    p = sub.add_parser("list", help="list Megrams (newest first)")
    p.add_argument("--level", choices=["M", "K", "C", "T"])
    p.add_argument("--space")
    p.add_argument("--entity")
    p.add_argument("--limit", type=non_negative_int, default=50, help="at most N (0: all; default 50)")
    p = sub.add_parser("show", help="one Megram with live potentials of its tag pair")
    p.add_argument("id", metavar="ID-PREFIX")
    p = sub.add_parser("remember", help="write a Megram by hand (default: a C-level rule)")
    p.add_argument("text", nargs="+")
    p.add_argument("--level", choices=["M", "K", "C", "T"], default="C")
    p.add_argument(
        "--space",
        default=USER_SPACE,
        help=f"'{USER_SPACE}' (default): read for every plan; 'tool:<name>': shown to the executor "
        "whenever it is offered that tool, and enforced by the safety gate when written "
        "'never: <program> [words]' or 'ask: <program> [words]'; 'intent:<slug>': tasks with that intent",
    )
    p.add_argument("--entity", default="env:local")
    p.add_argument("--avoid", action="store_true", help="a constraint (σ = −1) instead of a practice")
    p = sub.add_parser("forget", help="hard-delete one Megram")
    p.add_argument("id", metavar="ID-PREFIX")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask")
    sub.add_parser("dream", help="run one Dreamer pass now (consolidate, bankrupt, GC)")
    p = sub.add_parser("export", help="every Megram as JSONL")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    sub.add_parser("repair", help="copy a damaged store aside, repair it, report Megrams before/after")
    for sp in sub.choices.values():
        sp.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")


#: actions that only read: they work on a full or read-only disk (from a copy of the store)
READ_ONLY = frozenset({"stats", "list", "show", "export"})


def _row(m: Any) -> dict[str, Any]:
    return m.model_dump(mode="json")


def _gate_note(m: Any) -> str | None:
    """For a `tool:<name>` rule: whether the safety gate enforces it or only the executor sees it."""
    if not m.space.startswith("tool:") or m.level.value != "C" or m.entity != "env:local":
        return None
    from agentui.tools.safety.rules import describe, parse_rule

    return describe(parse_rule(m.content), m.space[len("tool:"):])


def run(args: argparse.Namespace) -> int:  # noqa: C901
    from agentui.cli import load_from_args
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import AmbiguousId, MemoryInUse, open_memory
    from agentui.paths import DataLayout

    cfg = load_from_args(args).config
    action = getattr(args, "action", None) or "stats"
    as_json = bool(getattr(args, "json", False))
    layout = DataLayout(cfg.data_path())
    reading = action in READ_ONLY
    layout.check(writable=not reading)  # a full or read-only disk can still be read
    if action == "repair":
        return _repair(layout.memory_db, as_json)
    if action == "export" and args.out:
        _check_out(args.out)
    try:
        mem = open_memory(layout.memory_db, SystemClock(), UuidIds(), read_only=reading)
    except MemoryInUse as e:
        print(f"agentui memory: {e}; close the other agentui first", file=sys.stderr)
        return 2  # the store cannot be used here, like a damaged one
    if getattr(mem, "note", ""):
        print(f"agentui memory: note: {mem.note}", file=sys.stderr)
    try:
        if action == "stats":
            st = mem.stats()
            st["path"] = str(layout.memory_db)
            if as_json:
                print(json.dumps(st))
            else:
                lv = st["by_level"]
                print(f"{st['total']} Megrams in {st['path']}: M {lv['M']}, K {lv['K']}, C {lv['C']}, T {lv['T']}; "
                      f"{st['tag_pairs']} tag pairs")
            return 0
        if action == "list":
            ms = sorted(mem.list(args.level, args.space, args.entity), key=lambda m: m.created_at, reverse=True)
            ms = ms[: args.limit] if args.limit > 0 else ms
            if as_json:
                print(json.dumps([_row(m) for m in ms], ensure_ascii=False))
            else:
                for m in ms:
                    print(f"{m.id[:8]} {m.level.value} {m.space:28.28} {m.entity:28.28} {m.state:16} "
                          f"f={m.f:.2f} σ={m.sigma:+.1f} k={m.k:g}  {m.content[:60]}")
                if not ms:
                    print("no Megrams match")
            return 0
        if action == "show":
            m = mem.get(args.id)
            pot = mem.query_mk_sync(m.space, m.entity)
            doc = {"megram": _row(m), "potentials": pot.model_dump(mode="json")}
            if as_json:
                print(json.dumps(doc, ensure_ascii=False))
            else:
                for k, v in doc["megram"].items():
                    print(f"{k:17} {v}")
                print(f"potentials        attention={pot.attention:.3f} decision={pot.decision:+.3f} "
                      f"action={pot.action.value} over {pot.count}")
            return 0
        if action == "remember":
            text = " ".join(args.text).strip()
            if not text:
                print("agentui memory remember: give the text to remember", file=sys.stderr)
                return 2
            for flag, val in (("--space", args.space), ("--entity", args.entity)):
                if not val.strip():  # a Megram no plan would ever read
                    print(f"agentui memory remember: {flag} is empty; give e.g. --space {USER_SPACE} "
                          "or --space tool:shell", file=sys.stderr)
                    return 2
            m = mem.remember(text, level=args.level, space=args.space, entity=args.entity,
                             sigma=-1.0 if args.avoid else 1.0)
            note = _gate_note(m)
            if as_json:
                print(json.dumps({**_row(m), **({"gate": note} if note else {})}, ensure_ascii=False))
            else:
                print(f"remembered {m.id}" + (f"\n{note}" if note else ""))
            return 0
        if action == "forget":
            m = mem.get(args.id)
            if not args.yes and not as_json:
                if sys.stdin is None or not sys.stdin.isatty():  # None: started with stdin closed
                    print(f"agentui memory forget: would delete {m.id}; pass --yes to confirm", file=sys.stderr)
                    return 2
                ans = input(f"delete {m.id} ({m.content[:60]!r})? [y/N] ").strip().lower()
                if ans not in ("y", "yes"):
                    print("kept")
                    return 1
            gone = mem.forget(m.id)
            print(json.dumps(_row(gone), ensure_ascii=False) if as_json else f"forgot {gone.id}")
            return 0
        if action == "dream":
            rep = asyncio.run(_dream(cfg, mem))
            doc = {"consolidated": rep.consolidated, "bankrupted": rep.bankrupted, "deleted": rep.deleted,
                   "scanned": rep.scanned, "new_ids": rep.new_ids, "demoted_ids": rep.demoted_ids}
            print(json.dumps(doc) if as_json else
                  f"dream: scanned {rep.scanned}, consolidated {rep.consolidated}, "
                  f"bankrupted {rep.bankrupted}, deleted {rep.deleted}")
            return 0
        if action == "export":
            out = open(args.out, "w", encoding="utf-8", newline="\n") if args.out else sys.stdout  # noqa: SIM115
            n = 0
            try:
                for m in sorted(mem.list(), key=lambda m: (m.created_at, m.id)):
                    out.write(m.to_json() + "\n")
                    n += 1
            finally:
                if args.out:
                    out.close()
            if args.out:
                print(f"exported {n} Megrams to {args.out}", file=sys.stderr)
            return 0
    except Exception as e:
        if type(e).__module__.startswith(("plyvel", "plyvel_next")):  # damage found by a read
            from agentui.memory.leveldb import classify

            raise classify(layout.memory_db, e) from e
        if not isinstance(e, KeyError | AmbiguousId | LookupError):
            raise
        # an unknown or ambiguous id: bad input
        print(f"agentui memory: {e.args[0] if e.args else e}; `agentui memory list` shows the ids",
              file=sys.stderr)
        return 2
    finally:
        if not getattr(mem, "closed", True):
            try:
                mem.close_sync()
            except Exception:  # noqa: BLE001
                asyncio.run(mem.close())
    return 2


def _check_out(out: str) -> None:
    """--out must be a file we can write (checked before the store opens)."""
    from pathlib import Path

    from agentui.cli import UsageError

    p = Path(out).expanduser()
    if p.is_dir():
        raise UsageError(f"agentui memory export: --out {out} is a directory; give a file name")
    if not p.parent.is_dir():
        raise UsageError(f"agentui memory export: the directory of --out {out} does not exist")


def _repair(path: Any, as_json: bool) -> int:
    """Repair and report; exit 0 when the store ends with every Megram a read before could see and
    nothing unverified, else 1 (the damaged original stays in the backup either way)."""
    from agentui.memory.leveldb import repair

    rep = repair(path)
    code = 1 if rep["lost"] or rep["salvaged"] or rep["unreadable_dropped"] or rep["damaged"] else 0
    if as_json:
        print(json.dumps(rep))
        return code
    def fmt(n: int | None) -> str:
        return "could not be read" if n is None else f"{n} Megrams"

    print(f"memory repair: {path}\n  copy of the damaged store: {rep['backup']}\n"
          f"  before: {fmt(rep['before'])} (lenient open: {fmt(rep['lenient_before'])})\n"
          f"  after:  {fmt(rep['after'])} ({rep['index_rebuilt']} index keys rebuilt, "
          f"{rep['orphan_index_removed']} orphaned removed, {rep['unreadable_dropped']} unreadable records dropped)")
    if rep["salvaged"]:
        print(f"agentui memory repair: {rep['salvaged']} Megrams came back from blocks that failed their checksum, "
              f"so their text may differ from what was written; check them with `agentui memory list` "
              f"(the damaged original is in {rep['backup']})", file=sys.stderr)
    for what in rep["damaged"]:
        print(f"  damaged: {what}")
    if rep["lost"] or rep["unreadable_dropped"]:
        n = max(rep["lost"], rep["unreadable_dropped"])
        print(f"agentui memory repair: {n} Megrams could not be recovered; the damaged original is in "
              f"{rep['backup']}", file=sys.stderr)
    elif rep["damaged"] and not rep["salvaged"]:
        print(f"agentui memory repair: the store held damaged files, so some Megrams may be lost that no "
              f"count shows; the damaged original is in {rep['backup']}", file=sys.stderr)
    return code


async def _dream(cfg: Any, mem: Any) -> Any:
    from agentui.clock import SystemClock
    from agentui.memory import Dreamer
    from agentui.memory.dreamer import llm_distiller

    distil = None
    try:
        from agentui.llm import LLMPool

        pool = LLMPool(cfg)
        distil = llm_distiller(pool)
    except Exception:  # noqa: BLE001 - no LLM: the Dreamer uses its template
        pool = None
    try:
        d = Dreamer(mem, SystemClock(), distil)
        return await d.run_once()
    finally:
        if pool is not None:
            await pool.aclose()
