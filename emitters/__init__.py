"""Emitters: fill templates into modules with weights as IREE parameters, and compile them."""
