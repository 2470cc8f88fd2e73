"""Every conformance transcript, one pytest case each, plus the runner's own contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
    }
    assert len(TRANSCRIPTS) >= 130


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_transcript(path: Path) -> None:
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
