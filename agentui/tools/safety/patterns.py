"""The approval pattern of one simple command: what "always for this project" stores and matches.

A stored pattern such as `git commit` lets later commands with that pattern run unasked, so a
pattern may only be that broad when nothing else in the command changes what runs. The rule is a
list of what is known to be plain, per program (fail closed):

- options before the subcommand must be on the program's list of harmless global options
  (`git --no-pager`); any other (`git -c …`, `-C dir`, `--git-dir`, `--exec-path`, `npm --prefix`,
  `cargo --config`, `+toolchain`) makes the pattern the exact command line;
- options after the subcommand: for git, make, cargo, pip, go and uv, none of the options listed as
  taking a command, a config or another place to run from (`git rebase --exec`, `make -f`,
  `make CC=…`, `cargo --config`, `pip --index-url`, `go test -exec`); for every other program
  (npm-like tools read every long option as config) only its listed harmless options, so
  `pytest -p plugin`, `mvn test -DargLine=…` or `npm test --script-shell=…` are exact;
- a word carrying `$` or a backtick has no pattern at all (`t=x; make $t` is `make nuke` next time);
  other shell syntax (`;`, `|`, `&`, `<`, `>`, a newline) or a path outside the tree (`/…`, `~…`,
  `..`) makes it exact;
- subcommands that configure or run arbitrary commands (`git config`, `git submodule`,
  `npm exec`, `cargo install`…) are always exact;
- shell builtins get no pattern at all (once only): `let`, `declare`, `printf -v`, `trap`,
  `read`, `export` … evaluate their operands as code.

An environment prefix (`GIT_DIR=… git commit`, `LD_PRELOAD=…`) is a separate reason with no
pattern (walk.py), so it is never covered by a stored approval.
"""

from __future__ import annotations

import re

from agentui.tools.safety import effects
from agentui.tools.safety.allowlist import PROGRAMS

SUBCOMMAND_TOOLS = {
    "git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv", "poetry", "make",
    "brew", "apt", "apt-get", "systemctl", "gh", "terraform", "dotnet", "mvn", "gradle", "bundle", "rake",
    "mix", "swift", "helm", "npx", "bun", "deno", "just", "task", "tox", "nox", "hatch", "pdm", "conda",
}
# An approval for these names alone would be a blank cheque: the stored pattern is the exact command.
EXACT_ONLY = (effects.DELETERS | effects.INTERPRETERS | effects.NETWORK | {
    "dd", "chmod", "chown", "chgrp", "kill", "pkill", "killall", "find", "mv", "cp", "ln", "truncate",
    "shred", "crontab", "launchctl", "defaults", "security", "sed", "tee", "install", "rsync", "tar",
    "unzip", "mkfs", "diskutil", "fdisk", "parted", "mount", "umount", "shutdown", "reboot", "halt",
    # pagers, editors and manual readers run commands through options (`man -P`, `less +!`, `vim -c`)
    "man", "info", "less", "more", "most", "vi", "vim", "nvim", "view", "emacs", "nano", "ed", "ex",
    # they run a program or a script given as an option
    "jq", "gdb", "lldb", "strace", "ltrace", "valgrind", "ssh-agent", "at", "batch", "systemd-run",
    "nohup", "setsid", "disown", "unshare", "nsenter", "chroot", "chrt", "taskset", "ionice", "prlimit",
})
# bash builtins (and keywords run as commands). They change the shell itself or evaluate their operands
# (variable names with subscripts, arithmetic, code): never covered by a stored approval.
SHELL_BUILTINS = {
    "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete", "compopt",
    "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export", "false",
    "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile",
    "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt",
    "source", ".", "suspend", "test", "[", "[[", "times", "trap", "true", "type", "typeset", "ulimit",
    "umask", "unalias", "unset", "wait", ":", "coproc", "select", "function", "time", "((",
}

