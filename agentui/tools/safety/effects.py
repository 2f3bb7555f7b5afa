"""What known programs write, delete or send, and the hard deny-list no approval overrides.

The allow-list decides what runs unasked; this module only names effects, so a prompt can show
"writes build/, uploads to example.com" and so the hard rules (writes outside the workspace, `rm` of
$HOME or /, `kill -1`, download-and-execute, reading secrets) can refuse outright.
"""

from __future__ import annotations

import re

DELETERS = {"rm", "rmdir", "unlink", "shred", "srm", "wipe", "trash", "trash-put"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "rbash"}
INTERPRETERS = SHELLS | {
    "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php", "lua",
    "tclsh", "wish", "Rscript", "osascript", "pwsh", "deno", "bun", "awk", "gawk", "mawk", "nawk",
    "eval", "source", ".", "exec", "xargs", "env", "sudo", "doas", "su", "nohup", "setsid", "time",
    "timeout", "nice", "stdbuf", "flock", "script", "watch", "parallel", "expect", "irb", "jshell",
}
DOWNLOADERS = {"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "nc", "ncat", "netcat", "lynx",
               "links", "w3m", "socat", "httpie", "lwp-request", "GET"}
NETWORK = DOWNLOADERS | {"ssh", "scp", "sftp", "rsync", "ftp", "telnet", "mosh", "rclone", "s3cmd",
                         "aws", "gcloud", "az", "gsutil", "gh", "ping", "dig", "nslookup", "host",
                         "whois", "traceroute", "mail", "sendmail", "mutt"}
_NET_SUBCOMMANDS = {
    "git": {"push", "pull", "fetch", "clone", "ls-remote", "submodule", "remote", "send-email", "request-pull"},
    "pip": {"install", "download", "search"}, "pip3": {"install", "download", "search"},
    "npm": {"install", "i", "ci", "publish", "add", "update", "view", "outdated"},
    "yarn": {"add", "install", "publish"}, "pnpm": {"add", "install", "publish"},
    "cargo": {"install", "publish", "fetch", "update"}, "go": {"get", "install", "mod"},
    "docker": {"pull", "push", "login", "run", "build"}, "brew": {"install", "upgrade", "update"},
    "apt": {"install", "update", "upgrade"}, "apt-get": {"install", "update", "upgrade"},
    "uv": {"pip", "add", "sync", "lock"}, "poetry": {"add", "install", "publish", "update"},
}
_UPLOAD_FLAGS = {
    "curl": ("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "-F",
             "--form", "--form-string", "-T", "--upload-file", "-X", "--request", "--json"),
    "wget": ("--post-file", "--post-data", "--body-file", "--body-data", "--method"),
    "http": ("-f", "--form"), "xh": ("-f", "--form"),
}
_URL = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://|www\.)[^\s'\"<>|;`)]+")
_SCP_TARGET = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:(?!//)")
_SSH_TARGET = re.compile(r"^(?:[\w.-]+@)[\w.-]+$")


def _opts_value(args: list[str], names: tuple[str, ...]) -> list[int]:
    """Indexes of the values of options `names` (`-o F`, `-oF`, `--output=F`)."""
    out: list[int] = []
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            out.append(i + 1)
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                out.append(i)
            elif not n.startswith("--") and a.startswith(n) and len(a) > len(n) and len(n) == 2:
                out.append(i)
    return out


def operand_indexes(args: list[str]) -> list[int]:
    out: list[int] = []
    ended = False
    for i, a in enumerate(args):
        if not ended and a == "--":
            ended = True
        elif ended or not a.startswith("-") or a == "-":
            out.append(i)
    return out


def written(name: str, args: list[str]) -> list[int]:
    """Indexes of argv words (after the program name) that `name` writes, deletes or moves."""
    ops = operand_indexes(args)
    if name in DELETERS or name in ("mv", "touch", "mkdir", "tee", "truncate", "shred"):
        return ops
    if name in ("cp", "install", "ln", "rsync", "fallocate", "link", "ditto"):
        targets = _opts_value(args, ("-t", "--target-directory"))
        if name == "rsync":
            ops = [i for i in ops if not _SCP_TARGET.match(args[i])]
        return targets or ops[-1:]
    if name in ("chmod", "chown", "chgrp", "chflags", "xattr", "setfacl", "chattr"):
        return ops[1:]
    if name == "dd":
        return [i for i, a in enumerate(args) if a.startswith("of=")]
    if name in ("sed", "perl", "ruby") and any(a.startswith("-i") or a.startswith("--in-place")
                                               or re.fullmatch(r"-\w*i\w*", a) for a in args):
        return ops[1:] if name == "sed" and not any(a in ("-e", "-f") for a in args) else ops
    if name == "sort":
        return _opts_value(args, ("-o", "--output"))
    if name == "uniq":
        return ops[1:2]
    if name in ("curl",):
        return _opts_value(args, ("-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header",
                                  "--trace", "--trace-ascii", "--stderr"))
    if name == "wget":
        return _opts_value(args, ("-O", "--output-document", "-P", "--directory-prefix", "-o",
                                  "--output-file", "-a", "--append-output"))
    if name in ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "compress",
                "uncompress", "lzma", "unlzma", "brotli"):
        return [] if any(a in ("-c", "--stdout", "-l", "--list", "-t", "--test") for a in args) else ops
    if name in ("tar", "bsdtar", "unzip", "7z", "zip", "cpio"):
        return _opts_value(args, ("-C", "--directory", "-d", "-f", "--file"))
    if name in ("xxd",):
        return ops[1:2]
    if name in ("split", "csplit"):
        return ops[1:2]
    if name == "find":
        out = [i + 1 for i, a in enumerate(args[:-1]) if a in ("-fprint", "-fprint0", "-fprintf", "-fls")]
        if "-delete" in args:  # the start paths and everything under them
            out += [i for i, a in enumerate(args) if not a.startswith("-") and a not in ("!", "(", ")")][:1] or []
            j = 0
            while j < len(args) and not args[j].startswith("-") and args[j] not in ("!", "(", ")"):
                out.append(j)
                j += 1
        return sorted(set(out))
    return []


