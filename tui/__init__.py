"""Warden's console and CLI. Only ``tui.app`` and ``tui.screens``/``tui.components`` import textual."""
