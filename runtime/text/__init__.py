"""Text generation and transcription: a prompt and audio embeddings in, the language model's prefill inputs, then
tokens and streamed text out (greedy decoding on the compiled decoder or the contract's emulation); speech in,
text out per 30 s window."""
