"""An ``--app`` module that fails while it is imported (not an ImportError)."""

raise ValueError("settings.toml has no [warden] section")
