"""Runtime: checkpoints, audio front end, execution and the command line."""
