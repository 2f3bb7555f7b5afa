"""The tool safety gate (DESIGN §5): which shell commands and file writes need an explicit yes.

Commands are parsed with bashlex and the AST is walked (lists, pipelines, compounds, loops,
functions, command/process substitutions, redirects). Wrappers (`sudo`, `env`, `xargs`,
`find -exec`, `bash -c`, `eval` …) are unwrapped and their inner command is assessed too.
When in doubt — unparseable input, a path that cannot be resolved statically — the gate asks.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bashlex

_MAX_DEPTH = 8
_MAX_SOURCE_CHARS = 100_000  # bashlex is slow on huge inputs; nobody reviews those anyway

# Writing to these is never destructive.
_HARMLESS_SINKS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")

_DELETERS = {"rm", "rmdir", "unlink", "shred", "srm", "wipe"}
_DISK_TOOLS = {"fdisk", "sfdisk", "gdisk", "cfdisk", "parted", "wipefs", "mke2fs", "format"}
_POWER = {"shutdown", "reboot", "halt", "poweroff", "launchctl", "init", "telinit"}
_KILLERS = {"kill", "killall", "pkill", "skill", "xkill"}
_ELEVATE = {"sudo", "doas", "su", "pkexec", "runas"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh"}
_DOWNLOADERS = {"curl", "wget", "fetch", "aria2c"}
_INTERPRETERS = _SHELLS | {"python", "python3", "perl", "ruby", "node", "php"}
# Wrappers that simply run the rest of their arguments as a command: name -> options taking a value.
_WRAPPERS: dict[str, set[str]] = {
    "nohup": set(),
    "time": {"-f", "-o", "--format", "--output"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-t"},
    "stdbuf": {"-i", "-o", "-e"},
    "command": set(),
    "builtin": set(),
    "exec": {"-a"},
    "caffeinate": {"-t", "-w"},
    "chronic": set(),
}
_SUDO_VALUE_OPTS = {"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-R", "--user", "--group"}
_XARGS_VALUE_OPTS = {"-I", "-i", "-n", "-P", "-L", "-l", "-d", "-E", "-e", "-s", "-a",
                     "--max-args", "--max-procs", "--delimiter", "--arg-file", "--max-lines"}
_ENV_VALUE_OPTS = {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}
_TIMEOUT_VALUE_OPTS = {"-s", "--signal", "-k", "--kill-after"}
_SYSTEMCTL_SAFE = {"status", "show", "cat", "is-active", "is-enabled", "is-failed", "list-units",
                   "list-unit-files", "list-timers", "list-sockets", "help"}
_DISKUTIL_SAFE = {"list", "info", "information", "activity", "listFilesystems", "apfs"}

_COPY_VALUE_OPTS = {"-t", "--target-directory", "-S", "--suffix"}
_COPY_EXTRA_VALUE_OPTS = {
    "install": {"-m", "--mode", "-o", "--owner", "-g", "--group"},
    "rsync": {"-e", "--rsh", "--exclude", "--include", "-f", "--filter"},
}
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_ARITHMETIC = re.compile(r"\$\(\([^()$`]*\)\)")
_TIME_PREFIX = re.compile(r"^(\s*)time(\s+-p)?\s+")
_FORK_BOMB = re.compile(r"(\S+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}")


@dataclass(frozen=True)
class Assessment:
    """The gate's verdict: ask the user iff `needs_confirmation`; `reasons` say why."""

    needs_confirmation: bool
    reasons: tuple[str, ...]


SAFE = Assessment(False, ())


def assess(command: str, workspace: Path) -> Assessment:
    """Assess one shell command line run with `/bin/bash -c` in `workspace`."""
    checker = _Checker(Path(os.path.realpath(workspace)))
    checker.script(command, checker.workspace, depth=0)
    return checker.result()


def assess_write(path: Path, workspace: Path, *, append: bool = False) -> Assessment:
    """Assess a write_file call: writes outside the workspace or over an existing file ask."""
    ws = Path(os.path.realpath(workspace))
    target = _resolve_path(str(path), ws)
    reasons: list[str] = []
    if not _inside(target, ws):
        reasons.append(f"writes outside the workspace: {target}")
    elif not append and target.is_file():
        reasons.append(f"overwrites an existing file: {_show(target, ws)}")
    elif target.is_dir():
        reasons.append(f"target is a directory: {_show(target, ws)}")
    return Assessment(bool(reasons), tuple(reasons))


