"""`agentui mcp list|add|remove`: the MCP servers whose tools the executors may call."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def configure(parser: argparse.ArgumentParser) -> None:
    from agentui.cli import positive_float

    sub = parser.add_subparsers(dest="mcp_command", metavar="ACTION")
    ls = sub.add_parser("list", help="list the configured servers, start each and list its tools")
    ls.add_argument("--no-connect", action="store_true", help="only print the configuration")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    add = sub.add_parser(
        "add", help="add a server: agentui mcp add [OPTIONS] NAME COMMAND [ARGS…] (options before NAME)"
    )
    add.add_argument("name", help="letters, digits, '_' or '-'; its tools are named NAME.TOOL")
    add.add_argument("server_command", nargs=argparse.REMAINDER, metavar="COMMAND [ARGS…]",
                     help="the stdio server's command line")
    add.add_argument("--url", help="a Streamable HTTP endpoint instead of a command")
    add.add_argument("--sse", action="store_true", help="the --url server speaks the legacy HTTP+SSE transport")
    add.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                     help="environment for the server (repeatable; ${VAR} takes VAR from yours)")
    add.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                     help="an HTTP header for a --url server, e.g. 'Authorization: Bearer ${TOKEN}' "
                          "(repeatable; ${VAR} is taken from your environment when agentui connects)")
    add.add_argument("--allow", action="append", default=[], metavar="TOOL",
                     help="a tool that runs without asking (repeatable)")
    add.add_argument("--timeout", type=positive_float, metavar="S", help="seconds per call")
    add.add_argument("--trust-read-only", action="store_true",
                     help="tools the server marks read-only run without asking (destructive ones always ask)")
    add.add_argument("--startup-timeout", type=positive_float, metavar="S",
                     help="seconds the server may take to start and list its tools (default 15; "
                          "`npx -y` servers fetched on first use may need 60)")
    rm = sub.add_parser("remove", help="remove a server from the config file")
    rm.add_argument("name")
    li = sub.add_parser("login", help="sign in to a --url server that asks for OAuth (opens a browser)")
    li.add_argument("name")
    li.add_argument("--no-browser", action="store_true", help="only print the address to open")
    li.add_argument("--timeout", type=positive_float, metavar="S", default=300.0,
                    help="seconds to wait for the browser's answer (default 300)")
    lo = sub.add_parser("logout", help="forget a server's OAuth sign-in")
    lo.add_argument("name")
    tr = sub.add_parser("trust", help="use the MCP servers of a project's .agentui/mcp.toml (as it is now)")
    tr.add_argument("--workspace", metavar="DIR", help="the project folder (default: the current one)")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args

    loaded = load_from_args(args)
    action = getattr(args, "mcp_command", None)
    if action == "add":
        return _add(args, loaded.file)
    if action == "remove":
        return _remove(args, loaded.file)
    if action == "list":
        return _list(args, loaded)
    if action == "trust":
        return _trust(args, loaded)
    if action in ("login", "logout"):
        return _sign_in(args, loaded)
    print("agentui mcp: give an action: list, add, remove, login, logout or trust (agentui mcp --help)",
          file=sys.stderr)
    return EXIT_USAGE


def _add(args: argparse.Namespace, file: Path) -> int:
    from agentui.mcp.configfile import ConfigEditError, add_server

    cmd = list(args.server_command)
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if bool(cmd) == bool(args.url):
        print("agentui mcp add: give a command after -- or --url, e.g. "
              "agentui mcp add files -- npx -y @modelcontextprotocol/server-filesystem .", file=sys.stderr)
        return EXIT_USAGE
    if args.url is not None:  # checked now, not first by `mcp list`
        from agentui.config_checks import check_base_url

        try:
            check_base_url(args.url, example="give an http(s) URL such as http://127.0.0.1:8000/mcp")
        except ValueError as e:
            print(f"agentui mcp add: --url {e}", file=sys.stderr)
            return EXIT_USAGE
    env: dict[str, str] = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            print(f"agentui mcp add: --env takes KEY=VALUE, got {item!r}", file=sys.stderr)
            return EXIT_USAGE
        env[key] = value
    headers: dict[str, str] = {}
    for item in args.header:
        cut = min((i for i in (item.find(":"), item.find("=")) if i > 0), default=-1)
        if cut < 0:
            print(f"agentui mcp add: --header takes 'NAME: VALUE', got {item!r}", file=sys.stderr)
            return EXIT_USAGE
        headers[item[:cut].strip()] = item[cut + 1:].strip()
    entry = {"command": cmd[0] if cmd else None, "args": cmd[1:], "url": args.url, "env": env,
             "headers": headers, "allow": list(args.allow), "timeout_s": args.timeout,
             "startup_timeout_s": args.startup_timeout, "trust_read_only": args.trust_read_only or None,
             "transport": "sse" if args.sse else None}
    try:
        add_server(file, args.name, entry)
    except (ConfigEditError, OSError) as e:
        print(f"agentui mcp add: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"added MCP server '{args.name}' to {file}; check it with: agentui mcp list")
    return EXIT_OK


def _remove(args: argparse.Namespace, file: Path) -> int:
    from agentui.mcp.configfile import ConfigEditError, remove_server

    try:
        remove_server(file, args.name)
    except (ConfigEditError, OSError) as e:
        print(f"agentui mcp remove: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"removed MCP server '{args.name}' from {file}")
    return EXIT_OK


def _describe(cfg) -> str:  # noqa: ANN001
    if cfg.url:
        return cfg.url
    return " ".join([cfg.command or "", *cfg.args])


def _project_line(loaded) -> str:  # noqa: ANN001
    """One line on the current folder's `.agentui/mcp.toml`, if there is one."""
    from agentui.mcp.projectfile import load

    project = load(Path(loaded.config.tools.workspace or Path.cwd()), loaded.config.data_path())
    if project is None:
        return ""
    if project.problem:
        return f"project file: {project.problem}"
    state = "trusted" if project.trusted else "not trusted: run `agentui mcp trust` to use them"
    return f"project file {project.file}: {', '.join(sorted(project.servers)) or 'no servers'} ({state})"


