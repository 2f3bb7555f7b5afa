"""Read-only programs whose arguments are a small language of their own: git, find, sed, awk.

Each checker returns (problems, path operands read). A problem means "ask"; the allowed forms are
deliberately narrow (a sed script of `s///`, `p`, `d`; an awk program with no `system`, pipes or
redirection; git's read-only subcommands with their common flags).
"""

from __future__ import annotations

import re

Result = tuple[list[str], list[int]]  # (problems, indexes of argv words that are paths read)

_GIT_GLOBAL_OK = {"--no-pager", "--no-optional-locks", "-P", "--literal-pathspecs", "--bare", "--version", "--help"}
_GIT_FLAGS = {
    "status": "-s --short -b --branch --porcelain --long -u -uno -unormal -uall --untracked-files "
              "--ignored --ignore-submodules -v --verbose --show-stash --ahead-behind -z",
    "log": "--oneline --graph --decorate --all --stat --shortstat --numstat --name-only --name-status "
           "-p --patch --no-merges --merges --first-parent --reverse --abbrev-commit --no-decorate "
           "--follow -n --max-count --since --until --after --before --author --committer --grep -i "
           "--pretty --format --date --relative-date --left-right --cherry-pick -S -G --full-history "
           "--topo-order --date-order --no-color --color --summary --branches --tags --remotes -z "
           "--source --skip -L --simplify-by-decoration --dirstat --patch-with-stat -U --unified",
    "show": "--stat --shortstat --numstat --name-only --name-status -p --patch --no-patch -s --oneline "
            "--pretty --format --abbrev-commit --quiet --summary --color --no-color -U --unified",
    "diff": "--stat --shortstat --numstat --name-only --name-status --cached --staged -p --patch -U "
            "--unified --word-diff --color --no-color --check --minimal -w -b --ignore-all-space "
            "--ignore-space-change --summary --dirstat --no-index -R --relative -M -C --find-renames "
            "--diff-filter --exit-code --quiet -z --histogram --patience --merge-base --word-diff-regex",
    "branch": "-a -r -v -vv --all --remotes --list -l --show-current --contains --no-contains --merged "
              "--no-merged --sort --format --color --no-color --points-at",
    "tag": "-l --list -n --sort --contains --points-at --format --merged --no-merged",
    "remote": "-v --verbose", "rev-parse": "--show-toplevel --abbrev-ref --short --verify --git-dir "
              "--is-inside-work-tree --show-prefix --show-cdup --symbolic-full-name -q --quiet --all "
              "--absolute-git-dir --git-common-dir --is-bare-repository --show-superproject-working-tree",
    "ls-files": "-c -d -m -o -i -s -u -z -t -v --cached --deleted --modified --others --ignored "
                "--stage --exclude-standard --error-unmatch --full-name --directory --no-empty-directory",
    "blame": "-L -l -s -e -w -M -C --porcelain --line-porcelain --show-name --show-number --date -c",
    "describe": "--tags --all --long --abbrev --always --dirty --exact-match --contains",
    "shortlog": "-s -n -e --summary --numbered --email --since --until --all", "grep": "-n -i -l -c -w -v "
                "-e -E -F -P --line-number --ignore-case --files-with-matches --count --cached -h -H "
                "--untracked --no-index --heading --break --full-name --max-depth -I --and --or --not",
    "ls-tree": "-r -t -d -l -z --name-only --name-status --full-name --full-tree --abbrev --long",
    "cat-file": "-t -s -p -e --batch-check", "rev-list": "--count --all --max-count -n --since "
                "--until --reverse --no-merges --first-parent --objects --left-right",
    "reflog": "-n --oneline --date --max-count", "count-objects": "-v -H --verbose --human-readable",
    "merge-base": "--all --is-ancestor --fork-point --octopus", "version": "", "help": "",
    "config": "--get --get-all --get-regexp -l --list --show-origin --show-scope --local --global "
              "--system --name-only --null -z --type --default --bool --int --path",
    "worktree": "", "stash": "", "name-rev": "--name-only --tags --all", "check-ignore": "-v -n -q --stdin",
    "show-ref": "--heads --tags --head -s --hash --verify -d", "for-each-ref": "--format --sort --count "
                "--contains --merged --no-merged --points-at",
}
_GIT_SUBSUB = {"remote": {"", "-v", "show", "get-url"}, "worktree": {"list"}, "stash": {"list", "show"},
               "reflog": {"", "show"}}
