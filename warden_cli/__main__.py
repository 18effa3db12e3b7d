"""``python -m warden_cli ...``: the same as ``warden ...``."""

from warden_cli.main import main

main()
