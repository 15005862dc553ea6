"""Compiled programs: an emitted module in, a content-addressed `.vmfb` (`artifacts.py`) and a loaded program out --
one IREE context with one resident copy of the weights, its entries called on its device thread (`session.py`)."""
