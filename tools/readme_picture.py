"""Render the README's picture, docs/timeline.png: the README's own job drawn by
``wv.timeline`` (offline, with vl-convert). Run: ``.venv/bin/python tools/readme_picture.py``.

No Flink class is mirrored here; the chart is the kit's, from a real run's trace."""

from __future__ import annotations

from pathlib import Path

import winviz as wv

OUT = Path(__file__).resolve().parent.parent / "docs" / "timeline.png"


def readme_job() -> wv.JobExecutionResult:
    """The README's example: clicks counted per user in 5 s windows; the click at 900 arrives
    late (the watermark is 4499) and is accepted: its window [0, 5000) has not fired yet."""
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    clicks = env.from_collection(
        [("alice", 1_000), ("bob", 2_500), ("alice", 4_999), ("alice", 900)],
        arrival_times=[0, 100, 200, 900],
    )
    sums = (
        clicks.assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(500).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(5)))
        .side_output_late_data(late)
        .aggregate(wv.CountAggregate())
    )
    sums.sink_to("counts")
    return env.execute()


def main() -> None:
    wv.save_png(wv.timeline(readme_job()), OUT, scale=1.5)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
