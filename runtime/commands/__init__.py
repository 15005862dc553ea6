"""The command line: arguments in, the `gemma3n-iree` commands run on the flows above; results on stdout or in the
files named, status and progress on stderr. The options every command shares (`emit-gemma3n` too) are declared
once in `cli_options.py`."""
