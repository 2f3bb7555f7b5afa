"""Path resolution for the gate: where a path really lands, and which places are secret or read-only.

Paths a program opens are resolved physically (symlinks first, then `..`), as the kernel does;
`cd` folds `..` first, as bash's default `cd -L` does.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
import tempfile
from pathlib import Path

# System locations a read-only command may read without asking (secrets below are carved out).
_READ_ONLY_ROOTS = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store",
    "/System", "/Library/Developer", "/Applications", "/private/etc", "/usr/share",
)
# Not /dev/zero or /dev/urandom: endless, `cat /dev/urandom > x` fills the disk.
_HARMLESS_DEVICES = ("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty")

# Relative to $HOME: credentials, keychains, browser profiles, shell history.
_SECRET_HOME: tuple[str, ...] = (
    ".ssh", ".aws", ".config/gh", ".gnupg", ".netrc", ".docker/config.json", ".kube", ".npmrc",
    ".pypirc", ".git-credentials", ".config/gcloud", ".azure", ".password-store", ".config/op",
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".local/share/keyrings", ".bash_history", ".zsh_history", ".python_history", ".psql_history",
    ".mysql_history", ".config/hub", ".terraform.d/credentials.tfrc.json", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".vault-token", ".config/rclone", ".config/agentui",
    "Library/Keychains", "Library/Cookies", "Library/Safari", "Library/Messages", "Library/Mail",
    "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
    "Library/Application Support/BraveSoftware", "Library/Application Support/com.apple.TCC",
    # clouds and cluster tools
    ".config/doctl", ".config/linode-cli", ".config/hcloud", ".oci", ".bluemix", ".ibmcloud", ".config/scw",
    ".config/exoscale", ".aliyun", ".tccli", ".config/openstack", ".config/helm", ".minikube", ".kube",
    ".config/netlify", ".config/vercel", ".vercel", ".config/heroku", ".netrc", ".fly", ".config/flyctl",
    ".wrangler", ".config/.wrangler", ".config/configstore", ".config/firebase", ".supabase",
    ".s3cfg", ".boto", ".config/s3cmd", ".passwd-s3fs", ".config/rclone", ".config/gsutil",
    ".terraform.d/credentials.tfrc.json", ".terraformrc", ".pulumi", ".vault-token", ".config/vault",
    # databases
    ".my.cnf", ".mylogin.cnf", ".pgpass", ".pg_service.conf", ".mongorc.js", ".mongoshrc.js", ".mongosh",
    ".rediscli_auth", ".dbshell", ".sqlite_history", ".cqlshrc", ".cassandra", ".influx_history",
    ".config/pgcli", ".config/mycli", ".myclirc", ".dbeaver4", ".local/share/DBeaverData",
    # package managers and build tools
    ".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties", ".gem/credentials",
    ".nuget/NuGet", ".config/NuGet", ".composer/auth.json", ".config/composer/auth.json", ".yarnrc",
    ".yarnrc.yml", ".config/pip/pip.conf", ".pip/pip.conf", ".config/pypoetry/auth.toml",
    ".local/share/python_keyring", ".config/hatch", ".docker/config.json", ".docker/.token_seed",
    ".config/containers/auth.json", ".cargo/credentials", ".cargo/credentials.toml", ".config/gh",
    ".config/glab-cli", ".git-credentials", ".config/git/credentials", ".gitcookies", ".config/hub",
    ".sbt/credentials", ".ivy2/.credentials", ".bundle/config", ".pub-cache/credentials.json",
    ".config/dart/pub-credentials.json", ".android/adbkey", ".gnupg", ".ssh", ".ssh2", ".password-store",
    ".local/share/keyrings", ".config/keybase", ".config/Bitwarden", ".config/1Password", ".config/op",
    # editors and IDEs keep tokens in their state databases
    ".config/Code/User/globalStorage", ".config/Code - OSS/User/globalStorage",
    ".config/VSCodium/User/globalStorage", ".config/Cursor/User/globalStorage",
    "Library/Application Support/Code/User/globalStorage", "Library/Application Support/Cursor/User/globalStorage",
    ".config/JetBrains", "Library/Application Support/JetBrains", ".local/share/JetBrains",
    ".config/github-copilot", ".vscode-server/data/User/globalStorage", ".config/Slack",
    "Library/Application Support/Slack", ".thunderbird", ".config/evolution", ".local/share/evolution",
    # shells and REPL history, other secrets
    ".zsh_sessions", ".lesshst", ".node_repl_history", ".irb_history", ".wget-hsts", ".ngrok2",
    ".config/ngrok", ".config/sops", ".sops", ".age", ".config/age", ".authinfo", ".authinfo.gpg",
)
_SECRET_HOME = tuple(dict.fromkeys(_SECRET_HOME))
_SECRET_ABSOLUTE = (
    "/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssl/private", "/etc/ssh", "/Library/Keychains", "/private/etc/sudoers", "/private/var/db",
    "/root", "/var/lib/sss", "/etc/master.passwd", "/private/etc/master.passwd",
    # system-wide credentials: service passwords, cluster admin configs, VPN and TLS keys
    "/etc/mysql/debian.cnf", "/etc/kubernetes", "/etc/rancher", "/etc/letsencrypt", "/etc/wireguard",
    "/etc/openvpn", "/etc/ipsec.secrets", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections", "/etc/wpa_supplicant", "/etc/pki/tls/private", "/etc/docker/key.json",
    "/etc/credstore", "/etc/credstore.encrypted", "/var/lib/docker", "/var/lib/kubelet", "/etc/security/opasswd",
)
# Basenames that are secret wherever they live (the workspace's own `.env` included).
_SECRET_NAMES = (".env", ".env.*", "*.env", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.pem",
                 "*.key", "*.p12", "*.pfx", "*.keychain", "*.keychain-db", "credentials",
                 "credentials.json", ".netrc", ".pgpass", "*.kdbx", "secrets.*", "*.asc", ".git-credentials",
                 "*.ppk", ".my.cnf", ".mylogin.cnf", ".s3cfg", ".boto", ".rediscli_auth", ".vault-token",
                 "credentials.toml", "credentials.tfrc.json", "*.jks", "*.keystore", "state.vscdb",
                 "state.vscdb.backup", "auth.json", ".dockercfg",
                 "*.tfstate", "*.tfstate.backup", "*.ovpn", "service-account*.json", "adbkey",
                 "application_default_credentials.json", "access_tokens.db", "credentials.db")
# Inside the workspace, a write here later runs code or changes what git does (ask even for new files).
_CODE_PLACES = (".git/hooks", ".git/config", ".gitattributes", ".envrc", ".vscode", ".idea",
                ".git/info/attributes", ".agentui", ".husky")


def home() -> Path:
    return Path(os.path.expanduser("~"))


def temp_roots() -> tuple[Path, ...]:
    roots = {Path(os.path.realpath(tempfile.gettempdir())), Path(os.path.realpath("/tmp"))}
    if os.path.isdir("/var/tmp"):
        roots.add(Path(os.path.realpath("/var/tmp")))
    return tuple(sorted(roots))


def resolve(raw: str, cwd: Path) -> Path:
    """Where the kernel lands `raw` opened from `cwd` (symlinks followed for what exists)."""
    joined = raw if os.path.isabs(raw) else os.path.join(str(cwd), raw)
    return _realpath(joined)


def _realpath(path: str) -> Path:
    """os.path.realpath, or the folded path when a link on the way cannot be read (`/proc/1/root`:
    permission denied) — such a path is outside every readable root, so it asks."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.normpath(path))


