"""Audio in: a file or an upload's bytes in, 16 kHz mono float32 samples (checked against the length their
container declares) and the log-mel features the encoder reads out."""
