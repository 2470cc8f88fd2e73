"""The conformance runner on malformed transcripts (FORMAT.md: "a transcript that the runner
cannot execute is a clear error naming the file, the step index and the field — never a
silent pass"): a repeated key, a transcript without steps whose operator cannot be built, an
expectation that is no list, an element that is no mapping, an element value that is no
integer, an operator that is no mapping, a name that is no str."""

from __future__ import annotations

from pathlib import Path

import pytest

from winviz.conformance import TranscriptError, check_transcript, load
from winviz.conformance.cli import main

WINDOW = (
    "operator: {kind: window, assigner: {type: tumbling, size: 2000}, "
    "trigger: {type: event_time}, function: sum}\n"
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_a_step_that_repeats_expect_is_refused_not_half_checked(tmp_path: Path) -> None:
    """PyYAML keeps a repeated key's last value: the wrong first ``expect`` (value 7) was
    dropped unchecked and the transcript passed."""
    path = _write(
        tmp_path,
        "twice",
        "name: twice\n" + WINDOW + "steps:\n"
        "  - element: {key: a, value: 1, ts: 5}\n"
        "  - watermark: 1999\n"
        "    expect: [{key: a, value: 7, ts: 1999, window: [0, 2000]}]\n"
        "    expect: [{key: a, value: 1, ts: 1999, window: [0, 2000]}]\n",
    )
    with pytest.raises(TranscriptError) as info:
        load(path)
    assert str(info.value) == (
        f"{path}: line 7: the key 'expect' appears twice in one mapping (first on line 6); "
        "each field may appear once"
    )
    # the same key in two mappings is no repeat
    other = _write(
        tmp_path,
        "apart",
        "name: apart\n" + WINDOW + "steps:\n"
        "  - {element: {key: a, value: 1, ts: 5}}\n  - {element: {key: a, value: 2, ts: 6}}\n",
    )
    assert check_transcript(load(other)) is None


def test_a_transcript_without_steps_still_builds_its_operator(tmp_path: Path) -> None:
    """Without a step the operator was never built: an unknown assigner passed."""
    bogus = _write(
        tmp_path,
        "bogus",
        "name: bogus\noperator: {kind: window, assigner: {type: bogus}, function: sum}\n"
        "steps: []\n",
    )
    with pytest.raises(TranscriptError, match=r"assigner.type 'bogus' is not one of"):
        check_transcript(load(bogus))
    refused = _write(
        tmp_path,
        "refused",
        "name: refused\noperator: {kind: window, assigner: {type: tumbling, size: -5}, "
        "function: sum}\nsteps: []\n",
    )
    # an operator winviz refuses to build: the transcript cannot run (an ERROR, not a FAIL)
    with pytest.raises(TranscriptError) as refused_error:
        check_transcript(load(refused))
    assert str(refused_error.value) == (
        f"{refused}: operator: field 'size', value -5: TumblingEventTimeWindows "
        "parameters must satisfy abs(offset) < size (got size=-5, offset=0) (expected size > 0 "
        "and abs(offset) < size)"
    )
    fine = _write(tmp_path, "fine", "name: fine\n" + WINDOW + "steps: []\n")
    assert check_transcript(load(fine)) is None


@pytest.mark.parametrize(
    ("expect", "shown"),
    [("5", "5"), ("{key: a, value: 1, ts: 1999, window: [0, 2000]}", "{'key': 'a'")],
)
def test_an_expectation_that_is_no_list_is_an_error_not_a_failure(
    tmp_path: Path, expect: str, shown: str
) -> None:
    path = _write(
        tmp_path,
        "nolist",
        "name: nolist\n" + WINDOW + "steps:\n"
        "  - element: {key: a, value: 1, ts: 5}\n"
        f"  - watermark: 1999\n    expect: {expect}\n",
    )
    with pytest.raises(TranscriptError) as info:
        check_transcript(load(path))
    assert str(info.value).startswith(f"{path}: step 1: expect {shown}")
    assert str(info.value).endswith("expected a list (compared as a multiset)")


def test_an_element_that_is_no_mapping_is_named(tmp_path: Path) -> None:
    """A list element raised TypeError from inside the driver."""
    path = _write(tmp_path, "elem", "name: elem\n" + WINDOW + "steps:\n  - element: [a, 1, 5]\n")
    with pytest.raises(TranscriptError) as info:
        check_transcript(load(path))
    assert str(info.value) == (
        f"{path}: step 0: element ['a', 1, 5]: expected a mapping such as "
        "{key: a, value: 1, ts: 5}"
    )


@pytest.mark.parametrize("value", ["x", "1.5", "true"])
def test_a_window_element_value_is_an_integer(tmp_path: Path, value: str) -> None:
    """A str value failed later, as the operator's error at the next step; a float one
    was summed (FORMAT.md: a record's value is an int)."""
    path = _write(
        tmp_path,
        "value",
        "name: value\n" + WINDOW + "steps:\n"
        f"  - element: {{key: a, value: {value}, ts: 5}}\n"
        "  - element: {key: a, value: 1, ts: 5}\n  - watermark: 1999\n",
    )
    with pytest.raises(TranscriptError, match=r"step 0: element.value: expected an integer"):
        check_transcript(load(path))


@pytest.mark.parametrize(
    ("head", "message"),
    [
        ("name: op\noperator: [1]\n", "operator [1]: expected a mapping with a kind, one of"),
        ("name: 5\n" + WINDOW, "name 5: expected a non-empty str"),
    ],
)
def test_the_top_level_fields_have_their_types(tmp_path: Path, head: str, message: str) -> None:
    path = _write(tmp_path, "top", head + "steps: []\n")
    with pytest.raises(TranscriptError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_the_cli_reports_each_malformed_transcript_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(
        tmp_path,
        "a_good",
        "name: good\n" + WINDOW + "steps:\n  - element: {key: a, value: 1, ts: 5}\n"
        "  - watermark: 1999\n    expect: [{key: a, value: 1, ts: 1999, window: [0, 2000]}]\n",
    )
    _write(tmp_path, "b_op", "name: op\noperator: [1]\nsteps: []\n")
    _write(
        tmp_path,
        "c_empty",
        "name: empty\noperator: {kind: window, assigner: {type: bogus}, function: sum}\n"
        "steps: []\n",
    )
    assert main(["run", str(tmp_path)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "PASS good"
    assert lines[1].startswith(f"ERROR {tmp_path / 'b_op.yaml'}: operator [1]: expected a")
    assert lines[2].startswith(
        f"ERROR {tmp_path / 'c_empty.yaml'}: operator.assigner.type 'bogus' is not one of "
    )
    assert lines[3] == "1 passed, 0 failed, 2 could not be run"


def test_a_bad_window_spec_is_named_by_its_path_once(tmp_path: Path) -> None:
    """The spec's path names it once ("operator.trigger: trigger: unknown field(s)" said it
    twice); a purging trigger's inner trigger is ``operator.trigger.of``."""
    head = (
        "name: t\noperator:\n  kind: window\n  function: sum\n"
        "  assigner: {type: tumbling, size: 10}\n"
    )
    extra = _write(
        tmp_path, "extra", head + "  trigger: {type: count, n: 2, colour: red}\nsteps: []\n"
    )
    with pytest.raises(TranscriptError) as info:
        check_transcript(load(extra))
    assert str(info.value) == f"{extra}: operator.trigger: unknown field(s) ['colour']"
    inner = _write(
        tmp_path, "inner", head + "  trigger: {type: purging, of: {type: counted}}\nsteps: []\n"
    )
    with pytest.raises(TranscriptError) as info:
        check_transcript(load(inner))
    assert str(info.value).startswith(
        f"{inner}: operator.trigger.of.type 'counted' is not one of ['continuous_event_time',"
    )


def test_a_transcript_that_is_no_yaml_is_named_where_it_breaks(tmp_path: Path) -> None:
    """The parser's marks name the file, not "<unicode string>"."""
    path = _write(tmp_path, "broken", "name: [a\nsteps: []\n")
    with pytest.raises(TranscriptError) as info:
        load(path)
    assert "<unicode string>" not in str(info.value)
    assert str(info.value).startswith(
        f'{path}: not valid YAML: while parsing a flow sequence\n  in "{path}", line 1, column 7'
    )