_GIT_VALUE = {"-n", "--max-count", "--since", "--until", "--after", "--before", "--author", "--committer",
              "--grep", "--pretty", "--format", "--date", "-S", "-G", "-U", "--unified", "-L", "--skip",
              "--sort", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
              "--diff-filter", "--abbrev", "-e", "--type", "--default", "--max-depth", "--count",
              "--word-diff-regex", "-M", "-C", "--dirstat", "--untracked-files", "--ignore-submodules"}


def git(args: list[str]) -> Result:
    """`git status/log/diff/show/…` with their read-only flags; `-c`, `--exec-path`, aliases ask."""
    i = 0
    paths: list[int] = []
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            paths.append(i + 1)
            i += 2
            continue
        if args[i] not in _GIT_GLOBAL_OK:
            return [f"git option {args[i]} is not known to be read-only"], []
        i += 1
    if i >= len(args):
        return [], paths
    sub, rest = args[i], args[i + 1 :]
    if sub not in _GIT_FLAGS:
        return [f"git {sub} is not a read-only git command"], []
    allowed = set(_GIT_FLAGS[sub].split())
    if sub in _GIT_SUBSUB:
        first = next((r for r in rest if not r.startswith("-")), "")
        if first not in _GIT_SUBSUB[sub]:
            return [f"git {sub} {first} changes the repository"], []
    if sub == "branch" or sub == "tag":
        if any(not r.startswith("-") for r in rest) and not ({"-l", "--list", "--contains", "--points-at",
                                                              "--merged", "--no-merged", "--sort",
                                                              "--format", "-n"} & {r.split("=")[0] for r in rest}):
            return [f"git {sub} with a name creates or changes a {sub}"], []
    if sub == "config" and not ({"--get", "--get-all", "--get-regexp", "-l", "--list"} & set(rest)):
        return ["git config without --get/--list changes configuration"], []
    j = 0
    after_dashes = False
    while j < len(rest):
        word = rest[j]
        if after_dashes or not word.startswith("-") or word == "-":
            if after_dashes or ("/" in word or "." in word) and ":" not in word:
                paths.append(i + 1 + j)
            j += 1
            continue
        if word == "--":
            after_dashes = True
            j += 1
            continue
        name = word.split("=", 1)[0]
        if re.fullmatch(r"-\d+", word) or re.fullmatch(r"-U\d+|-n\d+|-M\d*%?|-C\d*%?", word):
            j += 1
            continue
        if name not in allowed and not (re.fullmatch(r"-[a-zA-Z]{2,}", word)
                                        and all(f"-{c}" in allowed for c in word[1:])):
            return [f"git {sub} {word} is not known to be read-only"], []
        j += 2 if name in _GIT_VALUE and "=" not in word else 1
    return [], paths


_FIND_TESTS_VALUE = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
                     "-iregex", "-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-mtime", "-mmin",
                     "-atime", "-amin", "-ctime", "-cmin", "-perm", "-user", "-group", "-uid", "-gid",
                     "-links", "-inum", "-printf", "-regextype", "-fstype", "-used", "-samefile",
                     "-newer", "-anewer", "-cnewer", "-lname", "-ilname"}
_FIND_TESTS = {"-print", "-print0", "-prune", "-empty", "-readable", "-writable", "-executable",
               "-not", "!", "(", ")", "-o", "-a", "-and", "-or", ",", "-true", "-false", "-ls",
               "-depth", "-follow", "-xdev", "-mount", "-nouser", "-nogroup", "-quit", "-L", "-H", "-P",
               "-noleaf", "-daystart"}


def find(args: list[str]) -> Result:
    """find's tests and -print; -exec, -delete, -fprint, -ok ask."""
    paths: list[int] = []
    i = 0
    while i < len(args) and args[i] in ("-L", "-H", "-P"):
        i += 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("!", "(", ")"):
        paths.append(i)
        i += 1
    if not paths:
        pass  # find with no start path searches "."
    while i < len(args):
        word = args[i]
        if word in _FIND_TESTS_VALUE:
            i += 2
        elif word in _FIND_TESTS:
            i += 1
        else:
            return [f"find {word} is not known to be read-only"], []
    return [], paths


