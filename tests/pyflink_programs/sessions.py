"""Event-time session windows with a gap extractor and an AggregateFunction with a
ProcessWindowFunction; an element bridges two sessions of key a."""

from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import ProcessWindowFunction, StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction
from pyflink.datastream.window import EventTimeSessionWindows, SessionWindowTimeGapExtractor


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[2]


class Gap(SessionWindowTimeGapExtractor):
    def extract(self, element) -> int:
        return 5000 if element[0] == "a" else 1000


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0.0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value[1], accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a, acc_b):
        return acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]


class Session(ProcessWindowFunction):
    def process(self, key, context, elements):
        for average in elements:
            yield key, context.window().start, context.window().end, average


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 10, 1000), ("a", 30, 10000), ("b", 7, 2000), ("a", 35, 5500)]
    env.from_collection(
        data, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])
    ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(
            Duration.of_seconds(10)
        ).with_timestamp_assigner(EventTime())
    ).key_by(lambda e: e[0], key_type=Types.STRING()).window(
        EventTimeSessionWindows.with_dynamic_gap(Gap())
    ).aggregate(Average(), Session()).print()
    env.execute("sessions")
