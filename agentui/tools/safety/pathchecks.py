"""The walk's path checks: `cd`, globs and braces, reads, writes, redirections, secrets in arguments.

A part of `walk.Walker`: it reports through the walker (`need`, `deny`, `writes`) and reads words
with it (`word`, `substitutions`).
"""

from __future__ import annotations

import glob as globlib
import os
import re
from pathlib import Path
from typing import Any, Protocol

from agentui.tools.safety import paths as P
from agentui.tools.safety.envsecrets import secret_name
from agentui.tools.safety.walkstate import State, strip_option
from agentui.tools.safety.words import Word, expand_braces

_MAX_GLOB = 2000


class _Walk(Protocol):
    """What the path checks need of the walk they are part of."""

    ws: Path
    home: str
    writes: list[str]

    def need(self, reason: str, pattern: str | None = None, *, human: bool = False) -> None: ...

    def deny(self, reason: str) -> None: ...

    def word(self, node: Any, state: State) -> Word: ...

    def substitutions(self, node: Any, state: State) -> None: ...


class PathChecks:
    """Where each path a command names resolves, and whether reading or writing it may run unasked."""

    def __init__(self, walk: _Walk) -> None:
        self.walk = walk

    def cd(self, name: str, args: list[Word], state: State) -> None:
        ops = [a for a in args if not a.text.startswith("-") or a.text == "-"]
        if name == "popd" or (ops and ops[0].text == "-"):
            state.cwds = None
            return
        if not ops:
            state.cwds = (Path(os.path.realpath(self.walk.home)),)
            return
        target = ops[0]
        if not target.static or target.glob or target.brace or state.cwds is None and not os.path.isabs(target.text):
            state.cwds = None
            return
        new: list[Path] = []
        for cwd in state.cwds or (self.walk.ws,):
            dest = P.resolve_logical(target.text, cwd)
            new.extend([dest] if dest.is_dir() else [cwd, dest])  # a failing cd stays where it was
        state.cwds = tuple(dict.fromkeys(new))

    def expand(self, w: Word, state: State, verb: str) -> list[tuple[str, Path]] | None:
        """(lexical, resolved) pairs for a static word in every possible cwd; None after asking."""
        texts = [w.text]
        if w.brace:
            texts = expand_braces(w.text) or []
            if not texts:
                self.walk.need(f"{verb}: a brace expansion that cannot be followed: {w.text}")
                return None
        out: list[tuple[str, Path]] = []
        for text in texts:
            if state.cwds is None and not os.path.isabs(text):
                self.walk.need(f"{verb}: relative path {text} after a cd that cannot be followed")
                return None
            for cwd in state.cwds or (self.walk.ws,):
                found = [text]
                if w.glob:
                    base = None if os.path.isabs(text) else str(cwd)
                    found = globlib.glob(text, root_dir=base)[: _MAX_GLOB + 1] or [text]
                    if len(found) > _MAX_GLOB:
                        self.walk.need(f"{verb}: {text} matches too many paths to check")
                        return None
                out.extend((f, P.resolve(f, cwd)) for f in found)
        return out

    def check_read(self, w: Word, state: State, verb: str, *, recursive: bool = False) -> None:
        if w.procsub or w.text == "-" or w.text == "":
            return
        if not w.static:
            self.walk.need(f"{verb} reads a path only known at run time: {w.text}")
            return
        for lexical, path in self.expand(w, state, verb) or []:
            if P.is_secret(path, lexical, self.walk.ws):
                self.walk.deny(f"{verb} reads a secret path: {path}")
            elif not P.readable_unasked(path, self.walk.ws):
                self.walk.need(f"{verb} reads outside the workspace: {path}")
            elif recursive and path.is_dir() and not P.inside(path, self.walk.ws) and P.holds_secrets(path):
                self.walk.need(f"{verb} reads every file below {path}, a known secret store among them", human=True)
            elif recursive and path.is_dir():
                found = P.secret_below(path)
                if found:
                    self.walk.need(
                        f"{verb} reads every file below {P.show(path, self.walk.ws)}, secrets included: {found}"
                    )

    def check_write(self, w: Word, state: State, *, verb: str, deleting: bool,
                    prefix_strip: bool = False, changes: str | None = None) -> Path | None:
        """Deny writes outside; ask for code places, deletions and — with `changes` ("overwrites",
        "appends to", "changes the times of") — for every expansion that names an existing file."""
        text = strip_option(w.text) if prefix_strip else w.text
        w = Word(text, w.static, w.glob, w.brace, w.procsub)
        if P.writable_sink(text) or w.procsub:
            return None
        if not w.static:
            self.walk.need(f"{verb} writes to a path only known at run time: {text}")
            return None
        if w.glob:  # what a glob matches when it runs is not what it matches now
            self.walk.need(f"{verb} writes to a glob pattern: {text}")
        last: Path | None = None
        home = Path(os.path.realpath(self.walk.home))
        for _lexical, path in self.expand(w, state, verb) or []:
            last = path
            if deleting and (path == Path("/") or path == home or P.inside(home, path)):
                self.walk.deny(f"{verb} would delete {path} (your home or the root directory)")
            elif P.is_secret(path, _lexical) and not P.inside(path, self.walk.ws):
                self.walk.deny(f"{verb} writes into a secret location: {path}")
            elif not P.inside(path, self.walk.ws):
                if P.in_temp(path) and not P.inside(self.walk.ws, path):
                    self.walk.need(f"{verb} writes outside the workspace (temp dir): {path}")
                else:
                    self.walk.deny(f"{verb} writes outside the workspace: {path}")
            else:
                self.walk.writes.append(P.show(path, self.walk.ws))
                if P.is_code_place(path, self.walk.ws):
                    self.walk.need(f"{verb} writes {P.show(path, self.walk.ws)} (code there runs later)")
                elif deleting:
                    self.walk.need(f"{verb} deletes {P.show(path, self.walk.ws)}")
                elif changes and (path.is_file() or (changes == "changes the times of" and path.exists())):
                    self.walk.need(f"{verb} {changes} an existing file: {P.show(path, self.walk.ws)}")
                    if P.hard_linked(path):  # the other name may be outside: the sandbox cannot tell
                        self.walk.need(f"{P.show(path, self.walk.ws)} is a hard link: the write changes its other "
                                  "names too, possibly outside the workspace", human=True)
        return last

    def redirect(self, node: Any, state: State) -> None:
        kind = node.type
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None and ("$(" in heredoc.value or "`" in heredoc.value):
            self.walk.need("a here-document runs command substitutions")
        for var in re.findall(r"\$\{?!?([A-Za-z_]\w*)", heredoc.value if heredoc is not None else ""):
            if secret_name(var):
                self.walk.need(f"a here-document expands ${var}, which may hold a secret", human=True)
        output = node.output
        if not hasattr(output, "kind") or output.kind != "word" or kind == "<<":
            return
        self.walk.substitutions(output, state)
        w = self.walk.word(output, state)
        if kind in (">", ">|", "&>", ">&", "<>"):
            if kind == ">&" and w.text.isdigit():
                return
            self.check_write(w, state, verb="redirection", deleting=False, changes="overwrites")  # `1<>f` too
        elif kind in (">>", "&>>"):  # an append changes the file (code, requirements, notes) as much
            self.check_write(w, state, verb="redirection", deleting=False, changes="appends to")
        elif kind == "<":
            self.check_read(w, state, "input redirection")

    def scan_secrets(self, args: list[Word], state: State) -> None:
        """Any path-like piece of any argument that names a secret (`@~/.ssh/id_rsa`, `--key=.env`)."""
        for a in args:
            if not a.static:
                continue
            for piece in re.split(r"[\s=@:,;'\"()<>|&]+", a.text):
                if not piece or not (piece[0] in "~/." or "/" in piece):
                    continue
                lexical = os.path.expanduser(piece)
                for cwd in state.cwds or (self.walk.ws,):
                    path = P.resolve(lexical, cwd)
                    if P.is_secret(path, lexical, self.walk.ws):
                        self.walk.deny(f"reads a secret path: {path}")
                        break