def resolve_logical(raw: str, cwd: Path) -> Path:
    """Where `cd raw` lands (bash folds `..` first, then the kernel follows links)."""
    joined = raw if os.path.isabs(raw) else os.path.join(str(cwd), raw)
    return _realpath(os.path.normpath(joined))


def inside(path: Path, root: Path) -> bool:
    p, r = str(path), str(root)
    return p == r or p.startswith(r if r.endswith("/") else r + "/")


def _under_any(path: Path, roots: tuple[str, ...] | tuple[Path, ...]) -> bool:
    return any(inside(path, Path(r)) for r in roots)


def is_secret(path: Path, lexical: str | None = None, workspace: Path | None = None) -> bool:
    """Known credential stores, keychains, browser profiles, `.env` files, private keys; and, by
    content, files holding a credential (secret_file; passwords count outside `workspace`)."""
    h = home()
    candidates = [path]
    if lexical:
        candidates.append(Path(os.path.normpath(os.path.expanduser(lexical))))
    for p in candidates:
        if any(inside(p, h / s) for s in _SECRET_HOME):
            return True
        if any(inside(p, Path(s)) and not inside(h, Path(s)) for s in _SECRET_ABSOLUTE):
            return True
        # by any letter case: on macOS `.ENV` is the file `.env`
        if any(fnmatch.fnmatchcase(p.name.lower(), pat) for pat in _SECRET_NAMES) \
                and not _public_example(p.name.lower()):
            return True
        if p.parts[:2] == ("/", "proc") and p.name in ("environ", "mem", "cmdline", "maps"):
            return True
    if any(inside(path, c) for c in _credentials()):  # remote MCP servers' OAuth tokens, wherever kept
        return True
    return secret_file(path, workspace)


