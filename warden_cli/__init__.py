"""The ``warden`` command: the headless commands (``runs``, ``grants``, ``audit``, ``serve``,
``tokens``, ``mcp-proxy``) and the entry point (``warden_cli.main``) that also opens the console.

Textual is never imported here except to launch the console: ``warden_cli.console`` holds the
one import of the console package (``tui.launch``), and ``.importlinter`` says so. Importing the
package itself loads nothing (``warden runs list`` must start within 2.5x of ``python -c pass``).
"""