# Global options (before the subcommand) that change nothing about what runs.
_GLOBAL_OK: dict[str, set[str]] = {
    "git": {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
            "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-advice"},
    "npm": {"-s", "--silent", "-q", "--quiet", "--json"}, "pnpm": {"-s", "--silent"}, "yarn": {"-s", "--silent"},
    "cargo": {"-q", "--quiet", "-v", "-vv", "--verbose", "--offline", "--locked", "--frozen"},
    "make": {"-s", "--silent", "--quiet", "-k", "--keep-going", "-B", "--always-make", "-n", "--dry-run",
             "--just-print", "--no-print-directory", "-w", "--print-directory", "-j", "-q", "--question"},
    "pip": {"-q", "--quiet", "-v", "--verbose", "--disable-pip-version-check", "--no-input", "--no-color"},
    "uv": {"-q", "--quiet", "-v", "--verbose", "--offline", "--no-progress"},
    "poetry": {"-q", "--quiet", "-v", "--verbose", "-n", "--no-interaction", "--no-ansi"},
    "go": set(), "docker": set(), "kubectl": set(),
}
_GLOBAL_OK["pip3"] = _GLOBAL_OK["pip"]
# Value-taking global options whose value is harmless data (`make -j 4`).
_GLOBAL_VALUE_OK = {"make": {"-j", "--jobs", "-l", "--load-average"}}

# Options anywhere in the command that run another command, read a config or code from elsewhere,
# or move where the tool works (checked as prefixes of `--opt=value` too).
_CODE_OPTIONS: dict[str, set[str]] = {
    "git": {"-c", "--config-env", "--exec-path", "-C", "--git-dir", "--work-tree", "--namespace",
            "--super-prefix", "--attr-source", "-p", "--paginate", "--exec", "-x", "--upload-pack",
            "--receive-pack", "-u", "--extcmd", "-t", "--tool", "--ext-diff", "--textconv", "--template",
            "--separate-git-dir", "--output", "-O", "--open-files-in-pager", "--config", "--gpg-program",
            "--strategy", "-s", "--sign", "-S", "--gpg-sign", "--run", "--cmd", "--filter", "--contents",
            "--edit-description", "--global", "--system", "--file", "--blob", "--remote"},
    "make": {"-f", "--file", "--makefile", "-C", "--directory", "-E", "--eval", "-I", "--include-dir",
             "-e", "--environment-overrides", "-o", "-W", "--what-if", "--old-file", "--new-file",
             "--assume-old", "--assume-new"},
    "cargo": {"--config", "-Z", "--manifest-path", "--target-dir", "-C", "--registry", "--index", "--path",
              "--git", "--root"},
    "pip": {"-i", "--index-url", "--extra-index-url", "--trusted-host", "-f", "--find-links", "-C",
            "--config-settings", "--global-option", "--install-option", "-t", "--target", "--prefix",
            "--root", "--src", "-e", "--editable", "-c", "--constraint", "--isolated", "--cert",
            "--client-cert", "--proxy", "--python", "--user", "--break-system-packages"},
    "go": {"-exec", "-toolexec", "-ldflags", "-gcflags", "-asmflags", "-C", "-modfile", "-overlay",
           "-pgo", "-compiler", "-gccgoflags", "-buildmode", "-pkgdir", "-o"},
    "uv": {"--index-url", "--extra-index-url", "--find-links", "--python", "--directory", "--project",
           "--config-file", "--with", "--from", "-p", "--index", "--default-index"},
}
_CODE_OPTIONS["pip3"] = _CODE_OPTIONS["pip"]
# These tools read every `--name[=value]` as configuration: only the listed options keep a broad pattern.
_ONLY_LISTED = {
    "npm": {"-s", "--silent", "-q", "--quiet", "--json", "-D", "--save-dev", "-E", "--save-exact", "-O",
            "--save-optional", "--no-save", "--save", "-P", "--save-prod", "--no-audit", "--no-fund",
            "--if-present", "--verbose", "--watch", "--coverage"},
    "pnpm": {"-s", "--silent", "-D", "--save-dev", "-E", "--save-exact", "-O", "--save-optional",
             "-P", "--save-prod", "--if-present", "--watch", "--coverage"},
    "yarn": {"-s", "--silent", "-D", "--dev", "-E", "--exact", "-O", "--optional", "--watch", "--coverage"},
    "bun": {"-d", "--dev", "-E", "--exact", "--watch", "--coverage"},
    "npx": set(),
}
# Subcommands that configure the tool, fetch and run code, or run arbitrary commands.
_EXACT_SUBCOMMANDS: dict[str, set[str]] = {
    "git": {"config", "submodule", "bisect", "filter-branch", "filter-repo", "difftool", "mergetool", "daemon",
            "instaweb", "credential", "credential-store", "credential-cache", "send-email", "web--browse",
            "archive", "alias", "hook", "upload-pack", "receive-pack", "remote-ext", "shell", "worktree"},
    "npm": {"exec", "x", "explore", "config", "set", "get", "pkg", "init", "create", "install-test", "it",
            "link", "ln", "rebuild", "restart", "start", "stop", "login", "adduser", "token", "profile"},
    "pnpm": {"exec", "dlx", "create", "config", "set", "link", "rebuild"},
    "yarn": {"exec", "dlx", "create", "config", "set", "link", "node"},
    "bun": {"x", "exec", "create", "link"},
    "cargo": {"install", "run", "config", "login", "owner", "yank"},
    "go": {"run", "generate", "env", "tool"},
    "uv": {"run", "tool", "python"},
    "poetry": {"run", "config", "source", "self"},
    "pip": {"config"}, "pip3": {"config"},
    "docker": {"run", "exec", "create", "build", "compose", "buildx", "cp", "login", "plugin", "context"},
    "kubectl": {"exec", "run", "cp", "apply", "create", "replace", "patch", "edit", "debug", "attach", "proxy",
                "port-forward", "plugin", "config"},
    "gh": {"api", "alias", "extension", "auth", "config", "secret", "codespace"},
}
# Programs without subcommands whose approval is the bare name (`pytest`): only these options keep that
# broad pattern (anything else — `pytest -p plugin`, `-c file`, `--rootdir`, `eslint --rulesdir` — is exact).
_PLAIN_FLAGS = {"-q", "--quiet", "-v", "-vv", "-vvv", "--verbose", "-h", "--help", "--version", "--no-color",
                "--color=never", "--color=auto", "--color=always", "--check", "--diff", "--fix", "--json"}
