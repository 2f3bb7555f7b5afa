"""agentui — a terminal app driving a hierarchy of LLM roles (roles-v0.8) over an observable bus."""

__version__ = "0.1.0"
