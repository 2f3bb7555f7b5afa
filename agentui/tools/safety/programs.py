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


def git_prints_config(args: list[str]) -> bool:
    """`git remote -v`, `git config --list/--get…`, `git remote get-url`: output that shows the
    repository's configured URLs and headers."""
    words = [a for a in args if not a.startswith("-")]
    sub = words[0] if words else ""
    return sub == "config" or (sub == "remote" and (len(words) == 1 or words[1] in ("show", "get-url"))) \
        or (sub == "ls-remote")


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
    if sub == "config" and {"--global", "--system", "--show-origin", "--includes"} & set(rest):
        return ["git config of the user's or the system's files reads outside the workspace"], []
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
_FIND_PATH_TESTS = {"-newer", "-anewer", "-cnewer", "-samefile"}
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
        if word in _FIND_PATH_TESTS and i + 1 < len(args):
            paths.append(i + 1)  # -newer FILE, -samefile FILE: find reads (stats) that path too
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


# ARGV/ARGC: assigning them makes awk read another file than the ones the gate checked
_AWK_FORBIDDEN = re.compile(r"system|getline|close|fflush|ENVIRON|PROCINFO|ARGV|ARGC|@load|@include|[|>]|"
                            r"\bprintf?\s*>")
_AWK_ASSIGN = re.compile(r"(?!ARGV|ARGC|ENVIRON|PROCINFO)[A-Za-z_]\w*=.*", re.DOTALL)


def awk(args: list[str]) -> Result:
    """awk programs that only compute and print: no system(), pipes, redirection, getline, ENVIRON."""
    paths: list[int] = []
    program: str | None = None
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-F", "-v") and i + 1 < len(args):
            if word == "-v" and not _AWK_ASSIGN.fullmatch(args[i + 1]):
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
        elif "=" in word and re.fullmatch(r"[A-Za-z_]\w*=.*", word, re.DOTALL):
            if not _AWK_ASSIGN.fullmatch(word):
                return [f"awk operand {word[:40]} assigns {word.split('=')[0]}"], []
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
        return (
            bool(args) and args[0] in ("-l", "-v", "-Z", "-t", "-lv") and all(not a.startswith("-") for a in args[1:])
        )
    return False


# jq builtins that only compute on their input (jq 1.6/1.7); not: env, $ENV, input_filename, $__loc__,
# get_search_list, get_prog_origin, get_jq_origin, modulemeta, import, include (the environment, file
# names and other files). A name not listed here is unknown and asks.
_JQ_KNOWN = set("""
IN INDEX JOIN acos acosh add all any arrays ascii_downcase ascii_upcase asin asinh atan atan2 atanh booleans
bsearch builtins capture cbrt ceil combinations contains copysign cos cosh debug del delpaths drem empty
endswith erf erfc error exp exp10 exp2 explode expm1 fabs fdim finites first flatten floor fma fmax fmin
fmod format frexp from_entries fromdate fromdateiso8601 fromjson fromstream gamma getpath gmtime group_by
gsub halt halt_error has hypot implode in index indices infinite input input_line_number inputs inside
isempty isfinite isinfinite isnan isnormal iterables j0 j1 jn join keys keys_unsorted last ldexp leaf_paths
length lgamma lgamma_r limit localtime log log10 log1p log2 logb ltrimstr map map_values match max max_by min
min_by mktime modf nan nearbyint nextafter nexttoward normals not now nth nulls numbers objects path paths pow
pow10 range recurse recurse_down remainder repeat reverse rindex rint round rtrimstr scalars
scalars_or_empty scalb scalbln scan select setpath significand sin sinh sort sort_by split splits sqrt
startswith stderr strflocaltime strftime strings strptime sub tan tanh test tgamma to_entries todate
todateiso8601 tojson tonumber tostream tostring transpose trunc truncate_stream type unique unique_by until
utf8bytelength values walk while with_entries y0 y1 yn abs toarray pick trim ltrim rtrim have_decnum
have_literal_numbers getpath ascii implode tojson splits isvalid error ltrimstr rtrimstr
def as if then elif else end reduce foreach try catch label break and or true false null
""".split())
_JQ_VALUE_OPTS = {"--indent": 1, "--arg": 2, "--argjson": 2}
_JQ_FLAGS = set("rcsnejSCMaR") | {"-j"}
_JQ_LONG = {"--raw-output", "--compact-output", "--slurp", "--null-input", "--exit-status", "--sort-keys",
            "--tab", "--join-output", "--ascii-output", "--raw-input", "--color-output", "--monochrome-output",
            "--help", "--version", "--raw-output0"}


