"""The AST walk: every simple command in a bash line, judged against the allow-list (fail closed).

Anything the walk cannot follow — a name or path only known at run time, an unparseable line, a
function, a `cd` it cannot resolve — becomes a reason to ask. Hard rules (effects.py) deny.
"""

from __future__ import annotations

import glob as globlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentui.tools.safety import effects, programs
from agentui.tools.safety import paths as P
from agentui.tools.safety.allowlist import (
    CREATORS,
    FREE_ARGS,
    PROGRAMS,
    SUBCOMMANDS,
    SYSTEM_BIN_DIRS,
    VERSION_FLAGS,
    VERSION_QUERIES,
    Prog,
)
from agentui.tools.safety.words import (
    MAX_SOURCE_CHARS,
    Word,
    expand_braces,
    is_system_program,
    parse,
    program_names,
    word,
)

_SAFE_ENV = re.compile(r"LC_\w+|LANG|LANGUAGE|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|COLUMNS|LINES|TERM|GIT_PAGER|PAGER")
_IMPLICIT_CWD = {"ls", "du", "tree", "rg", "find"}
_MAX_GLOB = 2000
_MAX_DEPTH = 8
_SUBCOMMAND_TOOLS = {
    "git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv", "poetry", "make",
    "brew", "apt", "apt-get", "systemctl", "gh", "terraform", "dotnet", "mvn", "gradle", "bundle", "rake",
    "mix", "swift", "helm", "npx", "bun", "deno", "just", "task", "tox", "nox", "hatch", "pdm", "conda",
}
# An approval for these names alone would be a blank cheque: the stored pattern is the exact command.
_EXACT_ONLY = (effects.DELETERS | effects.INTERPRETERS | effects.NETWORK | {
    "dd", "chmod", "chown", "chgrp", "kill", "pkill", "killall", "find", "mv", "cp", "ln", "truncate",
    "shred", "crontab", "launchctl", "defaults", "security", "sed", "tee", "install", "rsync", "tar",
    "unzip", "mkfs", "diskutil", "fdisk", "parted", "mount", "umount", "shutdown", "reboot", "halt",
})


@dataclass(frozen=True)
class Need:
    """One reason to ask; `pattern` is what an approval broader than once may store (None: once only)."""

    reason: str
    pattern: str | None = None


class State:
    """The shell state the walk follows: the possible working directories (None: unknowable)."""

    def __init__(self, cwds: tuple[Path, ...] | None, loop_vars: dict[str, Word] | None = None) -> None:
        self.cwds = cwds
        self.loop_vars: dict[str, Word] = dict(loop_vars or {})  # `for f in *.txt`: $f is one of *.txt

    def copy(self) -> State:
        return State(self.cwds, self.loop_vars)


def pattern_for(name: str, args: list[str]) -> str:
    """The approval pattern of a command: `git commit`, `npm test`, `pytest`; exact for risky ones."""
    if name in _EXACT_ONLY or effects.is_interpreter(name):
        return " ".join([name, *args])
    if name in _SUBCOMMAND_TOOLS:
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if name == "git" and args[i] in ("-C", "-c") else 1
        return f"{name} {args[i]}" if i < len(args) else name
    return name


