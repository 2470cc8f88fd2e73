"""Bad input the other bad-input tests did not cover (found trying winviz as a new user):
arrival times that go back or are not whole milliseconds, a time zone that does not exist,
and malformed conformance transcripts run from the command line. Each message names the
record (index, field, value) or the file and step, and what was expected; the runner goes on
with the other transcripts and exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

import winviz as wv
from winviz.conformance.cli import main as conformance
from winviz.errors import InputError


def _run(arrivals: list) -> wv.JobExecutionResult:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([("a", 1_000), ("b", 2_000)], arrival_times=arrivals).sink_to("out")
    return env.execute()


@pytest.mark.parametrize(
    ("arrivals", "message"),
    [
        (
            [10, 0],
            "record 1, field 'arrival_time', value 0: arrival times must not decrease "
            "(processing time only moves forward); the previous record arrived at 10",
        ),
        (
            [0, 1.5],
            "record 1, field 'arrival_time', value 1.5: timestamp must be whole milliseconds",
        ),
        (
            [0, float("nan")],
            "record 1, field 'arrival_time', value nan: timestamp is NaN or infinite",
        ),
        (
            [0],
            "field 'arrival_times': 1 arrival times for 2 records (expected one arrival "
            "time per record)",
        ),
    ],
)
def test_bad_arrival_times_name_the_record_and_the_rule(arrivals: list, message: str) -> None:
    with pytest.raises(InputError) as err:
        _run(arrivals)
    assert str(err.value) == message


def test_an_unknown_time_zone_is_named_with_what_is_expected() -> None:
    with pytest.raises(InputError) as err:
        wv.TimestampNormalizer("Mars/Olympus")("2020-01-01 00:00:00")
    assert str(err.value) == (
        "field 'tz', value 'Mars/Olympus': unknown time zone (expected an IANA name such as "
        "'UTC' or 'Asia/Shanghai')"
    )


GOOD = """name: t
operator: {kind: valve, channels: 2}
steps:
  - {channel: 0, watermark: 1}
"""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            GOOD.replace("watermark: 1", "watermark: 1.5"),
            'step 0: watermark: expected an integer (or "MIN"/"MAX"), got 1.5',
        ),
        (
            GOOD.replace("watermark: 1", "watermark: .nan"),
            'step 0: watermark: expected an integer (or "MIN"/"MAX"), got nan',
        ),
        (
            GOOD.replace("watermark: 1", "watermark: true"),
            'step 0: watermark: expected an integer (or "MIN"/"MAX"), got True',
        ),
        (
            GOOD.replace("watermark: 1", "watermark: 9223372036854775808"),
            "step 0: watermark: 9223372036854775808 is outside Java's long range",
        ),
        (
            GOOD.replace("kind: valve", "kind: valv"),
            "operator.kind 'valv' is not one of ['assigner', 'bounded_out_of_orderness', "
            "'merging_window_set', 'partitioner', 'timer_service', 'timers', 'trigger', "
            "'two_input', 'valve', 'watermark_generator', 'window']",
        ),
        (GOOD.split("steps:")[0] + "steps: 5\n", "steps must be a list"),
        ("", "a transcript is a mapping with name, operator, steps"),
    ],
)
def test_a_malformed_transcript_is_named_and_the_others_still_run(
    tmp_path: Path, capsys, text: str, reason: str
) -> None:
    bad, good = tmp_path / "a_bad.yaml", tmp_path / "b_good.yaml"
    bad.write_text(text)
    good.write_text(GOOD)
    assert conformance(["run", str(tmp_path)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"ERROR {bad}: {reason}",
        "PASS t",
        "1 passed, 0 failed, 1 could not be run",
    ]


WINDOW = """name: w
operator:
  kind: window
  assigner: {type: global}
  trigger: {type: count, n: 2}
  function: sum
steps:
  - element: {key: k, value: 1, ts: 1}
  - element: {key: k, value: 1, ts: 2}
    expect: [{key: k, value: 2, ts: "MAX", window: [null, null]}]
"""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            WINDOW.replace("ts: 1}", "ts: 1, bogus: 1}"),
            "step 0: element: unknown field(s) ['bogus'] (expected key, value, ts)",
        ),
        (
            WINDOW.replace("{key: k, value: 1, ts: 1}", "{value: 1, ts: 1}"),
            "step 0: element: missing field 'key'",
        ),
        (
            WINDOW.replace('ts: "MAX"', 'ts: "MAXX"'),
            'step 1: expect.ts: expected an integer (or "MIN"/"MAX"), got \'MAXX\'',
        ),
        (
            WINDOW.replace("window: [null, null]", "window: [0, x]"),
            'step 1: expect.window: expected an integer (or "MIN"/"MAX"), got \'x\'',
        ),
        (
            WINDOW.replace("n: 2", "n: 0"),
            "operator: field 'CountTrigger max_count', value 0: CountTrigger max_count must be "
            "at least 1 (expected an int >= 1)",
        ),
    ],
)
def test_a_window_transcript_that_cannot_run_is_an_error_not_a_failure(
    tmp_path: Path, capsys, text: str, reason: str
) -> None:
    bad, good = tmp_path / "a_bad.yaml", tmp_path / "b_good.yaml"
    bad.write_text(text)
    good.write_text(WINDOW)
    assert conformance(["run", str(tmp_path)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"ERROR {bad}: {reason}",
        "PASS w",
        "1 passed, 0 failed, 1 could not be run",
    ]