def _jq_code(program: str) -> str:
    """The jq program with string literals blanked (their `\\(…)` interpolations kept: they are code)."""
    out: list[str] = []
    i = 0
    while i < len(program):
        ch = program[i]
        if ch != '"':
            out.append(ch)
            i += 1
            continue
        i += 1
        out.append(" ")
        while i < len(program) and program[i] != '"':
            if program.startswith("\\(", i):
                depth, j = 1, i + 2
                while j < len(program) and depth:
                    depth += {"(": 1, ")": -1}.get(program[j], 0)
                    j += 1
                out.append(" (" + _jq_code(program[i + 2 : j - 1]) + ") ")
                i = j
                continue
            i += 2 if program[i] == "\\" else 1
        i += 1
        out.append(" ")
    return "".join(out)


def jq_program_problem(program: str) -> str | None:
    """Why a jq program may read the environment, file names or other files, or None."""
    code = _jq_code(program)
    for var in re.findall(r"\$(\w+)", code):
        if var == "ENV" or var.startswith("__"):
            return f"jq program reads ${var} (the environment or jq's own state)"
    defined = set(re.findall(r"\bdef\s+(\w+)", code))
    for params in re.findall(r"\bdef\s+\w+\s*\(([^)]*)\)", code):
        defined |= {p.strip().lstrip("$") for p in params.split(";")}
    # names called as functions: not a field (.name), a variable ($name), a format (@name) or an object key
    for m in re.finditer(r"(?<![.$@\w])([A-Za-z_]\w*(?:::\w+)?)(?!\w)(?!\s*:(?!:))", code):
        name = m.group(1)
        if name not in _JQ_KNOWN and name not in defined:
            return f"jq program calls {name}, which is not known to only compute on its input (env, input_filename …)"
    return None


def jq(args: list[str]) -> Result:
    """`jq [flags] PROGRAM [files]` with --arg/--argjson/--indent; the program may not read the
    environment or other files (`env`, `$ENV`, `input_filename`, `$__loc__`, imports)."""
    paths: list[int] = []
    program: str | None = None
    i = 0
    ended = False
    while i < len(args):
        word = args[i]
        if not ended and word == "--":
            ended = True
        elif not ended and word in _JQ_VALUE_OPTS:
            i += _JQ_VALUE_OPTS[word]
        elif not ended and word.startswith("--"):
            if word not in _JQ_LONG:
                return [f"jq {word} is not known to be read-only (files, modules and arguments ask)"], []
        elif not ended and word.startswith("-") and len(word) > 1:
            if not set(word[1:]) <= _JQ_FLAGS:
                return [f"jq {word} is not known to be read-only"], []
        elif program is None:
            program = word
        else:
            paths.append(i)
        i += 1
    if program is None:
        return ["jq without a program"], []
    problem = jq_program_problem(program)
    return ([problem], []) if problem else ([], paths)


# ps output fields that are known to show no environment (BSD `e`, `-o environ`/`env` do).
_PS_FIELDS = set("""
pid ppid pgid pgrp sid tpgid uid euid ruid suid gid egid rgid user euser ruser suser group egroup rgroup
comm ucomm ucmd cmd command args etime etimes time cputime cputimes stat state s f flags %cpu pcpu %mem pmem
rss rsz vsz vsize sz tty tt tname nice ni pri priority psr nlwp lwp spid tid thcount lstart start start_time
bsdstart wchan cls policy rtprio class label lim tsiz dsiz trs drs maj_flt min_flt majflt minflt
""".split())
_PS_VALUE = {"-o", "-O", "--format", "-p", "--pid", "-u", "-U", "--user", "-g", "-G", "--group", "-C", "-t",
             "--tty", "--sort", "--ppid", "-q", "--quick-pid"}


def ps(args: list[str]) -> Result:
    """ps with a known list of output fields; the BSD `e` flag and environ fields show other processes'
    environments (secrets) and ask."""
    i = 0
    while i < len(args):
        word = args[i]
        name, eq, value = word.partition("=")
        if name in _PS_VALUE or (len(word) > 2 and word[:2] in ("-o", "-O") and not word.startswith("--")):
            if name in _PS_VALUE and not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            elif not eq:
                value = word[2:]
            if name in ("-o", "-O", "--format") or word[:2] in ("-o", "-O"):
                for field in value.split(","):
                    if field.split("=", 1)[0].strip().lower() not in _PS_FIELDS:
                        return [f"ps field {field!r} is not known to hide the environment"], []
        elif word.startswith("--"):
            if word not in ("--forest", "--no-headers", "--headers", "--help", "--version", "--cols", "--width"):
                return [f"ps {word} is not known to be read-only"], []
        elif word.startswith("-"):
            if not set(word[1:]) <= set("AaefFlLjuvxwTHMZdN"):
                return [f"ps {word} is not known to be read-only"], []
        else:  # BSD-style letters without a dash: `e` shows the environment
            if not set(word) <= set("auxfjlvwTHrmScnhZ"):
                return [f"ps {word} (BSD options) may show other processes' environments"], []
        i += 1
    return [], []