# ---------------------------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------------------------


def _resolve_path(raw: str, cwd: Path) -> Path:
    """Lexically expand `~` and `..` against `cwd`, then follow symlinks of what exists."""
    expanded = os.path.expanduser(raw)
    joined = os.path.join(str(cwd), expanded)
    return Path(os.path.realpath(os.path.normpath(joined)))


def _inside(path: Path, workspace: Path) -> bool:
    return path == workspace or workspace in path.parents


def _show(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def _harmless_sink(raw: str) -> bool:
    return raw in _HARMLESS_SINKS or any(raw.startswith(p) for p in _HARMLESS_SINKS if p.endswith("/"))


# ---------------------------------------------------------------------------------------------
# Words: bashlex word nodes reduced to (text, is_static)
# ---------------------------------------------------------------------------------------------


@dataclass
class _Word:
    text: str
    static: bool  # False when it holds an expansion we cannot evaluate ($X, $(…), `…`)


_KNOWN_VARS = ("HOME", "PWD", "TMPDIR")


def _word(node: Any, cwd: Path | None) -> _Word:
    text = node.word
    static = True
    for part in getattr(node, "parts", []) or []:
        if part.kind == "parameter":
            if part.value == "HOME":
                continue
            if part.value == "PWD" and cwd is not None:
                continue
            static = False
        elif part.kind in ("commandsubstitution", "processsubstitution"):
            static = False
    if static and "$" in text:
        home = os.path.expanduser("~")
        text = re.sub(r"\$\{HOME\}|\$HOME\b", home, text)
        if cwd is not None:
            text = re.sub(r"\$\{PWD\}|\$PWD\b", str(cwd), text)
    return _Word(text, static)


# ---------------------------------------------------------------------------------------------
# The AST walk
# ---------------------------------------------------------------------------------------------


class _Checker:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.reasons: list[str] = []

    def result(self) -> Assessment:
        reasons = tuple(dict.fromkeys(self.reasons))  # dedupe, keep order
        return Assessment(bool(reasons), reasons)

    def flag(self, reason: str) -> None:
        self.reasons.append(reason)

    # -- entry points ---------------------------------------------------------------------

    def script(self, source: str, cwd: Path | None, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.flag("command is nested too deeply to check")
            return
        if not source.strip():
            return
        if len(source) > _MAX_SOURCE_CHARS:
            self.flag("command is too long to check")
            return
        if _FORK_BOMB.search(source):
            self.flag("fork bomb: a function that pipes into itself in the background")
        trees = _parse(source)
        if trees is None:
            self.flag("could not parse command")
            return
        state = _State(cwd)
        for tree in trees:
            self.node(tree, state, depth)

    def node(self, node: Any, state: _State, depth: int) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, state, depth)
        elif kind == "pipeline":
            self.pipeline(node, state, depth)
        elif kind == "function":
            self.function(node, state, depth)
        elif kind == "compound":
            # ( … ) runs in a subshell: a `cd` inside does not leak out.
            is_subshell = bool(node.list) and getattr(node.list[0], "word", "") == "("
            inner = _State(state.cwd) if is_subshell else state
            for child in node.list:
                self.node(child, inner, depth)
            for redirect in getattr(node, "redirects", []) or []:
                self.redirect(redirect, state, depth)
        elif kind in ("list", "for", "while", "until", "if", "case"):
            for child in node.parts:
                self.node(child, state, depth)
        elif kind == "word":
            self.word_substitutions(node, state, depth)
        elif kind == "redirect":
            self.redirect(node, state, depth)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.node(node.command, _State(state.cwd), depth)
        # operator, reservedword, pipe, parameter, tilde, heredoc: nothing to check

    def word_substitutions(self, node: Any, state: _State, depth: int) -> None:
        for part in getattr(node, "parts", []) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.node(part.command, _State(state.cwd), depth)

    def pipeline(self, node: Any, state: _State, depth: int) -> None:
        commands = [p for p in node.parts if p.kind != "pipe"]
        names = [_command_name(c) for c in commands]
        for i, name in enumerate(names):
            if name in _DOWNLOADERS and any(
                n in _INTERPRETERS and not _has_script_arg(c)
                for n, c in zip(names[i + 1 :], commands[i + 1 :], strict=False)
            ):
                self.flag(f"pipes a download ({name}) into a shell")
                break
        for child in commands:
            self.node(child, _State(state.cwd), depth)  # each stage runs in its own subshell

    def function(self, node: Any, state: _State, depth: int) -> None:
        name = node.parts[0].word if node.parts and node.parts[0].kind == "word" else ""
        body = [p for p in node.parts if p.kind not in ("word", "reservedword")]
        if name and any(_calls(b, name) for b in body):
            self.flag(f"recursive function '{name}' (possible fork bomb)")
        for child in body:
            self.node(child, _State(state.cwd), depth)

    # -- simple commands ----------------------------------------------------------------

    def command(self, node: Any, state: _State, depth: int) -> None:
        words: list[_Word] = []
        for part in node.parts:
            if part.kind == "word":
                self.word_substitutions(part, state, depth)
                words.append(_word(part, state.cwd))
            elif part.kind == "assignment":
                self.word_substitutions(part, state, depth)
            elif part.kind == "redirect":
                self.redirect(part, state, depth)
        if words:
            self.argv(words, state, depth)

    def argv(self, words: list[_Word], state: _State, depth: int) -> None:
        """Assess one command given as words (the first is the command name)."""
        if depth > _MAX_DEPTH:
            self.flag("command is nested too deeply to check")
            return
        head, args = words[0], words[1:]
        if not head.static:
            self.flag(f"runs a command whose name is only known at run time: {head.text}")
            return
        name = os.path.basename(head.text)
        texts = [a.text for a in args]
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, name, args, state, depth)
        elif name == "command" and any(t in ("-v", "-V") for t in texts):
            return  # a lookup, runs nothing
        elif name in _WRAPPERS:
            rest = _skip_options(args, _WRAPPERS[name])
            if rest:
                self.argv(rest, state, depth + 1)
        elif name in _DELETERS:
            self.flag(f"{name} deletes files")
        elif name.startswith("mkfs") or name.startswith("newfs") or name in _DISK_TOOLS:
            self.flag(f"{name} can erase a disk or partition")
        elif name in _KILLERS:
            self.flag(f"{name} terminates processes")
        elif name in _POWER:
            self.flag(f"{name} changes the system's power or service state")
        elif name in _ELEVATE:
            self.flag(f"{name} runs with elevated privileges")
            self.elevated(name, args, state, depth)
        elif name == "dd":
            self.flag("dd writes raw data")
        elif name == "truncate":
            self.flag("truncate cuts files")
        elif name in _SHELLS:
            self.shell(args, state, depth)
        elif name == "eval":
            self.script(" ".join(texts), state.cwd, depth + 1)
        elif name in ("sed", "perl") and any(t.startswith("-i") or t == "--in-place" for t in texts):
            for arg in _operands(args)[1:]:
                self.write(arg, state, overwrite=False, what=f"{name} -i")

    # -- redirects and writes -----------------------------------------------------------

    def redirect(self, node: Any, state: _State, depth: int) -> None:
        kind = node.type
        output = node.output
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            self.heredoc(heredoc.value, state, depth)
        if not hasattr(output, "kind") or output.kind != "word":
            return  # fd duplication such as 2>&1
        self.word_substitutions(output, state, depth)
        if kind in (">", ">|", "&>", ">&", "<>"):
            self.write(_word(output, state.cwd), state, overwrite=True, what="redirection")
        elif kind in (">>", "&>>"):
            self.write(_word(output, state.cwd), state, overwrite=False, what="redirection")

    def heredoc(self, body: str, state: _State, depth: int) -> None:
        """An unquoted here-document runs its command substitutions."""
        found = _SUBSTITUTION.findall(body)
        for dollar, backtick in found:
            self.script(dollar or backtick, state.cwd, depth + 1)
        if body.count("$(") + body.count("`") // 2 > len(found):
            self.flag("here-document holds command substitutions that could not be checked")

    def write(self, word: _Word, state: _State, *, overwrite: bool, what: str) -> Path | None:
        """Check a path the command writes; flags out-of-workspace and (if asked) clobbering."""
        if _harmless_sink(word.text):
            return None
        if not word.static:
            self.flag(f"{what} writes to a path only known at run time: {word.text}")
            return None
        if state.cwd is None and not os.path.isabs(os.path.expanduser(word.text)):
            self.flag(f"{what} writes to {word.text} in an unknown directory")
            return None
        target = _resolve_path(word.text, state.cwd or self.workspace)
        if not _inside(target, self.workspace):
            self.flag(f"{what} writes outside the workspace: {target}")
        elif overwrite and target.is_file():
            self.flag(f"{what} overwrites an existing file: {_show(target, self.workspace)}")
        return target

    # -- command families -----------------------------------------------------------------

    def elevated(self, name: str, args: list[_Word], state: _State, depth: int) -> None:
        if name == "su":
            texts = [a.text for a in args]
            if "-c" in texts and texts.index("-c") + 1 < len(texts):
                self.script(texts[texts.index("-c") + 1], state.cwd, depth + 1)
            return
        rest = _skip_options(args, _SUDO_VALUE_OPTS)
        if rest:
            self.argv(rest, state, depth + 1)

    def shell(self, args: list[_Word], state: _State, depth: int) -> None:
        for i, arg in enumerate(args):
            if arg.text.startswith("-") and "c" in arg.text.lstrip("-") and not arg.text.startswith("--"):
                if i + 1 < len(args):
                    script = args[i + 1]
                    if not script.static:
                        self.flag(f"runs a shell script only known at run time: {script.text}")
                    else:
                        self.script(script.text, state.cwd, depth + 1)
                return
            if not arg.text.startswith("-"):
                return  # `bash script.sh`: runs a file; its content is not ours to parse


