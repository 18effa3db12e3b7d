"""The built-in offline demo: a deterministic model and the ``ops`` / ``supervisor`` agents.

Nothing here imports textual: the headless CLI builds the demo runtime too.
"""
