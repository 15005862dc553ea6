"""Independent test oracles for the Gemma 3n audio encoder (float64 numpy reference and the HF reference)."""
