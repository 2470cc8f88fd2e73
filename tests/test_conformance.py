"""Every conformance transcript, one pytest case each, plus the runner's own contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jobs import engine_paths

from winviz.conformance import TranscriptError, check_transcript, load

DIR = Path(__file__).resolve().parent / "conformance"
TRANSCRIPTS = sorted(DIR.glob("*.yaml"))


def test_there_are_transcripts_of_every_kind() -> None:
    kinds = {load(p)["operator"]["kind"] for p in TRANSCRIPTS}
    assert kinds == {
        "window",
        "timers",
        "timer_service",
        "trigger",
        "assigner",
        "merging_window_set",
        "valve",
        "bounded_out_of_orderness",
        "watermark_generator",
        "partitioner",
        "two_input",
    }
    assert len(TRANSCRIPTS) >= 140


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "flink_path"])
@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_transcript(path: Path, kernel: bool) -> None:
    """With the window kernel where it applies (as a job runs), and with Flink's path only."""
    with engine_paths(kernel=kernel):
        assert check_transcript(load(path)) is None


def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    text = (DIR / "seed_003_tumbling_5s_fires.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("value: [5000]", "value: [5001]", 1))
    assert text != bad.read_text()
    problem = check_transcript(load(bad))
    assert problem is not None and "expect" in problem


def test_unknown_field_names_file_step_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "unknown.yaml"
    bad.write_text(
        "name: x\noperator: {kind: valve, channels: 2}\n"
        "steps:\n  - {channel: 0, watermark: 1}\n  - {channel: 0, wobble: 3}\n"
    )
    with pytest.raises(
        TranscriptError, match=r"unknown.yaml: step 1: unknown field\(s\) \['wobble'\]"
    ):
        check_transcript(load(bad))


def test_cli_prints_summary_and_json() -> None:
    files = [
        str(DIR / "seed_003_tumbling_5s_fires.yaml"),
        str(DIR / "valve_testMultipleInputs.yaml"),
    ]
    files = [f for f in files if Path(f).exists()]
    run = subprocess.run(
        [sys.executable, "-m", "winviz.conformance", "run", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1] == f"{len(files)} passed, 0 failed"
    out = subprocess.run(
        [sys.executable, "-m", "winviz.conformance", "run", files[0], "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(out.stdout)
    steps = doc["transcripts"][0]["steps"]
    assert all(set(s) == {"emitted", "late"} for s in steps)
    fired = [r for s in steps for r in s["emitted"]]
    assert {"key", "value", "ts", "window"} == set(fired[0])


def test_expect_error_passes_only_when_the_operator_raises_there(tmp_path: Path) -> None:
    text = (DIR / "flinkdiff_merge_check_does_not_saturate.yaml").read_text()
    assert check_transcript(load(DIR / "flinkdiff_merge_check_does_not_saturate.yaml")) is None
    calm = tmp_path / "calm.yaml"
    calm.write_text(text.replace('allowed_lateness: "MAX"', "allowed_lateness: 0"))
    assert "nothing was raised" in check_transcript(load(calm))
    other = tmp_path / "other.yaml"
    other.write_text(text.replace("cannot become earlier", "some other message"))
    assert check_transcript(load(other)).startswith("step 2: raised UnsupportedOperationError")


def test_json_reports_an_operator_failure_and_keeps_going() -> None:
    files = [
        DIR / "flinkdiff_merge_check_does_not_saturate.yaml",
        DIR / "seed_003_tumbling_5s_fires.yaml",
    ]
    out = subprocess.run(
        [sys.executable, "-m", "winviz.conformance", "run", *map(str, files), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    first, second = json.loads(out.stdout)["transcripts"]
    assert first["error"].startswith("UnsupportedOperationError: The end timestamp")
    assert len(first["steps"]) == 2
    assert "error" not in second and len(second["steps"]) == 5


# -- kinds partitioner and two_input ---------------------------------------------------------


def test_partitioner_and_two_input_wrong_expectations_fail(tmp_path: Path) -> None:
    hashed = DIR / "flinkdiff_partitioner_hash_p3_m128.yaml"
    bad = tmp_path / "hash.yaml"
    bad.write_text(hashed.read_text().replace("expect_key_group: 116", "expect_key_group: 117"))
    assert check_transcript(load(bad)) == "step 0: expect_key_group: expected 117, got 116"
    co = DIR / "two_input_KeyedCoProcessOperatorTest_testGetCurrentKeyFromTimers.yaml"
    late = tmp_path / "co.yaml"
    late.write_text(co.read_text().replace("{input: 1, watermark: 5}", "{input: 1, watermark: 4}"))
    problem = check_transcript(load(late))
    assert problem.startswith("step 3: expect_timers: expected"), problem


def test_two_input_json_names_what_each_step_caused() -> None:
    path = DIR / "two_input_KeyedCoProcessOperatorTest_testGetCurrentKeyFromTimers.yaml"
    out = subprocess.run(
        [sys.executable, "-m", "winviz.conformance", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    steps = json.loads(out.stdout)["transcripts"][0]["steps"]
    assert steps[0] == {"timers": [], "watermarks": [], "status": [], "watermark": -(2**63)}
    assert steps[3] == {
        "timers": [{"key": "17", "ts": 5, "watermark": 5}],
        "watermarks": [5],
        "status": [],
    }


@pytest.mark.parametrize(
    ("operator", "step", "message"),
    [
        ("{kind: two_input}", "{input: 3, watermark: 1}", "step 0: input is 1 or 2, got 3"),
        ("{kind: two_input}", "{input: 1, watermark: 1, idle: true}", "one of element"),
        ("{kind: two_input}", "{input: 2, channel: 1, idle: true}", "channel 1 of input 2"),
        ("{kind: two_input}", "{input: 1, register_event_time: [5], idle: true}", "timers are"),
        ("{kind: two_input, channels: [2]}", "{input: 1, idle: true}", "channels is [n1, n2]"),
        ("{kind: partitioner, partitioner: shuffle, parallelism: 2}", "{key: a}", "shuffle"),
        (
            "{kind: partitioner, partitioner: hash, parallelism: 4, max_parallelism: 2}",
            "{key: a}",
            "max_parallelism 2 is below the parallelism 4",
        ),
        ("{kind: partitioner, partitioner: hash, parallelism: 2, max_parallelism: 8}", "{}", "key"),
        # an element reads alike in every keyed kind (Driver.keyed_element)
        (
            "{kind: two_input}",
            "{input: 1, element: {value: 1, ts: 5}}",
            "step 0: element: missing field 'key'",
        ),
        (
            "{kind: timers}",
            "{element: {key: a, ts: 5, weight: 2}}",
            "step 0: element: unknown field(s) ['weight'] (expected key, value, ts)",
        ),
        (
            "{kind: timers}",
            "{element: {key: a, value: x, ts: 5}}",
            "step 0: element.value: expected an integer, got 'x'",
        ),
    ],
)
def test_new_kinds_name_the_bad_field(
    tmp_path: Path, operator: str, step: str, message: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"name: bad\noperator: {operator}\nsteps:\n  - {step}\n")
    with pytest.raises(TranscriptError, match=r"bad\.yaml") as info:
        check_transcript(load(bad))
    assert message in str(info.value)