_SED_CMD = re.compile(
    r"""\s*(?:(?:\d+|\$|/(?:[^/\\\n]|\\.)*/[I]?)(?:\s*,\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/[I]?))?\s*!?\s*)?
        (?:[pdqQ=lnNgGhHxz]|s(?P<d>[^\\\n\w\s])(?:(?!(?P=d))[^\\\n]|\\.)*(?P=d)(?:(?!(?P=d))[^\\\n]|\\.)*(?P=d)[gpiImM0-9]*)
        \s*""",
    re.VERBOSE,
)


def sed_script_ok(script: str) -> bool:
    """Only `s///` (no `e`/`w` flags), p, d, q, =, l, n, N, g, G, h, H, x with simple addresses."""
    for part in re.split(r"[;\n]", script):
        if part.strip() and not _SED_CMD.fullmatch(part):
            return False
    return True


def sed(args: list[str]) -> Result:
    paths: list[int] = []
    script_given = False
    scripts: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            script_given = True
            i += 2
            continue
        if word in ("-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended", "-s", "--separate",
                    "-z", "--null-data", "-u", "--unbuffered", "--posix", "--debug", "-nE", "-En", "-rn", "-nr"):
            i += 1
            continue
        if word.startswith("-") and word != "-":
            return [f"sed {word} is not known to be read-only (in-place edits and script files ask)"], []
        if not script_given:
            scripts.append(word)
            script_given = True
        else:
            paths.append(i)
        i += 1
    bad = [s for s in scripts if not sed_script_ok(s)]
    if bad:
        return [f"sed script is not a plain print/substitute: {bad[0][:80]}"], []
    return [], paths


_AWK_FORBIDDEN = re.compile(r"system|getline|close|fflush|ENVIRON|PROCINFO|@load|@include|[|>]|\bprintf?\s*>")


def awk(args: list[str]) -> Result:
    """awk programs that only compute and print: no system(), pipes, redirection, getline, ENVIRON."""
    paths: list[int] = []
    program: str | None = None
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-F", "-v") and i + 1 < len(args):
            if word == "-v" and not re.fullmatch(r"[A-Za-z_]\w*=.*", args[i + 1]):
                return [f"awk -v {args[i + 1]} is not a plain assignment"], []
            i += 2
            continue
        if word.startswith("-F") and len(word) > 2:
            i += 1
            continue
        if word.startswith("-") and word != "-":
            return [f"awk {word} is not known to be read-only (program files and extensions ask)"], []
        if program is None:
            program = word
        elif "=" in word and re.fullmatch(r"[A-Za-z_]\w*=.*", word):
            pass  # an operand assignment
        else:
            paths.append(i)
        i += 1
    if program is None:
        return ["awk without a program"], []
    if _AWK_FORBIDDEN.search(program):
        return ["awk program may run commands or write files (system, pipes, >, getline)"], []
    return [], paths


def find_exec_commands(args: list[str]) -> tuple[list[str], list[list[int]]] | None:
    """find's argv without its `-exec CMD {} +|;` parts, and the indexes of each CMD; None if none.
    (-execdir and -ok stay unknown: they ask.)"""
    rest: list[str] = []
    commands: list[list[int]] = []
    i = 0
    while i < len(args):
        if args[i] == "-exec":
            j = next((k for k in range(i + 1, len(args)) if args[k] in (";", "+")), None)
            if j is None or j == i + 1:
                return None
            commands.append(list(range(i + 1, j)))
            i = j + 1
            continue
        rest.append(args[i])
        i += 1
    return (rest, commands) if commands else None


def archive_listing(name: str, args: list[str]) -> bool:
    """`tar -tf x.tar` / `tar -tzvf x` / `unzip -l x.zip`: list the members, extract nothing."""
    if name == "tar":
        first = args[0] if args else ""
        letters = first.lstrip("-")
        return bool(first) and "t" in letters and not set(letters) - set("tzjJvf") and all(
            not a.startswith("-") or a in ("-v", "-z", "-j", "-J") for a in args[1:])
    if name == "unzip":
        return bool(args) and args[0] in ("-l", "-v", "-Z", "-t", "-lv") and all(not a.startswith("-") for a in args[1:])
    return False
