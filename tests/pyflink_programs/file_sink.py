"""A BATCH word count written by a FileSink with a row format (the output directory is
the first argument)."""

import sys

from pyflink.common import Encoder, Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSink, OutputFileConfig, RollingPolicy

if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)
    ds = env.from_collection(["to be or not", "to be"]).flat_map(lambda line: line.split())
    counts = (
        ds.map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda e: e[0], key_type=Types.STRING())
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    counts.sink_to(
        sink=FileSink.for_row_format(base_path=sys.argv[1], encoder=Encoder.simple_string_encoder())
        .with_output_file_config(
            OutputFileConfig.builder().with_part_prefix("prefix").with_part_suffix(".ext").build()
        )
        .with_rolling_policy(RollingPolicy.default_rolling_policy())
        .build()
    )
    env.execute("file sink")