def _cmd_cd(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    ops = [a for a in args if not a.text.startswith("-") or a.text == "-"]
    if not ops:
        state.cwd = Path(os.path.realpath(os.path.expanduser("~")))
    elif not ops[0].static or ops[0].text == "-" or state.cwd is None:
        state.cwd = None
    else:
        state.cwd = _resolve_path(ops[0].text, state.cwd)


def _cmd_env(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    rest = _skip_options(args, _ENV_VALUE_OPTS)
    while rest and "=" in rest[0].text and not rest[0].text.startswith("="):
        rest = rest[1:]
    if rest:
        c.argv(rest, state, depth + 1)


def _cmd_timeout(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    rest = _skip_options(args, _TIMEOUT_VALUE_OPTS)
    if len(rest) > 1:
        c.argv(rest[1:], state, depth + 1)  # rest[0] is the duration


def _cmd_xargs(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    rest = _skip_options(args, _XARGS_VALUE_OPTS)
    if rest:
        c.argv(rest, state, depth + 1)


def _cmd_find(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "-delete":
            c.flag("find -delete deletes files")
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            inner = args[i + 1 : j]
            if inner:
                c.argv(inner, state, depth + 1)
            i = j
        elif text in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            c.write(args[i + 1], state, overwrite=True, what=f"find {text}")
            i += 1
        i += 1


def _cmd_copy_move(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    texts = [a.text for a in args]
    no_clobber = any(t in ("-n", "--no-clobber", "--update=none") for t in texts) or any(
        t.startswith("-") and not t.startswith("--") and "n" in t for t in texts
    )
    target_dir: _Word | None = None
    for i, t in enumerate(texts):
        if t in ("-t", "--target-directory") and i + 1 < len(args):
            target_dir = args[i + 1]
        elif t.startswith("--target-directory="):
            target_dir = _Word(t.split("=", 1)[1], args[i].static)
    ops = _operands(args, value_opts=_COPY_VALUE_OPTS | _COPY_EXTRA_VALUE_OPTS.get(name, set()))
    if name == "rsync" and any(t.startswith("--delete") or t.startswith("--remove-source") for t in texts):
        c.flag("rsync --delete removes files at the destination")
    if target_dir is None:
        if len(ops) < 2:
            return
        sources, dest = ops[:-1], ops[-1]
    else:
        sources, dest = ops, target_dir
    verb = name
    if name == "mv":
        for src in sources:  # moving removes the source: outside the workspace that is an effect too
            if src.static and state.cwd is not None:
                path = _resolve_path(src.text, state.cwd)
                if not _inside(path, c.workspace):
                    c.flag(f"mv moves files from outside the workspace: {path}")
    dest_path = c.write(dest, state, overwrite=False, what=verb)
    if dest_path is None or no_clobber or not _inside(dest_path, c.workspace):
        return
    if dest_path.is_dir():
        for src in sources:
            landing = dest_path / os.path.basename(src.text.rstrip("/"))
            if src.static and landing.is_file():
                c.flag(f"{verb} overwrites an existing file: {_show(landing, c.workspace)}")
    elif dest_path.is_file():
        c.flag(f"{verb} overwrites an existing file: {_show(dest_path, c.workspace)}")


def _cmd_ln(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    ops = _operands(args, value_opts={"-t", "--target-directory", "-S", "--suffix"})
    force = any(
        t.text in ("--force",) or (t.text.startswith("-") and not t.text.startswith("--") and "f" in t.text)
        for t in args
    )
    if len(ops) >= 2:
        dest = c.write(ops[-1], state, overwrite=False, what="ln")
        if force and dest is not None and (dest.is_file() or dest.is_symlink()):
            c.flag(f"ln -f replaces an existing file: {_show(dest, c.workspace)}")


def _cmd_creates(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    """touch / mkdir: harmless inside the workspace, an effect outside it."""
    value_opts = {"-m", "--mode", "-r", "--reference", "-d", "--date", "-t"}
    for op in _operands(args, value_opts=value_opts):
        c.write(op, state, overwrite=False, what=name)


def _cmd_tee(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    append = any(a.text in ("-a", "--append") for a in args)
    for op in _operands(args):
        c.write(op, state, overwrite=not append, what="tee")


def _cmd_chmod(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    recursive = any(
        a.text == "--recursive" or (a.text.startswith("-") and not a.text.startswith("--") and "R" in a.text)
        for a in args
    )
    if recursive:
        c.flag(f"{name} -R changes permissions recursively")
    has_reference = any(a.text.startswith("--reference") for a in args)
    # chmod's mode may look like an option (-x); keep dash-words that are not known flags.
    known = {"-R", "-f", "-v", "-c", "-h", "-H", "-L", "-P", "--recursive", "--verbose",
             "--changes", "--silent", "--quiet", "--no-dereference", "--dereference"}
    ops = [a for a in args if a.text not in known and not a.text.startswith("--")
           and not (a.text.startswith("-") and set(a.text[1:]) <= set("RfvchHLP"))]
    paths = ops if has_reference else ops[1:]
    for op in paths:
        if not op.static:
            c.flag(f"{name} on a path only known at run time: {op.text}")
            continue
        target = _resolve_path(op.text, state.cwd or c.workspace)
        if state.cwd is None or not _inside(target, c.workspace):
            c.flag(f"{name} outside the workspace: {target}")


def _cmd_git(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    texts = [a.text for a in args]
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        i += 2 if texts[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(texts):
        return
    sub, rest = texts[i], texts[i + 1 :]
    shorts = "".join(t[1:] for t in rest if t.startswith("-") and not t.startswith("--"))
    if sub == "reset" and any(t in ("--hard", "--merge", "--keep") for t in rest):
        c.flag("git reset --hard discards local changes")
    elif sub == "clean" and not ("n" in shorts or "--dry-run" in rest):
        c.flag("git clean deletes untracked files")
    elif sub == "checkout" and ("--" in rest or "." in rest or "f" in shorts or "--force" in rest):
        c.flag("git checkout discards local changes")
    elif sub == "restore" and not (
        ("--staged" in rest or "S" in shorts) and "--worktree" not in rest and "W" not in shorts
    ):
        c.flag("git restore discards local changes")
    elif sub == "push" and (
        "f" in shorts
        or any(t.startswith(("--force", "--mirror", "--delete")) for t in rest)
        or any(t.startswith("+") for t in rest)
        or "d" in shorts
    ):
        c.flag("git push --force rewrites remote history")
    elif sub == "branch" and ("D" in shorts or ("d" in shorts and "f" in shorts)):
        c.flag("git branch -D deletes a branch")
    elif sub == "stash" and rest[:1] in (["drop"], ["clear"]):
        c.flag("git stash drop/clear deletes stashed changes")
    elif sub == "rm":
        c.flag("git rm deletes files")
    elif sub == "filter-branch" or (sub == "update-ref" and "-d" in rest):
        c.flag(f"git {sub} rewrites history")


def _cmd_crontab(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    texts = [a.text for a in args]
    if any(t.startswith("-") and "r" in t for t in texts):
        c.flag("crontab -r deletes the user's crontab")
    elif any(not t.startswith("-") for t in texts) or "-" in texts:
        c.flag("crontab replaces the user's crontab")


def _cmd_systemctl(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    ops = [a.text for a in args if not a.text.startswith("-")]
    if ops and ops[0] not in _SYSTEMCTL_SAFE:
        c.flag(f"systemctl {ops[0]} changes system services")


def _cmd_diskutil(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    ops = [a.text for a in args if not a.text.startswith("-")]
    if ops and ops[0] not in _DISKUTIL_SAFE:
        c.flag(f"diskutil {ops[0]} can erase or modify disks")


def _cmd_download(c: _Checker, name: str, args: list[_Word], state: _State, depth: int) -> None:
    out_opts = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document")}.get(name, ())
    for i, a in enumerate(args):
        if a.text in out_opts and i + 1 < len(args) and args[i + 1].text != "-":
            c.write(args[i + 1], state, overwrite=True, what=name)


_HANDLERS = {
    "cd": _cmd_cd,
    "pushd": _cmd_cd,
    "env": _cmd_env,
    "timeout": _cmd_timeout,
    "gtimeout": _cmd_timeout,
    "xargs": _cmd_xargs,
    "find": _cmd_find,
    "mv": _cmd_copy_move,
    "cp": _cmd_copy_move,
    "install": _cmd_copy_move,
    "rsync": _cmd_copy_move,
    "ln": _cmd_ln,
    "touch": _cmd_creates,
    "mkdir": _cmd_creates,
    "tee": _cmd_tee,
    "chmod": _cmd_chmod,
    "chown": _cmd_chmod,
    "chgrp": _cmd_chmod,
    "git": _cmd_git,
    "crontab": _cmd_crontab,
    "systemctl": _cmd_systemctl,
    "diskutil": _cmd_diskutil,
    "curl": _cmd_download,
    "wget": _cmd_download,
}


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _parse(source: str) -> list[Any] | None:
    """bashlex trees, or None. Retries without what bashlex cannot parse but bash would."""
    attempts = [source]
    simplified = _TIME_PREFIX.sub(r"\1", _ARITHMETIC.sub("0", source))
    if simplified != source:
        attempts.append(simplified)
    for text in attempts:
        try:
            return bashlex.parse(text)
        except Exception:  # bashlex raises ParsingError, NotImplementedError, IndexError …
            continue
    return None


class _State:
    """The walk's shell state: the current directory (None once a `cd` made it unknowable)."""

    def __init__(self, cwd: Path | None) -> None:
        self.cwd = cwd


def _skip_options(args: list[_Word], value_opts: set[str]) -> list[_Word]:
    """Drop leading options (and the values of those that take one); return the inner command."""
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            return args[i + 1 :]
        if not text.startswith("-") or text == "-":
            break
        i += 2 if text in value_opts else 1
    return args[i:]


def _operands(args: list[_Word], value_opts: Collection[str] = ()) -> list[_Word]:
    out: list[_Word] = []
    skip = False
    ended = False
    for a in args:
        if skip:
            skip = False
            continue
        if not ended and a.text == "--":
            ended = True
            continue
        if not ended and a.text.startswith("-") and a.text != "-":
            skip = a.text in value_opts
            continue
        out.append(a)
    return out


def _command_name(node: Any) -> str:
    if node.kind != "command":
        return ""
    for part in node.parts:
        if part.kind == "word":
            name = os.path.basename(part.word)
            return name
    return ""


def _has_script_arg(node: Any) -> bool:
    """`… | bash -c 'x'` or `… | python file.py` does not execute stdin."""
    words = [p.word for p in node.parts if p.kind == "word"][1:]
    for w in words:
        if w == "-c" or (w.startswith("-") and not w.startswith("--") and "c" in w):
            return True
        if not w.startswith("-"):
            return w != "-"
    return False


def _calls(node: Any, name: str) -> bool:
    if node.kind == "command":
        words = [p for p in node.parts if p.kind == "word"]
        if words and words[0].word == name:
            return True
    children: list[Any] = []
    for attr in ("parts", "list"):
        children.extend(getattr(node, attr, None) or [])
    command = getattr(node, "command", None)
    if command is not None:
        children.append(command)
    return any(_calls(child, name) for child in children if hasattr(child, "kind"))
