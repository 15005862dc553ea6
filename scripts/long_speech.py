"""Write a long speech file by repeating the bundled sample (for >30 s encode checks)."""

import sys

import numpy as np
import soundfile

from gemma3n_iree.runtime.audio.frontend import SAMPLE_SPEECH

samples, rate = soundfile.read(SAMPLE_SPEECH, dtype="float32")
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 45.0
repeats = int(np.ceil(seconds * rate / len(samples)))
soundfile.write(sys.argv[1], np.tile(samples, repeats)[: int(seconds * rate)], rate, subtype="PCM_16")