# Wrappers that run their arguments as a command: name -> options that take a value.
WRAPPERS: dict[str, set[str]] = {
    "sudo": {"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-R", "--user", "--group"},
    "doas": {"-u", "-C"}, "nohup": set(), "time": {"-f", "-o"}, "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-t"}, "stdbuf": {"-i", "-o", "-e"}, "command": set(), "builtin": set(),
    "exec": {"-a"}, "caffeinate": {"-t", "-w"}, "chronic": set(), "setsid": set(), "env": {"-u", "--unset",
    "-C", "--chdir"}, "timeout": {"-s", "--signal", "-k", "--kill-after"}, "xargs": {"-I", "-i", "-n", "-P",
    "-L", "-l", "-d", "-E", "-e", "-s", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file"},
    "flock": {"-w", "-E", "--timeout"}, "watch": {"-n", "-d", "--interval"}, "strace": {"-o", "-e", "-p"},
    "torsocks": set(), "proxychains": set(), "firejail": set(), "unbuffer": set(), "rlwrap": set(),
}


def inner_command(name: str, args: list[str]) -> tuple[int, bool] | None:
    """(index in args where the wrapped command starts, is_script) or None. `bash -c S` → script."""
    if name in SHELLS or name in ("su", "script"):
        for i, a in enumerate(args):
            if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
                return (i + 1, True) if i + 1 < len(args) else None
        return None
    if name == "eval":
        return (0, True) if args else None
    if name == "env":
        if any(a.startswith(("-S", "--split-string")) for a in args):
            return None  # a string split into a command: the walker asks
    if name not in WRAPPERS:
        return None
    value_opts = WRAPPERS[name]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if name == "env" and "=" in a and not a.startswith("-"):
            i += 1
            continue
        if not a.startswith("-") or a == "-":
            break
        i += 2 if a in value_opts else 1
    if name in ("timeout", "flock") and i < len(args):
        i += 1  # the duration / the lock file
    return (i, False) if i < len(args) else None


def hard_denials(name: str, args: list[str]) -> list[str]:
    """Rules about the argv alone (paths are the walker's): `kill -1` signals every process you own."""
    if name == "kill":
        pids = operand_indexes_kill(args)
        if "-1" in pids or (not pids and "-1" in args):
            return ["kill -1 signals every process you own"]
    if name in ("killall5",):
        return [f"{name} signals every process"]
    return []


def operand_indexes_kill(args: list[str]) -> list[str]:
    """kill's pid operands: `-9 -1` → [-1]; `-s KILL 123` → [123]; `-- -5` → [-5]."""
    out: list[str] = []
    i = 0
    signal_seen = False
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i + 1 :])
            break
        if a in ("-s", "-n") and i + 1 < len(args):
            signal_seen = True
            i += 2
            continue
        if a.startswith("-") and not signal_seen:
            signal_seen = True
        else:
            out.append(a)
        i += 1
    return out


def network(name: str, args: list[str]) -> tuple[list[str], list[str]]:
    """(destinations, upload reasons) of a command: URLs, scp/ssh targets, upload flags."""
    dests: list[str] = []
    for a in args:
        dests.extend(_URL.findall(a))
    if name in ("scp", "rsync", "sftp"):
        dests.extend(a for a in args if _SCP_TARGET.match(a))
    if name in ("ssh", "mosh", "sftp", "telnet", "ftp", "nc", "ncat", "netcat"):
        dests.extend(a for a in args if _SSH_TARGET.match(a) or (not a.startswith("-") and "." in a))
    uploads: list[str] = []
    flags = _UPLOAD_FLAGS.get(name, ())
    for a in args:
        if a in flags or any(a.startswith(f + "=") for f in flags if f.startswith("--")) or any(
            a.startswith(f) and len(a) > 2 for f in flags if len(f) == 2
        ):
            uploads.append(f"{name} {a} sends data to {', '.join(dests) or 'the network'}")
            break
    if name in ("scp", "rsync") and args and _SCP_TARGET.match(args[-1]):
        uploads.append(f"{name} copies files to {args[-1]}")
    return list(dict.fromkeys(dests)), uploads


def reaches_network(name: str, args: list[str]) -> bool:
    if name in NETWORK:
        return True
    subs = _NET_SUBCOMMANDS.get(name)
    first = next((a for a in args if not a.startswith("-")), "")
    return bool(subs and first in subs)


def is_interpreter(name: str) -> bool:
    return name in INTERPRETERS or bool(re.fullmatch(r"(python|pypy|perl|ruby|node|php|lua)[\d.]*", name))
