"""Names of the files agentui keeps beside a store's LevelDB tables (both the store and the
LevelDB layer read them, so neither owns them)."""

PID_FILE = "agentui.pid"  # the process that has the store open, for "in use by PID N"