def _credentials() -> tuple[Path, ...]:
    key = tuple(os.environ.get(k) for k in ("AGENTUI_MCP_CREDENTIALS", "XDG_CONFIG_HOME", "HOME"))
    return _credentials_for(key)


@functools.lru_cache(maxsize=8)
def _credentials_for(_env: tuple[str | None, ...]) -> tuple[Path, ...]:
    from agentui.paths import mcp_credentials_places

    return mcp_credentials_places()


def hard_linked(path: Path) -> bool:
    """A regular file with more than one name (a write through one changes them all)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


_KEY_SNIFF = 16_384  # private keys are small: only files up to this size are looked into


# Content that is a credential wherever it is: private keys, cloud keys, registry and API tokens.
_SECRET_CONTENT = re.compile(
    rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|aws_secret_access_key|aws_session_token"
    rb"|(^|\n)\s*//[^\n]*:_(authToken|auth|password)\s*=|\"auths\"\s*:\s*\{\s*\"[^\"]+\"\s*:\s*\{\s*\"auth\""
    rb"|(^|\n)\s*oauth_token\s*:|(^|[\s{,\"'])(client_secret|private_key_id|refresh_token)[\"']?\s*[:=]",
    re.IGNORECASE)
# Passwords in the config formats clients read them from (`password=` in .my.cnf/.s3cfg/.boto/INI,
# `password:` in YAML, `<password>` in Maven XML, `pass=`/`secret_key =`, a URL carrying a password):
# a secret outside the workspace; inside it, such lines are usually examples and placeholders.
_PASSWORD_CONTENT = re.compile(
    rb"(^|\n)\s*[\"']?[\w.-]*(password|passwd|pass|secret|secret_key|access_key|token|api_key|apikey)"
    rb"[\"']?\s*[=:]\s*\S|<password>[^<]+</password>|[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@",
    re.IGNORECASE)


def secret_file(path: Path, workspace: Path | None = None) -> bool:
    """An existing file that is a secret whatever its name: a private key or another credential (its
    first bytes say so; a password counts outside `workspace`) or a hard link to a known secret
    file (`ln ~/.ssh/id_rsa key` planted in the workspace)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    if st.st_nlink > 1 and (st.st_dev, st.st_ino) in _secret_inodes():
        return True
    if st.st_size > _KEY_SNIFF:
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(_KEY_SNIFF)
    except OSError:
        return False
    if _SECRET_CONTENT.search(head):
        return True
    outside = workspace is None or not inside(Path(os.path.realpath(path)), Path(os.path.realpath(workspace)))
    return outside and _config_like(path, head) and bool(_PASSWORD_CONTENT.search(head))


