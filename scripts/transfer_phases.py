"""Where an encode call's wall time goes: upload, execution, download (run on the GPU machine).

Times the three phases of a call two ways on the same session: through IREE's default Python path
(`asdevicearray` for the inputs, `DeviceArray.to_host()` for the results, which registers a fresh
host array for each download) and through the session's staging buffers (what `AudioSession.run`
does), and checks that both give the same bits.

    python scripts/transfer_phases.py --artifact audio_bench.vmfb --checkpoint /tmp/ckpt --clips 1 8 32
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifact", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, required=True, help="directory with model.safetensors")
    parser.add_argument("--clips", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--frames", type=int, default=2997)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--device", default="cuda", help="IREE device (local-task for the CPU)")
    args = parser.parse_args()

    import iree.runtime as rt

    from gemma3n_iree.diagnostics.bench import speechlike_mel
    from gemma3n_iree.runtime.checkpoint import open_checkpoint
    from gemma3n_iree.runtime.encoder.audio_session import AudioSession

    session = AudioSession(args.artifact, open_checkpoint(args.checkpoint).files, device=args.device)
    for clips in args.clips:
        name = session.entries[(args.frames, clips)].name
        inputs = (speechlike_mel(clips, args.frames), np.full(clips, args.frames, np.int32))

        def default_path() -> tuple[list[np.ndarray], tuple[float, float, float]]:
            t0 = time.perf_counter()
            device_args = [rt.asdevicearray(session.device, a) for a in inputs]
            t1 = time.perf_counter()
            results = session._invoker(name)(*device_args)  # noqa: SLF001
            t2 = time.perf_counter()
            host = [np.array(r.to_host(), copy=True) for r in results]
            return host, (t1 - t0, t2 - t1, time.perf_counter() - t2)

        def staged_path() -> tuple[list[np.ndarray], tuple[float, float, float]]:
            t0 = time.perf_counter()
            device_args = session._staging.upload(name, inputs)  # noqa: SLF001
            t1 = time.perf_counter()
            results = session._invoker(name)(*device_args)  # noqa: SLF001
            t2 = time.perf_counter()
            host = session._staging.download(name, list(results))  # noqa: SLF001
            return host, (t1 - t0, t2 - t1, time.perf_counter() - t2)

        record: dict[str, object] = {"clips": clips}
        reference = None
        for label, path in (("default", default_path), ("staged", staged_path)):
            for _ in range(3):
                host, _ = session._on_thread(path)  # noqa: SLF001
            reference = host if reference is None else reference
            phases = np.array([session._on_thread(path)[1] for _ in range(args.repeats)]) * 1e3  # noqa: SLF001
            record[label] = {
                "upload_ms": round(float(np.median(phases[:, 0])), 2),
                "execute_ms": round(float(np.median(phases[:, 1])), 2),
                "download_ms": round(float(np.median(phases[:, 2])), 2),
                "total_ms": round(float(np.median(phases.sum(axis=1))), 2),
                "same_bits": all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) for a, b in zip(reference, host)),
            }
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
