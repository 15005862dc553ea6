"""Runtime: the product's flows, one subpackage each -- audio in (`audio`), compiled programs (`programs`), the
encoder's execution (`encoder`), text generation and transcription (`text`) and the command line (`commands`) --
and, here, what every flow reads: a checkpoint's files and tensors (`safetensors_files.py`, `checkpoint.py`) and
the deterministic random one (`synthetic.py`)."""
