"""agentui as an ACP agent: `agentui acp` serves the whole role pipeline over stdio to an
editor or TUI (Zed, Toad, JetBrains, Neovim).

An adapter at the edge, like the UI: only :mod:`agentui.acp.agent` and :mod:`agentui.acp.mapping`
import the `acp` SDK; the roles, the bus and the runtime never do. :mod:`agentui.acp.sessions`
(the session index on the data dir) is plain Python.
"""