def _list(args: argparse.Namespace, loaded) -> int:  # noqa: ANN001
    servers = loaded.config.mcp.servers
    if (line := _project_line(loaded)) and not args.json:
        print(line)
    if not servers:
        print(f"no MCP servers configured in {loaded.file}; add one with: "
              "agentui mcp add NAME -- COMMAND [ARGS…]")
        return EXIT_OK
    reports = {} if args.no_connect else {r.name: r for r in asyncio.run(_probe(servers))}
    rows = []
    for name, cfg in sorted(servers.items()):
        r = reports.get(name)
        rows.append({"name": name, "server": _describe(cfg), "enabled": cfg.enabled, "allow": cfg.allow,
                     "headers": sorted(cfg.headers),  # names only: values may be secrets
                     "ok": None if r is None else r.ok, "tools": [] if r is None else r.tools,
                     "latency_s": None if r is None else round(r.latency_s, 3),
                     "detail": "" if r is None else r.detail, "warnings": [] if r is None else r.warnings,
                     "trust_read_only": cfg.trust_read_only, "labels": _labels(name, cfg, r),
                     "oauth": _oauth_state(cfg)})
    if args.json:
        print(json.dumps({"file": str(loaded.file), "servers": rows}, ensure_ascii=False))
    else:
        for row in rows:
            state = ("disabled" if not row["enabled"] else "not checked" if row["ok"] is None
                     else f"ok in {row['latency_s']:.2f} s" if row["ok"] else "FAILED")
            print(f"{row['name']}: {row['server']} ({state})")
            if row["ok"] is False:
                print(f"  {row['detail']}")
            if row["oauth"]:
                print(f"  OAuth: {row['oauth']}")
            for w in row["warnings"]:  # tools left out
                print(f"  warning: {w}")
            for t in row["tools"]:
                print(f"  {row['name']}.{t} — {row['labels'].get(t, 'asks first')}")
    return EXIT_FAIL if any(r["ok"] is False for r in rows) else EXIT_OK


