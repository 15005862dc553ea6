"""The encoder's execution: audio files or samples in, cut into clips and packed into calls on the loaded audio
program; the language model's audio embeddings out (`EncodeResult`, written as `.npz` pieces)."""