# Where a `password=`/`token:` line is a credential: config formats, dotfiles and extension-less files
# that are not scripts (`token = next(it)` in library source under /usr is code, not a secret).
_CONFIG_SUFFIXES = {".cnf", ".conf", ".cfg", ".ini", ".properties", ".yml", ".yaml", ".toml", ".json", ".xml",
                    ".env", ".rc", ".config", ".credentials", ".secret", ".secrets", ".txt", ".boto", ".s3cfg",
                    ".netrc", ".pgpass", ".tfvars", ".auth", ".token", ".key"}


def _config_like(path: Path, head: bytes) -> bool:
    name = path.name.lower()
    if _public_example(name) or head.startswith(b"#!"):
        return False
    return name.startswith(".") or path.suffix.lower() in _CONFIG_SUFFIXES or not path.suffix


def _secret_inodes(limit: int = 2000) -> set[tuple[int, int]]:
    """(device, inode) of the files in the known secret stores under $HOME (bounded walk)."""
    found: set[tuple[int, int]] = set()
    h = home()
    for sub in _SECRET_HOME:
        for dirpath, _dirs, files in os.walk(h / sub) if (h / sub).is_dir() else [(str(h), [], [sub])]:
            for name in files:
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue
                found.add((st.st_dev, st.st_ino))
                if len(found) >= limit:
                    return found
    return found


_GIT_RUNS_CODE = re.compile(
    r"^\s*(fsmonitor|pager|external|textconv|hookspath|sshcommand|editor|askpass|gitproxy|helper|process|"
    r"clean|smudge|command|program|cmd|tool|path|sequence\.editor|[\w.-]+\s*=\s*!)\b|^\s*\[\s*include",
    re.IGNORECASE | re.MULTILINE,
)


def repo_runs_code(cwd: Path, workspace: Path) -> str:
    """Why a read-only git command here could still run code the repository's config names
    (core.fsmonitor, diff.external, textconv, pager, hooksPath, `!` aliases, filters, includes), or ""."""
    d = cwd
    while True:
        git = d / ".git"
        if git.exists():
            configs = [git / "config", git / "config.worktree"] if git.is_dir() else []
            if git.is_file():  # a worktree or submodule: `gitdir: …`
                try:
                    target = git.read_text(encoding="utf-8", errors="replace").split("gitdir:", 1)[1].strip()
                except (OSError, IndexError):
                    return "its .git file cannot be read"
                gd = Path(target) if os.path.isabs(target) else d / target
                configs = [gd / "config", gd / "config.worktree", gd.parent.parent / "config"]
            for cfg in configs:
                try:
                    text = cfg.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                m = _GIT_RUNS_CODE.search(text)
                if m:
                    return f"{cfg.name}: {m.group(0).strip()[:40]}"
            return ""
        if d == workspace or d.parent == d or not inside(d, workspace):
            return ""
        d = d.parent


_GIT_CREDENTIAL = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@|extraheader|://[^/\s@]*(token|ghp_|glpat-)[^/\s@]*@",
                             re.IGNORECASE)