_PLAIN_BY_PROGRAM = {
    "pytest": {"-x", "--exitfirst", "-s", "-k", "-m", "--lf", "--last-failed", "--ff", "--failed-first", "-ra", "-rA",
               "-rf", "--no-header", "--co", "--collect-only", "--disable-warnings", "-l", "--showlocals", "-n",
               "--sw", "--stepwise", "--new-first", "--nf", "--tb=short", "--tb=long", "--tb=line", "--tb=no",
               "--tb=native", "--tb=auto", "--runxfail", "-rxXs", "--strict-markers", "--durations"},
    "ruff": {"--statistics", "--show-fixes", "--unsafe-fixes", "--no-fix", "--exit-zero", "--preview"},
    "mypy": {"--strict", "--pretty", "--no-error-summary", "--show-error-codes", "--ignore-missing-imports"},
    "black": {"--fast", "-l", "--line-length", "-S", "--skip-string-normalization"},
    "flake8": {"--count", "--statistics", "--show-source"}, "pylint": {"-j", "--disable", "--enable"},
    "eslint": {"--cache", "--max-warnings", "--quiet"}, "prettier": {"--write", "-w", "--list-different", "-l"},
    "tsc": {"--noEmit", "--watch", "-w", "--pretty", "-b", "--build"}, "jest": {"--watch", "--ci", "--coverage"},
    "vitest": {"run", "--watch", "--coverage"}, "isort": {"--diff", "--check-only", "-c"},
}
_PLAIN_BY_PROGRAM["py.test"] = _PLAIN_BY_PROGRAM["pytest"]
# npm-like `run <script>`: the script name is part of the pattern (`npm run build` is not `npm run deploy`).
_RUN_SCRIPT = {"npm": {"run", "run-script", "rum", "urn"}, "pnpm": {"run"}, "yarn": {"run"}, "bun": {"run"}}
_SHELL_SYNTAX = re.compile(r"[$`;|&<>\n]")


