"""What the walk carries between simple commands: reasons to ask, the shell state, approval patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentui.tools.safety import effects
from agentui.tools.safety.words import Word

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
    human: bool = False  # a person must answer (a secret): never --yes, never a stored approval


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



def strip_option(text: str) -> str:
    """`of=x` / `--output=x` / `-ox` → x."""
    if text.startswith("of="):
        return text[3:]
    if text.startswith("--") and "=" in text:
        return text.split("=", 1)[1]
    if re.fullmatch(r"-[A-Za-z].+", text):
        return text[2:]
    return text