def repo_holds_credentials(cwd: Path, workspace: Path) -> bool:
    """The repository around `cwd` has a credential in its config (a URL with a password or token,
    an http extraheader as CI checkouts write), or the user's git config has one (`insteadOf` URLs
    carrying a token): `git remote -v` or `git config -l` would print it."""
    h = home()
    for user_cfg in (h / ".gitconfig", h / ".config" / "git" / "config"):
        try:
            if _GIT_CREDENTIAL.search(user_cfg.read_text(encoding="utf-8", errors="replace")):
                return True
        except OSError:
            continue
    d = cwd
    while True:
        git = d / ".git"
        if git.exists():
            cfg = git / "config" if git.is_dir() else None
            if cfg is None:  # a worktree or submodule: `gitdir: …`
                try:
                    target = git.read_text(encoding="utf-8", errors="replace").split("gitdir:", 1)[1].strip()
                except (OSError, IndexError):
                    return True  # cannot tell: fail closed
                gd = Path(target) if os.path.isabs(target) else d / target
                cfg = gd.parent.parent / "config" if (gd / "commondir").exists() else gd / "config"
            try:
                return bool(_GIT_CREDENTIAL.search(cfg.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                return False
        if d == workspace or d.parent == d or not inside(d, workspace):
            return False
        d = d.parent


def secret_below(root: Path, limit: int = 5000) -> str:
    """The first secret-named file under `root` (bounded walk; .git and node_modules skipped), or ""."""
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [n for n in dirnames if n not in (".git", "node_modules", ".venv", "__pycache__")]
        for name in filenames:
            seen += 1
            if any(fnmatch.fnmatch(name, pat) for pat in _SECRET_NAMES) and not _public_example(name):
                return os.path.relpath(os.path.join(dirpath, name), root)
            if "." not in name.lstrip(".") and secret_file(Path(dirpath) / name):  # keys have no extension
                return os.path.relpath(os.path.join(dirpath, name), root)
        if seen > limit:
            return ""
    return ""


def _public_example(name: str) -> bool:
    return name.endswith((".example", ".sample", ".template", ".dist"))


# Files other tools run or obey: writing one changes what an approved `make`/`npm test`/`pytest` does.
_CODE_NAMES = ("Makefile", "makefile", "GNUmakefile", "*.mk", "package.json", "conftest.py", "sitecustomize.py",
               "usercustomize.py", "*.pth", "setup.py", "noxfile.py", "tox.ini", "Justfile", "justfile",
               "Taskfile.yml", ".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".npmrc",
               ".yarnrc", ".yarnrc.yml", "pip.conf", ".pre-commit-config.yaml", "Rakefile", "build.rs",
               "CMakeLists.txt", "Dockerfile", ".gitmodules",
               # start-up files debuggers, editors and shells read from the working directory
               ".gdbinit", ".lldbinit", ".exrc", ".vimrc", ".nvimrc", ".nvim.lua", ".pdbrc", ".irbrc",
               ".pryrc", ".psqlrc", ".Rprofile",
               # build and task files whose contents are commands
               "pyproject.toml", "setup.cfg", "Pipfile", "Cargo.toml", "Gemfile", "Vagrantfile",
               "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "pom.xml",
               "composer.json", "deno.json", "deno.jsonc", "bunfig.toml", "tasks.py", "fabfile.py",
               "SConstruct", "meson.build", "Tiltfile", "Earthfile", ".gitlab-ci.yml", "lefthook.yml")


def is_code_place(path: Path, workspace: Path) -> bool:
    if any(inside(path, workspace / p) for p in _CODE_PLACES):
        return True
    if inside(path, workspace) and ".git" in path.relative_to(workspace).parts:
        return True  # any repository's config, hooks or info: `git -C sub status` obeys sub/.git/config
    return inside(path, workspace) and (any(fnmatch.fnmatch(path.name, pat) for pat in _CODE_NAMES)
                                        or inside(path, workspace / ".github" / "workflows"))


def holds_secrets(root: Path) -> bool:
    """`root` is, or contains, a known secret location (a search or glob there may list them)."""
    h = home()
    if is_secret(root):
        return True
    return any(inside(h / s, root) for s in _SECRET_HOME) or any(
        inside(Path(s), root) for s in _SECRET_ABSOLUTE if not inside(h, Path(s)))


def readable_unasked(path: Path, workspace: Path) -> bool:
    """A read-only command may read this without asking: the workspace or a system location."""
    if is_secret(path, workspace=workspace):
        return False
    if inside(path, workspace):
        return True
    if str(path) in _HARMLESS_DEVICES or str(path).startswith(("/dev/fd/", "/proc/self/fd/")):
        return True
    # a home under a system root (/opt/…) is still a home: its files are the user's, not the system's
    return _under_any(path, _READ_ONLY_ROOTS) and not inside(path, Path("/usr/local/etc")) \
        and not inside(path, Path(os.path.realpath(home())))


def writable_sink(raw: str) -> bool:
    """Writing here is never an effect (/dev/null and the standard streams)."""
    return raw in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty") or raw in ("/dev/fd/1", "/dev/fd/2")


def in_temp(path: Path) -> bool:
    return _under_any(path, temp_roots())


def show(path: Path, workspace: Path) -> str:
    try:
        rel = path.relative_to(workspace)
        return str(rel) if str(rel) != "." else "."
    except ValueError:
        return str(path)