def _option_name(word: str) -> str:
    return word.split("=", 1)[0] if word.startswith("--") else word


def _outside_path(word: str) -> bool:
    """A word naming a path that may leave the tree the approval was given for."""
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    return value.startswith(("/", "~")) or value == ".." or value.startswith("../") or "/../" in value \
        or value.endswith("/..")


def _code_option(name: str, word: str) -> bool:
    opts = _CODE_OPTIONS.get(name, set())
    if not opts or not word.startswith("-"):
        return False
    if _option_name(word) in opts:
        return True
    # `-C.` / `-cfoo=bar` / `-fother.mk`: a short option glued to its value
    return not word.startswith("--") and len(word) > 2 and word[:2] in opts


def pattern_for(name: str, args: list[str]) -> str | None:
    """The approval pattern of a command (`git commit`, `npm test`, `pytest`), the exact command
    when something in it changes what runs, or None (once only) for shell builtins."""
    exact = " ".join([name, *args])
    if name in SHELL_BUILTINS:
        return None
    if any("$" in a or "`" in a for a in args):
        return None  # a word only known at run time: even the exact text may stand for another command
    # an allow-listed reader asks only for an option that is not read-only (`sort -o`, `ps e`): that exact line
    if name in EXACT_ONLY or effects.is_interpreter(name) or name in PROGRAMS:
        return exact
    if any(_SHELL_SYNTAX.search(a) or _outside_path(a) for a in args):
        return exact
    if name not in SUBCOMMAND_TOOLS:
        plain = _PLAIN_FLAGS | _PLAIN_BY_PROGRAM.get(name, set())
        options = [a for a in args if a.startswith("-") and a != "-"]
        if any(a not in plain and a.split("=", 1)[0] not in plain for a in options):
            return exact  # an option not known to leave what runs alone (`pytest -p plugin`, `-c file`)
        return name
    glob_ok = _GLOBAL_OK.get(name, set())
    value_ok = _GLOBAL_VALUE_OK.get(name, set())
    i = 0
    while i < len(args) and args[i].startswith(("-", "+")):
        word = args[i]
        if word == "--":
            break
        if _option_name(word) in value_ok or re.fullmatch(r"-j\d+", word):
            i += 1 if "=" in word or re.fullmatch(r"-j\d+", word) else 2
            continue
        if word not in glob_ok:
            return exact  # `git -c …`, `git -C dir`, `cargo +nightly`, `npm --prefix …`
        i += 1
    rest = args[i:]
    if any(_code_option(name, w) for w in rest):
        return exact
    if name in _ONLY_LISTED or name not in _CODE_OPTIONS:
        # npm-like tools read every long option as config; tools with no list here are unknown
        listed = _ONLY_LISTED.get(name, set()) | _PLAIN_FLAGS
        tail = rest[: rest.index("--")] if "--" in rest else rest
        if any(w.startswith("-") and w not in listed for w in tail):
            return exact
    if name == "make":
        if any("=" in w and not w.startswith("-") for w in rest):
            return exact  # `make CC='…' all`: a variable override changes every recipe
        targets = [w for w in rest if not w.startswith("-")]
        return " ".join(["make", *targets])
    if not rest:
        return name
    sub = rest[0]
    if sub.startswith("-"):
        return exact
    if sub in _EXACT_SUBCOMMANDS.get(name, set()):
        return exact
    if sub in _RUN_SCRIPT.get(name, set()):
        script = next((w for w in rest[1:] if not w.startswith("-")), None)
        return f"{name} {sub} {script}" if script else f"{name} {sub}"
    return f"{name} {sub}"
