"""Serving pieces that are pure policy and protocol: continuous batching of decode steps (`batching.py`) and
OpenAI's audio transcription / translation API (`openai_audio.py`)."""
