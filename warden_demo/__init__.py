"""The built-in offline demo: a deterministic model (``model``), the ``ops`` / ``supervisor``
agents (``agents``), and the choice a ``warden`` process makes between them and your own
``--app`` on ``--db``'s store (``runtime_choice``).

Shared by the console (``tui``), the CLI (``warden_cli``) and the server (``warden_server``), so
it imports none of them, nor textual, typer or the HTTP stack (``.importlinter``). Importing the
package itself loads nothing: ``warden runs list`` and a bare ``warden`` start fast.
"""
