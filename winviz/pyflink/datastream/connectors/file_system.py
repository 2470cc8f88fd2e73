"""PyFlink's file connector (``pyflink.datastream.connectors.file_system``): ``FileSink``
with a row format and ``FileSource`` over text lines of a static set of files.

``FileSink.for_row_format(base_path, Encoder.simple_string_encoder())`` writes each record's
text and a newline (Flink's ``SimpleStringEncoder``) into a part file
``{base_path}/{bucket}/{prefix}-{id}-{subtask}-{counter}{suffix}`` (Flink's
``OutputFileConfig``, ``part`` and no suffix by default). The bucket is Flink's default
``DateTimeBucketAssigner`` (``yyyy-MM-dd--HH``) of the simulated processing time, in UTC
(Flink: the wall clock in the JVM's zone), or none with ``BucketAssigner.
base_path_bucket_assigner()``; ``{id}`` is fixed (``winviz``: Flink draws a UUID) so a run
writes the same path every time. One part file per run: the rolling policy is accepted, and
winviz writes the file as finished when the job ends (in STREAMING without checkpoints
Flink would leave it in progress, as a hidden ``.part-…inprogress`` file).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from winviz.pyflink.common.serialization import Encoder
from winviz.pyflink.errors import unsupported


class OutputFileConfig:
    def __init__(self, part_prefix: str = "part", part_suffix: str = "") -> None:
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix

    @staticmethod
    def builder() -> OutputFileConfig.OutputFileConfigBuilder:
        return OutputFileConfig.OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self.part_prefix

    def get_part_suffix(self) -> str:
        return self.part_suffix

    class OutputFileConfigBuilder:
        def __init__(self) -> None:
            self.prefix = "part"
            self.suffix = ""

        def with_part_prefix(self, prefix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            self.prefix = prefix
            return self

        def with_part_suffix(self, suffix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            self.suffix = suffix
            return self

        def build(self) -> OutputFileConfig:
            return OutputFileConfig(self.prefix, self.suffix)


class RollingPolicy:
    """Accepted; winviz writes one part file per run (see the module doc)."""

    @staticmethod
    def default_rolling_policy(
        part_size: int = 1024 * 1024 * 128,
        rollover_interval: int = 60 * 1000,
        inactivity_interval: int = 60 * 1000,
    ) -> RollingPolicy:
        return RollingPolicy()

    @staticmethod
    def on_checkpoint_rolling_policy() -> RollingPolicy:
        return RollingPolicy()


class BucketAssigner:
    def __init__(self, format_str: str | None) -> None:
        self.format_str = format_str

    @staticmethod
    def base_path_bucket_assigner() -> BucketAssigner:
        return BucketAssigner(None)

    @staticmethod
    def date_time_bucket_assigner(
        format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None
    ) -> BucketAssigner:
        return BucketAssigner(format_str)

    def bucket(self, processing_time: int) -> str:
        if self.format_str is None:
            return ""
        moment = dt.datetime.fromtimestamp(processing_time / 1000, tz=dt.UTC)
        java = self.format_str
        for pattern, py in (
            ("yyyy", "%Y"),
            ("MM", "%m"),
            ("dd", "%d"),
            ("HH", "%H"),
            ("mm", "%M"),
            ("ss", "%S"),
        ):
            java = java.replace(pattern, py)
        return moment.strftime(java)


class FileSink:
    """A row-format file sink (``FileSink.for_row_format(...)...build()``)."""

    def __init__(self, base_path: str, encoder: Encoder) -> None:
        self.base_path = base_path
        self.encoder = encoder
        self.output_file_config = OutputFileConfig()
        self.bucket_assigner = BucketAssigner.date_time_bucket_assigner()
        self.written: list[Path] = []

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> FileSink.RowFormatBuilder:
        return FileSink.RowFormatBuilder(FileSink(base_path, encoder))

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: Any) -> Any:
        raise unsupported(
            "FileSink.for_bulk_format (Parquet, Avro, ORC writers)",
            "write rows with FileSink.for_row_format(path, Encoder.simple_string_encoder()); "
            "winviz saves a run's trace as Parquet itself (--trace run.parquet)",
        )

    class RowFormatBuilder:
        def __init__(self, sink: FileSink) -> None:
            self._sink = sink

        def with_bucket_assigner(self, bucket_assigner: BucketAssigner) -> Any:
            self._sink.bucket_assigner = bucket_assigner
            return self

        def with_bucket_check_interval(self, interval: int) -> Any:
            return self

        def with_rolling_policy(self, rolling_policy: RollingPolicy) -> Any:
            return self

        def with_output_file_config(self, output_file_config: OutputFileConfig) -> Any:
            self._sink.output_file_config = output_file_config
            return self

        def enable_compact(self, strategy: Any, compactor: Any) -> Any:
            return self

        def build(self) -> FileSink:
            return self._sink

    def write(self, lines: list[str], records: list[Any]) -> list[Path]:
        """Write one run's records (their texts); returns the files written."""
        if not lines:
            return []
        directory = Path(self.base_path) / self.bucket_assigner.bucket(records[0].processing_time)
        directory.mkdir(parents=True, exist_ok=True)
        config = self.output_file_config
        counter = sum(1 for p in self.written if p.parent == directory)
        path = directory / f"{config.part_prefix}-winviz-0-{counter}{config.part_suffix}"
        path.write_text("".join(line + "\n" for line in lines), encoding=self.encoder.charset_name)
        self.written.append(path)
        return [path]


class StreamFormat:
    def __init__(self, charset_name: str) -> None:
        self.charset_name = charset_name

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        return StreamFormat(charset_name)


class FileSource:
    """``FileSource.for_record_stream_format(StreamFormat.text_line_format(), *paths)
    .process_static_file_set().build()``: the lines of the files (a directory: its files
    in name order), read once."""

    def __init__(self, stream_format: StreamFormat, paths: tuple[str, ...]) -> None:
        self.stream_format = stream_format
        self.paths = paths

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> Any:
        return FileSource.FileSourceBuilder(FileSource(stream_format, paths))

    @staticmethod
    def for_bulk_file_format(bulk_format: Any, *paths: str) -> Any:
        raise unsupported(
            "FileSource.for_bulk_file_format (Parquet, Avro, ORC readers)",
            "read the file into a list (e.g. with pandas) and use from_collection",
        )

    def lines(self) -> list[str]:
        out: list[str] = []
        for p in self.paths:
            path = Path(p)
            files = sorted(f for f in path.iterdir() if f.is_file()) if path.is_dir() else [path]
            for f in files:
                out.extend(f.read_text(encoding=self.stream_format.charset_name).splitlines())
        return out

    class FileSourceBuilder:
        def __init__(self, source: FileSource) -> None:
            self._source = source

        def process_static_file_set(self) -> Any:
            return self

        def monitor_continuously(self, discovery_interval: Any) -> Any:
            raise unsupported(
                "FileSource.monitor_continuously (an unbounded file source)",
                "winviz's sources are bounded: use process_static_file_set()",
            )

        def set_file_enumerator(self, provider: Any) -> Any:
            return self

        def set_split_assigner(self, provider: Any) -> Any:
            return self

        def build(self) -> FileSource:
            return self._source