class Walker:
    def __init__(self, workspace: Path, source: str, depth: int = 0) -> None:
        self.ws = workspace
        self.source = source
        self.depth = depth
        self.home = str(P.home())
        self.needs: list[Need] = []
        self.denials: list[str] = []
        self.writes: list[str] = []
        self.network: list[str] = []
        self.downloaded: set[str] = set()

    def need(self, reason: str, pattern: str | None = None) -> None:
        self.needs.append(Need(reason, pattern))

    def deny(self, reason: str) -> None:
        self.denials.append(reason)

    # -- structure ----------------------------------------------------------------------------
    def run(self) -> None:
        if len(self.source) > MAX_SOURCE_CHARS:
            self.need("command is too long to check")
            return
        trees = parse(self.source)
        if trees is None:
            self.need("the command could not be parsed (bashlex), so it cannot be checked")
            return
        self.run_in(State((self.ws,)), trees)

    def run_in(self, state: State, trees: list[Any] | None = None) -> None:
        if trees is None:
            if len(self.source) > MAX_SOURCE_CHARS:
                self.need("command is too long to check")
                return
            trees = parse(self.source)
            if trees is None:
                self.need("the command could not be parsed (bashlex), so it cannot be checked")
                return
        for tree in trees:
            self.node(tree, state)

    def node(self, node: Any, state: State) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, state)
        elif kind == "list":
            for child in node.parts:
                self.node(child, state)
        elif kind == "pipeline":
            self.pipeline(node, state)
        elif kind == "compound":
            subshell = bool(node.list) and getattr(node.list[0], "word", "") == "("
            inner = state.copy() if subshell else state
            for child in node.list:
                self.node(child, inner)
            for redirect in getattr(node, "redirects", None) or []:
                self.redirect(redirect, state)
        elif kind in ("for", "while", "until", "if"):
            if kind == "for":
                self.bind_loop(node, state)
            before = state.cwds
            for child in node.parts:
                self.node(child, state)
            if kind != "if" and state.cwds != before:  # a cd in a loop moves again each round
                state.cwds = None
                for child in node.parts:
                    self.node(child, state)
        elif kind == "function":
            self.need("defines a shell function (it can shadow any command)")
            for child in node.parts:
                if child.kind not in ("word", "reservedword"):
                    self.node(child, state.copy())
        elif kind == "word":
            self.substitutions(node, state)
        elif kind == "redirect":
            self.redirect(node, state)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.node(node.command, state.copy())
        elif kind in ("reservedword", "operator", "pipe", "parameter", "tilde", "heredoc"):
            return
        else:
            self.need(f"shell construct '{kind}' is not understood")

    def bind_loop(self, node: Any, state: State) -> None:
        """`for v in w1 w2 *.txt`: $v is treated as the brace/glob of its static values."""
        parts = node.parts
        if len(parts) < 3 or parts[1].kind != "word" or getattr(parts[2], "word", "") != "in":
            state.loop_vars.pop(getattr(parts[1], "word", ""), None)
            return
        values: list[Word] = []
        for p in parts[3:]:
            if p.kind != "word":
                break
            values.append(self.word(p, state))
        var = parts[1].word
        if not values or any(not v.static or v.brace or "," in v.text or "{" in v.text for v in values):
            state.loop_vars.pop(var, None)
            return
        text = values[0].text if len(values) == 1 else "{" + ",".join(v.text for v in values) + "}"
        state.loop_vars[var] = Word(text, True, any(v.glob for v in values), len(values) > 1)

    def substitutions(self, node: Any, state: State) -> None:
        for part in getattr(node, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.node(part.command, state.copy())

    def pipeline(self, node: Any, state: State) -> None:
        stages = [p for p in node.parts if p.kind not in ("pipe", "reservedword")]
        names = [program_names(s) for s in stages]
        for i, here in enumerate(names):
            if here & effects.DOWNLOADERS and any(
                any(effects.is_interpreter(n) for n in later) for later in names[i + 1 :]
            ):
                self.deny("download-and-execute: a download is piped into an interpreter")
                break
        for stage in stages:
            self.node(stage, state.copy())

    # -- simple commands --------------------------------------------------------------------
    def word(self, node: Any, state: State) -> Word:
        cwd = str(state.cwds[0]) if state.cwds and len(state.cwds) == 1 else None
        w = word(node, self.source, cwd, self.home)
        parts = getattr(node, "parts", None) or []
        if w.static or not state.loop_vars or not parts:
            return w
        if not all(p.kind == "parameter" and p.value in state.loop_vars for p in parts):
            return w
        text = node.word
        glob, brace = w.glob, w.brace
        for p in parts:
            bound = state.loop_vars[p.value]
            text = re.sub(r"\$\{" + re.escape(p.value) + r"\}|\$" + re.escape(p.value) + r"\b", lambda _m, b=bound: b.text, text)
            glob, brace = glob or bound.glob, brace or bound.brace
        return Word(text, True, glob, brace)

    def command(self, node: Any, state: State) -> None:
        words: list[Word] = []
        subs_programs: set[str] = set()
        assigns: list[str] = []
        redirects: list[Any] = []
        for part in node.parts:
            if part.kind == "word":
                self.substitutions(part, state)
                if _hidden_substitution(self.source[part.pos[0] : part.pos[1]], part):
                    self.need(f"a command substitution the parser cannot see: {part.word}")
                for sub in part.parts or []:
                    if sub.kind in ("commandsubstitution", "processsubstitution"):
                        subs_programs |= program_names(sub.command)
                words.append(self.word(part, state))
            elif part.kind == "assignment":
                self.substitutions(part, state)
                assigns.append(part.word)
            elif part.kind == "redirect":
                redirects.append(part)
        for assign in assigns:
            name = assign.split("=", 1)[0].rstrip("+")
            if words and not _SAFE_ENV.fullmatch(name):
                self.need(f"sets {name} in the environment of {words[0].text}")
            elif not words and not (name.islower() or _SAFE_ENV.fullmatch(name)):
                self.need(f"sets the shell variable {name} (it can change what later commands do)")
        for redirect in redirects:
            self.redirect(redirect, state)
        if words:
            self.simple(words, state, subs_programs)

    def simple(self, words: list[Word], state: State, subs_programs: set[str]) -> None:
        head, args = words[0], words[1:]
        texts = [a.text for a in args]
        if not head.static or (head.glob and head.text not in ("[", "[[")) or head.brace:
            self.need(f"runs a program whose name is only known at run time: {head.text}")
            self.scan_secrets(args, state)
            return
        local = "/" in head.text and not is_system_program(head.text, SYSTEM_BIN_DIRS)
        name = head.text if local else os.path.basename(head.text)
        for reason in effects.hard_denials(name, texts):
            self.deny(reason)
        if effects.is_interpreter(name) and subs_programs & effects.DOWNLOADERS:
            self.deny(f"download-and-execute: {name} runs what a download produced")
        if effects.is_interpreter(name) or name in ("chmod",):
            ran = {t.removeprefix("./") for t in texts}
            if ran & self.downloaded:
                self.deny(f"download-and-execute: {name} runs a file downloaded in the same command")
        deleting = name in effects.DELETERS or name == "mv"
        for idx in effects.written(name, texts):
            self.check_write(args[idx], state, verb=name, deleting=deleting, prefix_strip=True)
            if name in effects.DOWNLOADERS:
                self.downloaded.add(_strip_option(args[idx].text).removeprefix("./"))
        if name == "curl" and any(t in ("-O", "--remote-name", "-J") or re.fullmatch(r"-\w*O\w*", t)
                                  for t in texts):
            self.downloaded.update(os.path.basename(u.rstrip("/")) for u in effects.network(name, texts)[0])
        if self.allowed(name, local, args, state):
            return
        self.unwrap(name, args, state, subs_programs)
        self.scan_secrets(args, state)
        dests, uploads = effects.network(name, texts)
        if effects.reaches_network(name, texts) or dests:
            self.network.extend(dests or [name])
        for reason in uploads:
            self.need(reason)

    def unwrap(self, name: str, args: list[Word], state: State, subs_programs: set[str]) -> None:
        """Walk what a wrapper (`sudo`, `env`, `xargs`, `find -exec`) or `bash -c`/`eval` runs, so the
        hard deny-list and the reasons shown cover it; the wrapper itself already asks."""
        if self.depth >= _MAX_DEPTH:
            self.need("commands nested too deeply to check")
            return
        texts = [a.text for a in args]
        found = effects.inner_command(name, texts)
        if name in ("find",):
            for i, t in enumerate(texts):
                if t in ("-exec", "-execdir", "-ok", "-okdir"):
                    j = next((k for k in range(i + 1, len(texts)) if texts[k] in (";", "+")), len(texts))
                    if i + 1 < j:
                        self.nested_simple(args[i + 1 : j], state, subs_programs)
            return
        if found is None:
            return
        start, is_script = found
        if not is_script:
            self.nested_simple(args[start:], state, subs_programs)
            return
        script = args[start:] if name == "eval" else args[start : start + 1]
        if any(not w.static for w in script):
            return  # already asked: an argument only known at run time
        inner = Walker(self.ws, " ".join(w.text for w in script), self.depth + 1)
        inner.run_in(state.copy())
        self.merge(inner)

    def nested_simple(self, words: list[Word], state: State, subs_programs: set[str]) -> None:
        inner = Walker(self.ws, self.source, self.depth + 1)
        inner.downloaded = self.downloaded
        inner.simple(words, state.copy(), subs_programs)
        self.merge(inner)

    def nested_allowed(self, words: list[Word], state: State) -> bool:
        """Is this inner command (of `find -exec`) itself allow-listed? Its reasons are merged."""
        words = [w for w in words if w.text != "{}"]
        if not words or not words[0].static:
            self.need("find -exec runs a command whose name is only known at run time")
            return False
        inner = Walker(self.ws, self.source, self.depth + 1)
        ok = inner.allowed(os.path.basename(words[0].text), "/" in words[0].text
                           and not is_system_program(words[0].text, SYSTEM_BIN_DIRS), words[1:], state.copy())
        self.merge(inner)
        return ok and not inner.needs

    def merge(self, inner: Walker) -> None:
        self.needs.extend(inner.needs)
        self.denials.extend(inner.denials)
        self.writes.extend(inner.writes)
        self.network.extend(inner.network)
        self.downloaded |= inner.downloaded

    def allowed(self, name: str, local: bool, args: list[Word], state: State) -> bool:
        """True when this simple command is on the allow-list with only known-safe flags and paths."""
        texts = [a.text for a in args]
        pattern = pattern_for(name, texts)
        if local:
            self.need(f"runs a program from a path: {name}", pattern)
            return False
        spec = PROGRAMS.get(name)
        data_only = name in FREE_ARGS
        if not data_only and any(not a.static and not a.procsub for a in args):
            bad = next(a.text for a in args if not a.static and not a.procsub)
            self.need(f"{name}: an argument is only known at run time: {bad}", pattern if spec is None else None)
            return False
        if name in ("cd", "pushd", "popd"):
            self.cd(name, args, state)
            return True
        if name == "command" and texts[:1] in (["-v"], ["-V"]):
            return True
        if name == "read":  # assigns shell variables: only lowercase ones (PATH, IFS … would change later commands)
            names = [t for t in texts if not t.startswith("-")]
            if all(re.fullmatch(r"[a-z_][a-z0-9_]*", t) for t in names) and all(
                    re.fullmatch(r"-[rsea]+", t) for t in texts if t.startswith("-")):
                return True
            self.need("read with options or variable names that could change later commands")
            return False
        if name == "find":  # `find … -exec <read-only program> {} +`: the inner command on the allow-list
            inner = programs.find_exec_commands(texts)
            if inner is not None:
                rest, commands = inner
                ok = all(self.nested_allowed([args[i] for i in cmd], state) for cmd in commands)
                if not ok:
                    return False
                roots = [a for a in args[: next((i for i, t in enumerate(texts) if t.startswith("-")
                                                 or t in ("!", "(")), len(texts))]] or [Word(".")]
                for root in roots:  # the inner command reads every file found: secrets included
                    self.check_read(root, state, name, recursive=True)
                texts = rest
        if name in ("tar", "unzip") and programs.archive_listing(name, texts):
            for i, t in enumerate(texts):
                if not t.startswith("-") and i > 0 or (name == "unzip" and not t.startswith("-")):
                    self.check_read(args[i], state, name)
            return True
        checker = {"git": programs.git, "find": programs.find, "sed": programs.sed, "awk": programs.awk,
                   "gawk": programs.awk, "mawk": programs.awk}.get(name)
        if checker is not None:
            problems, read_idx = checker(texts)
            if problems:
                for p in problems:
                    self.need(p, pattern)
                return False
            for i in read_idx:
                self.check_read(args[i], state, name)
            if name == "find" and not read_idx:
                self.check_read(Word("."), state, name)
            if name == "git":
                for cwd in state.cwds or (self.ws,):
                    why = P.repo_runs_code(cwd, self.ws)
                    if why:
                        self.need(f"git here runs commands from the repository's config ({why})", pattern)
            return True
        if spec is None:
            if name in VERSION_QUERIES and len(texts) == 1 and texts[0] in VERSION_FLAGS:
                return True
            subs = SUBCOMMANDS.get(name)
            if subs and texts and texts[0] in subs and all(
                not t.startswith("-") or t in ("--json", "--format=json", "-l", "--depth=0", "-a", "--all")
                for t in texts[1:]
            ):
                return True
            self.need(f"{name} is not on the read-only allow-list", pattern)
            return False
        return self.check_spec(name, spec, args, state)

    def check_spec(self, name: str, spec: Prog, args: list[Word], state: State) -> bool:
        texts = [a.text for a in args]
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
                    self.need(f"{name} {opt} is not known to be read-only", pattern_for(name, texts))
                    return False
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
                        self.need(f"{name} {t} is not known to be read-only", pattern_for(name, texts))
                        return False
            elif spec.operands == "data" and name == "printf" and i == 0 and t.startswith("-"):
                self.need("printf with an option (-v assigns a variable)")
                return False
            else:
                ops.append(i)
            i += 1
        if spec.operands == "none" and ops:
            self.need(f"{name} with an operand changes something", pattern_for(name, texts))
            return False
        if spec.max_operands is not None and len(ops) > spec.max_operands:
            self.need(f"{name} with {len(ops)} operands writes the last one", pattern_for(name, texts))
            return False
        if spec.operands == "data":
            return True
        if spec.operands == "pattern" and not has_pattern_flag:
            ops = ops[1:]
        if name in CREATORS:
            for i in ops:
                target = self.check_write(args[i], state, verb=name, deleting=False)
                if name == "tee" and target is not None and target.is_file() and "-a" not in texts \
                        and "--append" not in texts:
                    self.need(f"tee overwrites an existing file: {P.show(target, self.ws)}")
            return True
        for w in reads:
            self.check_read(w, state, name)
        recursive = name in ("grep", "egrep", "fgrep") and bool(re.search(
            r"(^| )-\w*[rR]|--recursive|--dereference-recursive", " ".join(texts)))
        if name == "rg" and re.search(r"(^| )(--hidden|--no-ignore|-\w*u)", " ".join(texts)):
            recursive = True
        if not ops and (name in _IMPLICIT_CWD or recursive):
            self.check_read(Word("."), state, name, recursive=recursive)
        for i in ops:
            self.check_read(args[i], state, name, recursive=recursive)
        return True

    # -- cd, paths ------------------------------------------------------------------------------
    def cd(self, name: str, args: list[Word], state: State) -> None:
        ops = [a for a in args if not a.text.startswith("-") or a.text == "-"]
        if name == "popd" or (ops and ops[0].text == "-"):
            state.cwds = None
            return
        if not ops:
            state.cwds = (Path(os.path.realpath(self.home)),)
            return
        target = ops[0]
        if not target.static or target.glob or target.brace or state.cwds is None and not os.path.isabs(target.text):
            state.cwds = None
            return
        new: list[Path] = []
        for cwd in state.cwds or (self.ws,):
            dest = P.resolve_logical(target.text, cwd)
            new.extend([dest] if dest.is_dir() else [cwd, dest])  # a failing cd stays where it was
        state.cwds = tuple(dict.fromkeys(new))

    def expand(self, w: Word, state: State, verb: str) -> list[tuple[str, Path]] | None:
        """(lexical, resolved) pairs for a static word in every possible cwd; None after asking."""
        texts = [w.text]
        if w.brace:
            texts = expand_braces(w.text) or []
            if not texts:
                self.need(f"{verb}: a brace expansion that cannot be followed: {w.text}")
                return None
        out: list[tuple[str, Path]] = []
        for text in texts:
            if state.cwds is None and not os.path.isabs(text):
                self.need(f"{verb}: relative path {text} after a cd that cannot be followed")
                return None
            for cwd in state.cwds or (self.ws,):
                found = [text]
                if w.glob:
                    base = None if os.path.isabs(text) else str(cwd)
                    found = globlib.glob(text, root_dir=base)[: _MAX_GLOB + 1] or [text]
                    if len(found) > _MAX_GLOB:
                        self.need(f"{verb}: {text} matches too many paths to check")
                        return None
                out.extend((f, P.resolve(f, cwd)) for f in found)
        return out

    def check_read(self, w: Word, state: State, verb: str, *, recursive: bool = False) -> None:
        if w.procsub or w.text == "-" or w.text == "":
            return
        if not w.static:
            self.need(f"{verb} reads a path only known at run time: {w.text}")
            return
        for lexical, path in self.expand(w, state, verb) or []:
            if P.is_secret(path, lexical):
                self.deny(f"{verb} reads a secret path: {path}")
            elif not P.readable_unasked(path, self.ws):
                self.need(f"{verb} reads outside the workspace: {path}")
            elif recursive and path.is_dir():
                found = P.secret_below(path)
                if found:
                    self.need(f"{verb} reads every file below {P.show(path, self.ws)}, secrets included: {found}")

    def check_write(self, w: Word, state: State, *, verb: str, deleting: bool,
                    prefix_strip: bool = False) -> Path | None:
        text = _strip_option(w.text) if prefix_strip else w.text
        w = Word(text, w.static, w.glob, w.brace, w.procsub)
        if P.writable_sink(text) or w.procsub:
            return None
        if not w.static:
            self.need(f"{verb} writes to a path only known at run time: {text}")
            return None
        if w.glob:  # what a glob matches when it runs is not what it matches now
            self.need(f"{verb} writes to a glob pattern: {text}")
        last: Path | None = None
        home = Path(os.path.realpath(self.home))
        for _lexical, path in self.expand(w, state, verb) or []:
            last = path
            if deleting and (path == Path("/") or path == home or P.inside(home, path)):
                self.deny(f"{verb} would delete {path} (your home or the root directory)")
            elif P.is_secret(path, _lexical) and not P.inside(path, self.ws):
                self.deny(f"{verb} writes into a secret location: {path}")
            elif not P.inside(path, self.ws):
                if P.in_temp(path) and not P.inside(self.ws, path):
                    self.need(f"{verb} writes outside the workspace (temp dir): {path}")
                else:
                    self.deny(f"{verb} writes outside the workspace: {path}")
            else:
                self.writes.append(P.show(path, self.ws))
                if P.is_code_place(path, self.ws):
                    self.need(f"{verb} writes {P.show(path, self.ws)} (code there runs later)")
                elif deleting:
                    self.need(f"{verb} deletes {P.show(path, self.ws)}")
        return last

    def redirect(self, node: Any, state: State) -> None:
        kind = node.type
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None and ("$(" in heredoc.value or "`" in heredoc.value):
            self.need("a here-document runs command substitutions")
        output = node.output
        if not hasattr(output, "kind") or output.kind != "word" or kind == "<<":
            return
        self.substitutions(output, state)
        w = self.word(output, state)
        if kind in (">", ">|", "&>", ">&", "<>"):
            if kind == ">&" and w.text.isdigit():
                return
            target = self.check_write(w, state, verb="redirection", deleting=False)
            if target is not None and P.inside(target, self.ws) and target.is_file():  # `1<>f` writes f too
                self.need(f"redirection overwrites an existing file: {P.show(target, self.ws)}")
        elif kind in (">>", "&>>"):
            self.check_write(w, state, verb="redirection", deleting=False)
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
                for cwd in state.cwds or (self.ws,):
                    path = P.resolve(lexical, cwd)
                    if P.is_secret(path, lexical):
                        self.deny(f"reads a secret path: {path}")
                        break


def _hidden_substitution(raw: str, node: Any) -> bool:
    """More `$(`/backticks outside single quotes than bashlex found (e.g. inside `${x:=$(…)}`)."""
    count, i, quote = 0, 0, ""
    while i < len(raw):
        ch = raw[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif ch == "'" and quote != '"':
            quote = "'"
        elif ch == '"':
            quote = "" if quote == '"' else '"'
        elif ch == "`":
            count += 1
            j = raw.find("`", i + 1)
            i = j if j > 0 else len(raw)
        elif raw.startswith("$(", i) and not raw.startswith("$((", i):
            count += 1
        i += 1
    found = sum(1 for p in (getattr(node, "parts", None) or [])
                if p.kind in ("commandsubstitution", "processsubstitution"))
    return count > found


def _strip_option(text: str) -> str:
    """`of=x` / `--output=x` / `-ox` → x."""
    if text.startswith("of="):
        return text[3:]
    if text.startswith("--") and "=" in text:
        return text.split("=", 1)[1]
    if re.fullmatch(r"-[A-Za-z].+", text):
        return text[2:]
    return text
