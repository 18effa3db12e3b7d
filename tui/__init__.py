"""Warden's console. Only ``tui.app`` and ``tui.screens``/``tui.components`` import textual; the
``warden`` command that opens it is ``warden_cli`` (through ``tui.launch``)."""
