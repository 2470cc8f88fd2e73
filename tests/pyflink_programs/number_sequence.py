"""from_source with a NumberSequenceSource, filter, map, key_by and a rolling sum."""

from pyflink.common import WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    numbers = env.from_source(
        NumberSequenceSource(1, 10), WatermarkStrategy.no_watermarks(), "numbers"
    )
    numbers.filter(lambda n: n % 2 == 0).map(lambda n: (n % 3, n)).key_by(lambda e: e[0]).sum(
        1
    ).print()
    env.execute("number sequence")
