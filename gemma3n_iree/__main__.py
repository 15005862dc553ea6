"""`python -m gemma3n_iree ...` is `gemma3n-iree ...`."""

from .runtime.commands.cli import main

main()
