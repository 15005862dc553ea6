"""The model description: the audio, text and decoder configurations read from a checkpoint's config.json, and the weight schemas."""
