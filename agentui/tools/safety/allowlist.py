"""The allow-list: programs known to be read-only, each with the flags known to keep it so.

A command runs unasked only if its program is here and every flag it uses is listed for it; any
other flag (`sort -o`, `rg --pre`, `date -s`, `git -c …`) or program asks. Adding an entry is a
claim that the program with those flags reads files and writes only to stdout.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Prog:
    """How to read one program's argv.

    `short`: boolean one-letter flags (combinable: `-la`); `long`: boolean `--flags`;
    `value`: options whose value is data (`-n 5`, `--lines=5`); `path_value`: options whose value is
    a path the program reads; `operands`: "paths" (every operand is a path read), "pattern" (the
    first is data, the rest paths), "data" (no operand is a path), "none" (no operands at all);
    `max_operands` caps them (`uniq in out` writes `out`); `numeric`: `-5` style counts.
    """

    short: str = ""
    long: frozenset[str] = field(default_factory=frozenset)
    value: frozenset[str] = field(default_factory=frozenset)
    path_value: frozenset[str] = field(default_factory=frozenset)
    operands: str = "paths"
    max_operands: int | None = None
    numeric: bool = False


def _p(short: str = "", long: str = "", value: str = "", path_value: str = "", operands: str = "paths",
       max_operands: int | None = None, numeric: bool = False) -> Prog:
    return Prog(short, frozenset(long.split()), frozenset(value.split()), frozenset(path_value.split()),
                operands, max_operands, numeric)


_COMMON_LONG = "--help --version"
_HEAD = _p("qvz", f"{_COMMON_LONG} --quiet --silent --verbose --zero-terminated",
           "-n -c --lines --bytes", numeric=True)
_GREP = _p("EFGPiywxcLlmnobHhqsrRUzZaIv", f"{_COMMON_LONG} --extended-regexp --fixed-strings --basic-regexp "
           "--perl-regexp --ignore-case --no-ignore-case --word-regexp --line-regexp --count --color "
           "--colour --files-with-matches --files-without-match --only-matching --quiet --silent "
           "--no-messages --byte-offset --with-filename --no-filename --line-number --recursive "
           "--dereference-recursive --text --null --null-data --invert-match --binary",
           "-e -m -A -B -C -d -D --regexp --max-count --after-context --before-context --context "
           "--include --exclude --exclude-dir --color --colour --label --binary-files --devices "
           "--directories", "-f --file --exclude-from", operands="pattern", numeric=True)
_SUMS = _p("bctwz", f"{_COMMON_LONG} --binary --check --text --tag --quiet --status --strict --warn "
           "--zero --ignore-missing", "-a -l --algorithm --length")

PROGRAMS: dict[str, Prog] = {
    "ls": _p("aAbBcCdfFgGhHiklLmnNopqQrRsStuUvwxXZ1@eOPT", f"{_COMMON_LONG} --all --almost-all "
             "--human-readable --si --directory --classify --long --reverse --recursive --size "
             "--inode --numeric-uid-gid --no-group --dereference --full-time --group-directories-first",
             "-I -w --color --sort --time --time-style --format --width --hide --ignore --block-size "
             "--indicator-style --quoting-style"),
    "cat": _p("AbeEnstTuvl", f"{_COMMON_LONG} --show-all --number-nonblank --number --squeeze-blank "
              "--show-ends --show-tabs --show-nonprinting"),
    "head": _HEAD, "tail": _HEAD,
    "wc": _p("clmwL", f"{_COMMON_LONG} --bytes --chars --lines --words --max-line-length"),
    "sort": _p("bdfgiMhnRrsuVcCz", f"{_COMMON_LONG} --ignore-leading-blanks --dictionary-order "
               "--ignore-case --general-numeric-sort --human-numeric-sort --numeric-sort --month-sort "
               "--reverse --stable --unique --version-sort --check --zero-terminated --random-sort",
               "-k -t -S --key --field-separator --buffer-size --parallel"),
    "uniq": _p("cdDiuz", f"{_COMMON_LONG} --count --repeated --ignore-case --unique --zero-terminated",
               "-f -s -w --skip-fields --skip-chars --check-chars", max_operands=1),
    "cut": _p("snz", f"{_COMMON_LONG} --only-delimited --complement --zero-terminated",
              "-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter"),
    "tr": _p("cdsCt", f"{_COMMON_LONG} --complement --delete --squeeze-repeats --truncate-set1",
             operands="data"),
    "nl": _p("p", _COMMON_LONG, "-b -n -s -v -w -i"),
    "tac": _p("br", _COMMON_LONG, "-s"), "rev": _p("", _COMMON_LONG),
    "fold": _p("bs", _COMMON_LONG, "-w --width"), "fmt": _p("cstu", _COMMON_LONG, "-w -p --width"),
    "paste": _p("sz", f"{_COMMON_LONG} --serial", "-d --delimiters"),
    "join": _p("iz", _COMMON_LONG, "-a -e -o -t -v -j -1 -2"),
    "comm": _p("123iz", f"{_COMMON_LONG} --check-order --nocheck-order", "--output-delimiter"),
    "diff": _p("abBdeEfHiNnpPqrsStTuwyZ", f"{_COMMON_LONG} --brief --recursive --unified --context "
               "--ignore-all-space --ignore-space-change --ignore-case --side-by-side --new-file "
               "--report-identical-files --text --minimal --strip-trailing-cr --color --no-color",
               "-U -C -W -x -I --unified --context --exclude --label --width --color "
               "--ignore-matching-lines", "-X --exclude-from", numeric=True),
    "cmp": _p("bls", f"{_COMMON_LONG} --silent --quiet --verbose --print-bytes", "-n -i --bytes"),
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    "rg": _p("iSsFwxclnNouUaLHIv0.", f"{_COMMON_LONG} --ignore-case --smart-case --case-sensitive "
             "--fixed-strings --word-regexp --line-regexp --count --files-with-matches --line-number "
             "--no-line-number --only-matching --hidden --follow --no-ignore --files --json --vimgrep "
             "--no-heading --heading --with-filename --no-filename --invert-match --stats --color "
             "--multiline --count-matches --files-without-match --sort-files",
             "-e -g -t -T -m -A -B -C -M --regexp --glob --type --type-not --max-count --max-depth "
             "--context --after-context --before-context --color --sort --max-columns", operands="pattern"),
    "file": _p("bBiIkLhNsz0", f"{_COMMON_LONG} --brief --mime --mime-type --mime-encoding "
               "--dereference --no-dereference"),
    "stat": _p("LtfF", f"{_COMMON_LONG} --dereference --terse --file-system", "-c -f --format --printf"),
    "du": _p("aAbchHklLmsSxd0", f"{_COMMON_LONG} --all --apparent-size --bytes --total --human-readable "
             "--summarize --si --one-file-system --dereference",
             "-d --max-depth --exclude --block-size --time -B -t --threshold"),
    "df": _p("ahHiklPTx", f"{_COMMON_LONG} --all --human-readable --si --inodes --local --portability "
             "--print-type", "-t -x --type --exclude-type --output -B --block-size"),
    "pwd": _p("LP", _COMMON_LONG, operands="none"),
    "echo": _p("neE", operands="data"), "printf": _p("", operands="data"),
    "true": _p(operands="data"), "false": _p(operands="data"), ":": _p(operands="data"),
    "date": _p("uRj", f"{_COMMON_LONG} --utc --universal --rfc-email --iso-8601 --rfc-3339",
               "-d -I --date --iso-8601 --rfc-3339", "-r --reference -f --file", operands="data"),
    "whoami": _p(operands="none"), "id": _p("gGnruz", _COMMON_LONG, operands="data"),
    "groups": _p(operands="data"), "uname": _p("asnrvmpio", f"{_COMMON_LONG} --all", operands="none"),
    "hostname": _p("fsidAI", f"{_COMMON_LONG} --fqdn --short", operands="none"),
    "which": _p("as", operands="data"), "type": _p("aftpP", operands="data"),
    "whereis": _p("bmsu", operands="data"),
    "basename": _p("az", f"{_COMMON_LONG} --multiple --zero", "-s --suffix", operands="data"),
    "dirname": _p("z", _COMMON_LONG, operands="data"),
    "realpath": _p("eLmPqsz", f"{_COMMON_LONG} --canonicalize-existing --canonicalize-missing "
                   "--no-symlinks --quiet --strip", "--relative-to --relative-base"),
    "readlink": _p("efmnqsvz", f"{_COMMON_LONG} --canonicalize --canonicalize-existing "
                   "--canonicalize-missing --no-newline"),
    "printenv": _p("0", _COMMON_LONG, operands="data"),
    "seq": _p("w", _COMMON_LONG, "-f -s --format --separator", operands="data", numeric=True),
    "sleep": _p(operands="data"), "nproc": _p("", f"{_COMMON_LONG} --all", operands="none"),
    "uptime": _p("ps", f"{_COMMON_LONG} --pretty --since", operands="none"),
    "free": _p("bkmghtwl", f"{_COMMON_LONG} --human --si --total", operands="none"),
    "test": _p(operands="data"), "[": _p(operands="data"),
    "tree": _p("adfilpsughDFqNrtvxCAJ", f"{_COMMON_LONG} --noreport --dirsfirst --gitignore",
               "-L -P -I --charset --filelimit"),
    "md5sum": _SUMS, "sha1sum": _SUMS, "sha224sum": _SUMS, "sha256sum": _SUMS, "sha384sum": _SUMS,
    "sha512sum": _SUMS, "b2sum": _SUMS, "shasum": _SUMS, "cksum": _SUMS,
    "md5": _p("qrn", "", "-s", operands="paths"), "sum": _p("rs"),
    # `-i`/`--input` is a file on macOS (and GNU's -i takes none, so the next word is a file there too)
    "base64": _p("dwD", f"{_COMMON_LONG} --decode --ignore-garbage --wrap", "-w -b --wrap", "-i --input",
                 max_operands=1),
    "xxd": _p("aEiprus", f"{_COMMON_LONG}", "-c -g -l -s -o", max_operands=1),
    "od": _p("bcdfiloxsv", _COMMON_LONG, "-A -t -N -j -w --address-radix --format --read-bytes"),
    "hexdump": _p("bcCdovx", "", "-n -s -e"),
    "strings": _p("afw", _COMMON_LONG, "-n -t -e --bytes --radix --encoding", numeric=True),
    "column": _p("tnex", _COMMON_LONG, "-s -c -o -N --separator --table-columns --output-separator"),
    "jq": _p("rcsnejSCMaRj", f"{_COMMON_LONG} --raw-output --compact-output --slurp --null-input "
             "--exit-status --sort-keys --tab --join-output --ascii-output --raw-input",
             "--arg --argjson --indent", operands="pattern"),
    "expr": _p(operands="data"), "numfmt": _p("z", _COMMON_LONG, "--to --from --suffix --padding"),
    "factor": _p(operands="data"), "locale": _p("ack", operands="data"),
    "getconf": _p("a", operands="data"), "arch": _p(operands="none"), "sw_vers": _p("", operands="data"),
    "lsb_release": _p("aidrcs", "--all --short", operands="none"), "tty": _p("s", operands="none"),
    "ps": _p("AaefFlLjuvxwTHMZ", "--forest --no-headers", "-o -p -u -U -g -G -C -O -t --sort --format",
             operands="data"),
    "env": _p("0", operands="none"),  # with a command it runs it: that is the walker's case, and asks
    "cd": _p("LPe@", operands="paths", max_operands=1), "pushd": _p("", operands="paths", max_operands=1),
    "popd": _p(operands="none"), "dirs": _p("clpv", operands="none"),
    "mkdir": _p("pv", f"{_COMMON_LONG} --parents --verbose", "-m --mode", operands="paths"),
    "touch": _p("acmh", f"{_COMMON_LONG} --no-create", "-d -t --date", "-r --reference", operands="paths"),
    "tee": _p("ai", f"{_COMMON_LONG} --append --ignore-interrupts", operands="paths"),
    "exit": _p(operands="data"), "wait": _p(operands="data"),
    "cal": _p("13jmyhs", operands="data"), "zipinfo": _p("12hlmstTvz", operands="paths"),
    # pagers: with stdout not a terminal they copy the file; the shell tool sets LESSSECURE=1 and
    # drops LESSOPEN/LESSKEY*, so no preprocessor, lesskey file, `!` or log file (-o) can run;
    # `+commands` are checked in judge.py
    "less": _p("NnSRrFXiIsMmEeqQwuUgGJaBcCdL~", f"{_COMMON_LONG} --line-numbers --LINE-NUMBERS "
               "--chop-long-lines --RAW-CONTROL-CHARS --raw-control-chars --quit-if-one-screen --no-init "
               "--ignore-case --IGNORE-CASE --squeeze-blank-lines --quit-at-eof --QUIT-AT-EOF --silent "
               "--quiet --QUIET --long-prompt --LONG-PROMPT --tilde --no-lessopen --status-column",
               "-x -p -P -y -z -h -b -j -# --tabs --pattern --prompt --window --shift --buffers"),
    "more": _p("dflcpsu", f"{_COMMON_LONG} --silent --logical --no-pause --print-over --clean-print "
               "--squeeze --plain", "-n --lines", numeric=True),
    "sysctl": _p("naeNbhqdx", f"{_COMMON_LONG} --all --values --names --binary", operands="data"),
    # decompress to stdout, list or test only (judge.py requires -c, -l or -t of gzip/gunzip)
    "zcat": _p("fqvtlLr", f"{_COMMON_LONG} --force --quiet --verbose --test --list --recursive"),
    "gzip": _p("cdlqtvfr", f"{_COMMON_LONG} --stdout --to-stdout --decompress --list --quiet --test "
               "--verbose --force --recursive"),
    "gunzip": _p("clqtvfr", f"{_COMMON_LONG} --stdout --to-stdout --list --quiet --test --verbose --force "
                 "--recursive"),
    # print the shell's limits / mask (a value would set them for this command's shell only; asked anyway)
    "ulimit": _p("aSHcdefilmnqrstuvxpPTbkRy", operands="none"), "umask": _p("pS", operands="none"),
}

# Programs whose every argument is data and no flag has an effect (`echo -e`, `test -f x`, `expr 1 + 2`).
FREE_ARGS = {"echo", "test", "[", "expr", "true", "false", ":", "factor", "sleep", "exit", "wait", "seq"}

# Programs that write their operands (new files in the workspace only; see judge.py).
CREATORS = {"mkdir", "touch", "tee"}

# `<tool> --version` and friends: interpreters and build tools asked only for their version.
VERSION_QUERIES = {
    "tar", "gzip", "bzip2", "xz", "zstd", "zip", "unzip", "ssh", "rsync", "openssl", "sed", "awk", "gawk",
    "grep", "find", "less", "vim", "nvim", "emacs", "sqlite3", "mysql", "redis-cli", "helm", "gh", "aws",
    "python", "python3", "node", "npm", "npx", "pip", "pip3", "ruby", "perl", "go", "cargo", "rustc",
    "java", "javac", "gcc", "g++", "clang", "make", "cmake", "git", "docker", "kubectl", "uv", "poetry",
    "pnpm", "yarn", "bun", "deno", "php", "swift", "brew", "bash", "zsh", "sh", "tsc", "ruff", "pytest",
    "mypy", "black", "curl", "wget", "jq", "rg", "fd", "bwrap", "psql", "terraform",
}
VERSION_FLAGS = {"--version", "-V", "-v", "version", "-version"}

# Read-only subcommands of tools whose other subcommands change things.
SUBCOMMANDS: dict[str, set[str]] = {
    "pip": {"list", "show", "freeze", "check"}, "pip3": {"list", "show", "freeze", "check"},
    "npm": {"ls", "list", "view", "outdated", "root", "prefix"},
    "cargo": {"tree", "metadata"}, "go": {"env", "list", "version", "doc"},
    "docker": {"ps", "images", "version", "info"}, "brew": {"list", "info", "--prefix", "config"},
    "uv": {"version"}, "poetry": {"show"}, "kubectl": {"version"},
}

# Standard places a bare program name resolves to; `./ls` is not `ls`.
SYSTEM_BIN_DIRS = ("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/opt/homebrew/bin")