def _trust(args: argparse.Namespace, loaded) -> int:  # noqa: ANN001
    from agentui.mcp.projectfile import PROJECT_FILE, load, trust

    workspace = Path(args.workspace or loaded.config.tools.workspace or Path.cwd()).expanduser().resolve()
    project = load(workspace, loaded.config.data_path())
    if project is None:
        print(f"agentui mcp trust: {workspace / PROJECT_FILE} does not exist", file=sys.stderr)
        return EXIT_USAGE
    if project.problem:
        print(f"agentui mcp trust: {project.problem}", file=sys.stderr)
        return EXIT_USAGE
    for name, cfg in sorted(project.servers.items()):
        print(f"{name}: {_describe(cfg)}")
    where = trust(project, workspace, loaded.config.data_path())
    print(f"trusted {project.file} as it is now ({len(project.servers)} servers; recorded in {where}); "
          "a change to the file makes it untrusted again")
    return EXIT_OK


def _oauth_state(cfg) -> str:  # noqa: ANN001
    """'signed in' (and until when the access token runs) for a `url` server with a kept sign-in."""
    import time

    from agentui.mcp.oauth import CredentialStore

    if not cfg.url:
        return ""
    store = CredentialStore(cfg.url)
    if not store.signed_in():
        return ""
    until = store.expires_at()
    if until is None:
        return "signed in"
    left = until - time.time()
    return f"signed in (access token valid {left / 60:.0f} min more)" if left > 0 \
        else "signed in (access token expired: refreshed at the next start)"


def _sign_in(args: argparse.Namespace, loaded) -> int:  # noqa: ANN001
    """`mcp login NAME`: the OAuth sign-in in a browser, kept for later runs; `mcp logout NAME` forgets it."""
    from agentui.mcp.oauth import CredentialStore
    from agentui.mcp.projectfile import with_project_servers

    verb = args.mcp_command
    # the current folder's trusted project servers can be signed in to as well
    servers = with_project_servers(loaded.config, Path(loaded.config.tools.workspace or Path.cwd()),
                                   loaded.config.data_path(), []).mcp.servers
    cfg = servers.get(args.name)
    if cfg is None:
        known = ", ".join(sorted(servers)) or "none"
        print(f"agentui mcp {verb}: no server {args.name!r} in {loaded.file} (configured: {known})", file=sys.stderr)
        return EXIT_USAGE
    if not cfg.url:
        print(f"agentui mcp {verb}: {args.name} is a stdio server; OAuth applies to a --url server",
              file=sys.stderr)
        return EXIT_USAGE
    store = CredentialStore(cfg.url)
    if verb == "logout":
        had = store.forget()
        print(f"signed out of {args.name} ({cfg.url})" if had else f"{args.name} had no OAuth sign-in to forget")
        return EXIT_OK
    if cfg.own_authorization:
        print(f"agentui mcp login: {args.name} sends its own `Authorization` header; remove it from its "
              "`headers` to sign in with OAuth instead", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_login(args.name, cfg, store, args))


async def _login(name: str, cfg, store, args: argparse.Namespace) -> int:  # noqa: ANN001
    from agentui.mcp.client import McpUnavailable
    from agentui.mcp.hub import McpHub

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    hub = McpHub({name: cfg.model_copy(update={"enabled": True})})  # a disabled server may be signed in to
    try:
        report = await hub.sign_in(name, say, open_browser=not args.no_browser, timeout_s=args.timeout)
    except McpUnavailable as exc:
        print(f"agentui mcp login: {name}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    finally:
        await hub.aclose()
    if not store.signed_in():
        print(f"{name} answered without asking for a sign-in ({len(report.tools)} tools); nothing to keep")
        return EXIT_OK
    print(f"signed in to {name} ({cfg.url}): {len(report.tools)} tools; the sign-in is kept in {store.path} "
          f"(forget it with `agentui mcp logout {name}`)")
    return EXIT_OK


def _labels(name: str, cfg, report) -> dict[str, str]:  # noqa: ANN001
    """Each tool's "runs without asking" / "asks first" / "always asks (destructive)", as the gate decides."""
    from agentui.mcp.annotations import Hints, decide, label

    if report is None:
        return {}
    out = {}
    for t in report.tools:
        hints = report.hints.get(t, Hints())
        out[t] = label(hints, decide(t, name, hints, allowed=t in cfg.allow, trust_read_only=cfg.trust_read_only))
    return out


async def _probe(servers):  # noqa: ANN001, ANN202
    from agentui.mcp.hub import probe_servers

    return await probe_servers(servers)
