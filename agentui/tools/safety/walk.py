"""The AST walk: every simple command in a bash line, judged against the allow-list (fail closed).

Anything the walk cannot follow — a name or path only known at run time, an unparseable line, a
function, a `cd` it cannot resolve — becomes a reason to ask. Hard rules (effects.py) deny.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentui.tools.safety import effects
from agentui.tools.safety import paths as P
from agentui.tools.safety.allowlist import SYSTEM_BIN_DIRS
from agentui.tools.safety.envsecrets import (
    dumps_environment,
    parameter_names,
    secret_name,
    secret_vars,
)
from agentui.tools.safety.evaluated import builtin_problem, evaluated_text
from agentui.tools.safety.judge import Judge
from agentui.tools.safety.pathchecks import PathChecks
from agentui.tools.safety.walkstate import Need, State, pattern_for, strip_option
from agentui.tools.safety.words import (
    MAX_SOURCE_CHARS,
    Word,
    is_system_program,
    parse,
    program_names,
    word,
)

__all__ = ["Need", "State", "Walker", "pattern_for"]

_SAFE_ENV = re.compile(r"LC_\w+|LANG|LANGUAGE|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|COLUMNS|LINES|TERM|GIT_PAGER|PAGER")
# A pager variable names a command git and man run: only these values are known not to run anything else.
_SAFE_PAGERS = {"", "cat", "less", "more"}
_MAX_DEPTH = 8


class Walker:
    """Walks one command line; `needs` (ask), `denials` (hard deny), `writes` and `network` to show."""

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
        self.commands: list[tuple[str, ...]] = []  # every simple command seen, for remembered rules (rules.py)
        self.paths = PathChecks(self)
        self.judge = Judge(self, self.paths)

    def need(self, reason: str, pattern: str | None = None, *, human: bool = False) -> None:
        self.needs.append(Need(reason, pattern, human))

    def deny(self, reason: str) -> None:
        self.denials.append(reason)

    # -- structure ----------------------------------------------------------------------------
    def run(self) -> None:
        self.run_in(State((self.ws,)))

    def run_in(self, state: State, trees: list[Any] | None = None) -> None:
        if trees is None:
            if len(self.source) > MAX_SOURCE_CHARS:
                self.need("command is too long to check")
                return
            for problem in evaluated_text(self.source):  # subscripts, arithmetic, ${x@P}: code bash runs
                self.need(problem)
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
                self.paths.redirect(redirect, state)
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
            self.paths.redirect(node, state)
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
        for var in parameter_names(node):  # `$GITHUB_TOKEN` would print or send a secret
            if var.startswith("!") or secret_name(var):
                self.need(f"expands ${{{var}}}, which may hold a secret from the environment", human=True)
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
            text = re.sub(r"\$\{" + re.escape(p.value) + r"\}|\$" + re.escape(p.value) + r"\b",
                          _literal(bound.text), text)
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
            name, _eq, value = assign.partition("=")
            name = name.rstrip("+")
            if name in ("PAGER", "GIT_PAGER") and value.strip("'\"") not in _SAFE_PAGERS:
                self.need(f"sets {name} to a command ({value[:40]})")
            elif words and not _SAFE_ENV.fullmatch(name):
                self.need(f"sets {name} in the environment of {words[0].text}")
            elif not words and not (name.islower() or _SAFE_ENV.fullmatch(name)):
                self.need(f"sets the shell variable {name} (it can change what later commands do)")
        for redirect in redirects:
            self.paths.redirect(redirect, state)
        if words:
            self.simple(words, state, subs_programs)

    def simple(self, words: list[Word], state: State, subs_programs: set[str]) -> None:
        head, args = words[0], words[1:]
        texts = [a.text for a in args]
        if not head.static or (head.glob and head.text not in ("[", "[[")) or head.brace:
            self.need(f"runs a program whose name is only known at run time: {head.text}")
            self.paths.scan_secrets(args, state)
            return
        local = "/" in head.text and not is_system_program(head.text, SYSTEM_BIN_DIRS)
        name = head.text if local else os.path.basename(head.text)
        self.commands.append((os.path.basename(head.text), *texts))
        self.environment_reads(name, texts)
        problem = builtin_problem(name, texts)
        if problem:
            self.need(problem)
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
            self.paths.check_write(args[idx], state, verb=name, deleting=deleting, prefix_strip=True)
            if name in effects.DOWNLOADERS:
                self.downloaded.add(strip_option(args[idx].text).removeprefix("./"))
        if name == "curl" and any(t in ("-O", "--remote-name", "-J") or re.fullmatch(r"-\w*O\w*", t)
                                  for t in texts):
            self.downloaded.update(os.path.basename(u.rstrip("/")) for u in effects.network(name, texts)[0])
        if self.judge.allowed(name, local, args, state):
            return
        self.unwrap(name, args, state, subs_programs)
        self.paths.scan_secrets(args, state)
        dests, uploads = effects.network(name, texts)
        if effects.reaches_network(name, texts) or dests:
            self.network.extend(dests or [name])
        for reason in uploads:
            self.need(reason)

    def environment_reads(self, name: str, texts: list[str]) -> None:
        """`env`, `printenv`, `set`, `export -p` print every variable; `printenv X` one (envsecrets.py)."""
        if dumps_environment(name, texts):
            found = secret_vars()  # agentui's own environment: stricter than the scrubbed one tools get
            if found:
                self.need(f"{name} prints every environment variable, secrets among them: "
                          f"{', '.join(found[:4])}{' …' if len(found) > 4 else ''}", human=True)
            else:  # what a tool sees is scrubbed, but reading the environment back is still asked
                self.need(f"{name} prints the environment")
        elif name == "printenv":
            for var in (t for t in texts if not t.startswith("-")):
                if secret_name(var):
                    self.need(f"printenv {var} prints a secret from the environment", human=True)

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

    def nested_allowed(self, words: list[Word], state: State) -> bool:
        """Is this inner command (of `find -exec`) itself allow-listed? Its reasons are merged."""
        words = [w for w in words if w.text != "{}"]
        if not words or not words[0].static:
            self.need("find -exec runs a command whose name is only known at run time")
            return False
        inner = Walker(self.ws, self.source, self.depth + 1)
        inner.commands.append((os.path.basename(words[0].text), *(w.text for w in words[1:])))
        ok = inner.judge.allowed(os.path.basename(words[0].text), "/" in words[0].text
                           and not is_system_program(words[0].text, SYSTEM_BIN_DIRS), words[1:], state.copy())
        self.merge(inner)
        return ok and not inner.needs

    def nested_simple(self, words: list[Word], state: State, subs_programs: set[str]) -> None:
        inner = Walker(self.ws, self.source, self.depth + 1)
        inner.downloaded = self.downloaded
        inner.simple(words, state.copy(), subs_programs)
        self.merge(inner)

    def merge(self, inner: Walker) -> None:
        self.needs.extend(inner.needs)
        self.denials.extend(inner.denials)
        self.writes.extend(inner.writes)
        self.network.extend(inner.network)
        self.downloaded |= inner.downloaded
        self.commands.extend(inner.commands)


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A re.sub replacement that inserts `text` as it is (no backslash escapes)."""
    return lambda _m: text


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
