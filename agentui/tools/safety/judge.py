"""The walk's allow-list judge: is one simple command a read-only program with known-safe flags?

A part of `walk.Walker`: it reports through the walker (`need`) and asks it to judge an inner
command (`nested_allowed`); paths go to the walker's `PathChecks`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from agentui.tools.safety import effects, programs
from agentui.tools.safety import paths as P
from agentui.tools.safety.allowlist import (
    CREATORS,
    FREE_ARGS,
    PROGRAMS,
    SUBCOMMANDS,
    VERSION_FLAGS,
    VERSION_QUERIES,
    Prog,
)
from agentui.tools.safety.pathchecks import PathChecks
from agentui.tools.safety.walkstate import State, pattern_for
from agentui.tools.safety.words import Word

_IMPLICIT_CWD = {"ls", "du", "tree", "rg", "find"}
_PAGER_START = re.compile(r"\+(\d+|/[^!|]*|G)")  # a line, a search, the end: no command
_Checker = Callable[[list[str]], programs.Result]
_CHECKERS: dict[str, _Checker] = {
    "git": programs.git, "find": programs.find, "sed": programs.sed, "awk": programs.awk, "gawk": programs.awk,
    "mawk": programs.awk, "jq": programs.jq, "ps": programs.ps,
}


class _Walk(Protocol):
    """What the judge needs of the walk it is part of."""

    ws: Path

    def need(self, reason: str, pattern: str | None = None, *, human: bool = False) -> None: ...

    def nested_allowed(self, words: list[Word], state: State) -> bool: ...


class Judge:
    """The allow-list side of the walk (fail closed: anything not known read-only asks)."""

    def __init__(self, walk: _Walk, paths: PathChecks) -> None:
        self.walk = walk
        self.paths = paths

    def allowed(self, name: str, local: bool, args: list[Word], state: State) -> bool:
        """True when this simple command is on the allow-list with only known-safe flags and paths."""
        texts = [a.text for a in args]
        pattern = pattern_for(name, texts)
        if local:
            self.walk.need(f"runs a program from a path: {name}", pattern)
            return False
        spec = PROGRAMS.get(name)
        data_only = name in FREE_ARGS
        if not data_only and any(not a.static and not a.procsub for a in args):
            bad = next(a.text for a in args if not a.static and not a.procsub)
            self.walk.need(f"{name}: an argument is only known at run time: {bad}", pattern if spec is None else None)
            return False
        verdict = self._special(name, texts, args, state, pattern)
        if verdict is not None:
            return verdict
        if name == "find":  # `find … -exec <read-only program> {} +`: the inner command on the allow-list
            inner = programs.find_exec_commands(texts)
            if inner is not None:
                rest = self._find_exec(inner, args, texts, state)
                if rest is None:
                    return False
                texts = rest
        if name in ("tar", "unzip") and programs.archive_listing(name, texts):
            for i, t in enumerate(texts):
                if not t.startswith("-") and i > 0 or (name == "unzip" and not t.startswith("-")):
                    self.paths.check_read(args[i], state, name)
            return True
        checker = _CHECKERS.get(name)
        if checker is not None:
            return self._checked(name, checker, texts, args, state, pattern)
        if spec is None:
            return self._unlisted(name, texts, pattern)
        return self.check_spec(name, spec, args, state)

    def _special(self, name: str, texts: list[str], args: list[Word], state: State, pattern: str | None) -> bool | None:
        """The programs judged by a rule of their own (`cd`, pagers, wrappers, `read` …); None: no rule here."""
        if name in ("cd", "pushd", "popd"):
            self.paths.cd(name, args, state)
            return True
        if name == "command" and texts[:1] in (["-v"], ["-V"]):
            return True
        if name in ("less", "more") and any(t.startswith("+") and not _PAGER_START.fullmatch(t) for t in texts):
            self.walk.need(f"{name} with start-up commands (+…)", pattern)  # only +N, +/pattern, +G are known
            return False
        if name in ("timeout", "nice"):  # they only run their command: allowed when it is
            found = effects.inner_command(name, texts)
            if found is not None and not found[1]:
                return self.walk.nested_allowed(args[found[0]:], state)
        if name in ("gzip", "gunzip") and not any(
                t in ("--stdout", "--to-stdout", "--list", "--test") or
                (t.startswith("-") and not t.startswith("--") and set(t[1:]) & set("clt")) for t in texts):
            self.walk.need(f"{name} without -c, -l or -t writes (and deletes) files", pattern)
            return False
        if name == "sysctl" and any("=" in t for t in texts):
            self.walk.need("sysctl name=value sets a kernel parameter", pattern)
            return False
        if name == "read":  # assigns shell variables: only lowercase ones (PATH, IFS … would change later commands)
            names = [t for t in texts if not t.startswith("-")]
            if all(re.fullmatch(r"[a-z_][a-z0-9_]*", t) for t in names) and all(
                    re.fullmatch(r"-[rsea]+", t) for t in texts if t.startswith("-")):
                return True
            self.walk.need("read with options or variable names that could change later commands")
            return False
        return None

    def _find_exec(self, inner: tuple[list[str], list[list[int]]], args: list[Word], texts: list[str],
                   state: State) -> list[str] | None:
        """`find`'s -exec commands judged as commands of their own; the rest of find's words, or None
        when an inner command is not allowed."""
        rest, commands = inner
        ok = all(self.walk.nested_allowed([args[i] for i in cmd], state) for cmd in commands)
        if not ok:
            return None
        roots = [a for a in args[: next((i for i, t in enumerate(texts) if t.startswith("-")
                                         or t in ("!", "(")), len(texts))]] or [Word(".")]
        for root in roots:  # the inner command reads every file found: secrets included
            self.paths.check_read(root, state, "find", recursive=True)
        return rest

    def _checked(self, name: str, checker: _Checker, texts: list[str], args: list[Word], state: State,
                 pattern: str | None) -> bool:
        """A program whose arguments a checker in programs.py reads (git, find, sed, awk, jq, ps)."""
        problems, read_idx = checker(texts)
        if problems:
            for p in problems:
                self.walk.need(p, pattern)
            return False
        for i in read_idx:
            self.paths.check_read(args[i], state, name)
        if name == "find" and not read_idx:
            self.paths.check_read(Word("."), state, name)
        if name == "git":
            for cwd in self.git_dirs(texts, state):
                why = P.repo_runs_code(cwd, self.walk.ws)
                if why:
                    self.walk.need(f"git here runs commands from the repository's config ({why})", pattern)
                if programs.git_prints_config(texts) and P.repo_holds_credentials(cwd, self.walk.ws):
                    self.walk.need("git prints remote URLs or config holding a credential (a token in a URL, "
                                   "an http extraheader)", human=True)
        return True

    def _unlisted(self, name: str, texts: list[str], pattern: str | None) -> bool:
        """A program with no allow-list entry: only a version query or a listed read-only subcommand."""
        if name in VERSION_QUERIES and len(texts) == 1 and texts[0] in VERSION_FLAGS:
            return True
        subs = SUBCOMMANDS.get(name)
        if subs and texts and texts[0] in subs and all(
            not t.startswith("-") or t in ("--json", "--format=json", "-l", "--depth=0", "-a", "--all")
            for t in texts[1:]
        ):
            return True
        self.walk.need(f"{name} is not on the read-only allow-list", pattern)
        return False

    def git_dirs(self, texts: list[str], state: State) -> list[Path]:
        """Where git will run: each possible cwd moved by every `-C dir` before the subcommand (a
        repository there has its own config, which may name commands)."""
        dirs = list(state.cwds or (self.walk.ws,))
        i = 0
        while i < len(texts) and texts[i].startswith("-"):
            if texts[i] == "-C" and i + 1 < len(texts):
                dirs = [P.resolve_logical(texts[i + 1], d) for d in dirs]
                i += 2
                continue
            i += 1
        return dirs

    def check_spec(self, name: str, spec: Prog, args: list[Word], state: State) -> bool:
        texts = [a.text for a in args]
        parsed = self._options(name, spec, args, texts)
        if parsed is None:
            return False
        ops, reads, has_pattern_flag = parsed
        if spec.operands == "none" and ops:
            self.walk.need(f"{name} with an operand changes something", pattern_for(name, texts))
            return False
        if spec.max_operands is not None and len(ops) > spec.max_operands:
            self.walk.need(f"{name} with {len(ops)} operands writes the last one", pattern_for(name, texts))
            return False
        for w in reads:  # `date -f FILE`, `grep -f FILE`: option values the program opens
            self.paths.check_read(w, state, name)
        if spec.operands == "data":
            return True
        if spec.operands == "pattern" and not has_pattern_flag:
            ops = ops[1:]
        if name in CREATORS:  # new files only: an existing one is changed (every expansion checked)
            changes = {"tee": "appends to" if {"-a", "--append"} & set(texts) else "overwrites",
                       "touch": "changes the times of"}.get(name)
            for i in ops:
                self.paths.check_write(args[i], state, verb=name, deleting=False, changes=changes)
            return True
        recursive = name in ("grep", "egrep", "fgrep") and bool(re.search(
            r"(^| )-\w*[rR]|--recursive|--dereference-recursive", " ".join(texts)))
        if name == "rg" and re.search(r"(^| )(--hidden|--no-ignore|-\w*u)", " ".join(texts)):
            recursive = True
        if name == "diff" and re.search(r"(^| )(-\w*r|--recursive)", " ".join(texts)):
            recursive = True  # `diff -r . /etc` prints every differing file below /etc
        if not ops and (name in _IMPLICIT_CWD or recursive):
            self.paths.check_read(Word("."), state, name, recursive=recursive)
        for i in ops:
            self.paths.check_read(args[i], state, name, recursive=recursive)
        return True

    def _options(self, name: str, spec: Prog, args: list[Word],
                 texts: list[str]) -> tuple[list[int], list[Word], bool] | None:
        """Read the options against the program's spec: (operand indexes, paths that option values name,
        whether a pattern came by -e/-f); None after asking about an option not known to be read-only."""
        ops: list[int] = []
        reads: list[Word] = []
        has_pattern_flag = False
        i, ended = 0, False
        while i < len(texts):
            t = texts[i]
            if not ended and t == "--":
                ended = True
            elif not ended and t.startswith("--") and name not in FREE_ARGS:
                opt, eq, val = t.partition("=")
                if opt in spec.path_value:
                    reads.append(Word(val) if eq else (args[i + 1] if i + 1 < len(args) else Word("")))
                    i += 0 if eq else 1
                elif opt in spec.value:
                    has_pattern_flag |= opt in ("--regexp", "--file")
                    i += 0 if eq else 1
                elif opt not in spec.long or eq:
                    self.walk.need(f"{name} {opt} is not known to be read-only", pattern_for(name, texts))
                    return None
            elif not ended and t.startswith("-") and len(t) > 1 and name not in FREE_ARGS:
                if spec.numeric and t[1:].isdigit():
                    i += 1
                    continue
                for j, ch in enumerate(t[1:], 1):
                    opt = "-" + ch
                    if opt in spec.path_value or opt in spec.value:
                        rest = t[j + 1 :]
                        if opt in spec.path_value:
                            reads.append(Word(rest) if rest else (args[i + 1] if i + 1 < len(args) else Word("")))
                        has_pattern_flag |= opt in ("-e", "-f")
                        i += 0 if rest else 1
                        break
                    if ch not in spec.short:
                        self.walk.need(f"{name} {t} is not known to be read-only", pattern_for(name, texts))
                        return None
            elif spec.operands == "data" and name == "printf" and i == 0 and t.startswith("-"):
                self.walk.need("printf with an option (-v assigns a variable)")
                return None
            else:
                ops.append(i)
            i += 1
        return ops, reads, has_pattern_flag
