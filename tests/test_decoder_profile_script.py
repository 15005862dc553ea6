"""`scripts/decoder_profile.py`'s device timeline (a pure function of CUPTI's kernel intervals; the GPU machine runs
the script): per step the wall time, the span from the first kernel's start to the last one's end, and the idle
gaps between kernels grouped by size, each gap in exactly one class; and its host phases, each call's time put on
the session method it was spent in."""

from __future__ import annotations

import runpy
import time

import pytest

PROFILE = runpy.run_path("scripts/decoder_profile.py", run_name="profile")
device_timeline, GAP_CLASSES_US = PROFILE["device_timeline"], PROFILE["GAP_CLASSES_US"]
host_phases, phase_split = PROFILE["host_phases"], PROFILE["phase_split"]


def test_gaps_fall_into_their_size_class_and_the_sums_are_per_step():
    # two steps of three kernels (us): gaps of 1, 2 (a class's lower bound: its own), 250 (between the steps),
    # 0.5 and 30 (step two)
    kernels = [(0, 10), (11, 20), (22, 40), (290, 300), (300.5, 310), (340, 350)]
    timeline = device_timeline(kernels, wall_ms=1.0, steps=2)
    assert timeline["wall_ms_per_step"] == 0.5
    assert timeline["span_ms_per_step"] == pytest.approx(0.175)
    gaps = timeline["gaps"]
    assert list(gaps) == ["0-2us", "2-5us", "5-20us", "20-infus"]
    assert gaps["0-2us"] == {"per_step": 1.0, "ms_per_step": pytest.approx(0.00075, abs=1e-4)}
    assert gaps["2-5us"] == {"per_step": 0.5, "ms_per_step": pytest.approx(0.001, abs=1e-4)}
    assert gaps["5-20us"] == {"per_step": 0.0, "ms_per_step": 0.0}
    assert gaps["20-infus"] == {"per_step": 1.0, "ms_per_step": pytest.approx(0.14, abs=1e-4)}
    # the span is the kernels' time and the gaps' (no kernel overlaps another on one stream)
    busy = sum(end - start for start, end in kernels) / 2 / 1e3
    idle = sum(g["ms_per_step"] for g in gaps.values())
    assert timeline["span_ms_per_step"] == pytest.approx(busy + idle, abs=1e-3)


def test_the_classes_cover_every_gap_once_and_unordered_intervals_are_sorted():
    assert GAP_CLASSES_US[0][0] == 0.0 and GAP_CLASSES_US[-1][1] == float("inf")
    assert all(a[1] == b[0] for a, b in zip(GAP_CLASSES_US, GAP_CLASSES_US[1:]))
    shuffled = [(30, 40), (0, 10), (12, 20)]
    timeline = device_timeline(shuffled, wall_ms=0.1, steps=1)
    assert timeline["gaps"]["0-2us"]["per_step"] == 0 and timeline["gaps"]["2-5us"]["per_step"] == 1
    assert timeline["gaps"]["5-20us"]["per_step"] == 1
    assert device_timeline([], wall_ms=1.0, steps=1) == {}


class _Staging:
    def _copy(self, pairs):
        time.sleep(0.004)

    def upload(self, name, args):
        time.sleep(0.002)
        self._copy(args)
        return list(args)

    def download(self, name, results, indices):
        self._copy(results)
        return [results[i] for i in indices]


class _Session:
    """The shape of `LoadedProgram` / `DecoderSession` that a greedy step walks through, with known sleeps."""

    def __init__(self):
        self._staging = _Staging()

    def _decode_call(self):
        time.sleep(0.001)
        return "decode", [1, 2]

    def _invoker(self, name):
        def entry(*args):
            time.sleep(0.010)
            return args

        return entry

    def step(self):
        name, args = self._decode_call()
        results = self._invoker(name)(*self._staging.upload(name, args))
        time.sleep(0.003)  # outside every phase
        return self._staging.download(name, results, [0])


def test_host_phases_put_each_call_on_the_method_it_ran_in_and_unwrap_after():
    session = _Session()
    with host_phases(session) as totals:
        started = time.perf_counter()
        for _ in range(2):
            assert session.step() == [1]
        wall = time.perf_counter() - started
    split = phase_split(totals, wall, 2)
    # per step: prepare 1 ms, upload 2 + 4 ms, call 10 ms, download 4 ms (its copy), copies 8 ms inside those two,
    # 3 ms outside every phase; sleeps only ever run longer, by well under a millisecond each
    for phase, ms in {"prepare": 1, "upload": 6, "call": 10, "download": 4, "copies": 8, "other": 3}.items():
        assert ms <= split[phase] < ms + 2.5, (phase, split)
    assert split["wall"] == pytest.approx(
        sum(split[p] for p in ("prepare", "upload", "call", "download", "other")), abs=0.01
    )
    # the instance's own attributes are gone again: the class's methods answer
    assert "_decode_call" not in vars(session) and "_invoker" not in vars(session)
    assert not {"upload", "download", "_copy"} & set(vars(session._staging))
