"""Tumbling windows with a ProcessWindowFunction, a reduce with a ProcessWindowFunction and
a sliding-window aggregate, event time from a TimestampAssigner (a PyFlink program)."""

from pyflink.common import Duration, Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import ProcessWindowFunction, StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction, ReduceFunction
from pyflink.datastream.window import SlidingEventTimeWindows, TimeWindow, TumblingEventTimeWindows


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[2]


class Describe(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    def process(self, key, context: ProcessWindowFunction.Context[TimeWindow], elements):
        window = context.window()
        yield key, window.start, window.end, sorted(e[1] for e in elements), window.max_timestamp()


class Sum(ReduceFunction):
    def reduce(self, value1, value2):
        return value1[0], value1[1] + value2[1], max(value1[2], value2[2])


class WithWindowEnd(ProcessWindowFunction):
    def process(self, key, context, elements):
        return [(key, context.window().end, e[1]) for e in elements]


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value[1], accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a, acc_b):
        return acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [
        ("a", 1, 1000),
        ("b", 2, 1500),
        ("a", 3, 4999),
        ("a", 4, 5000),
        ("b", 5, 3000),
        ("a", 6, 12000),
    ]
    ds = env.from_collection(
        data, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])
    ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(
            Duration.of_seconds(1)
        ).with_timestamp_assigner(EventTime())
    )
    keyed = ds.key_by(lambda e: e[0], key_type=Types.STRING())
    keyed.window(TumblingEventTimeWindows.of(Time.seconds(5))).process(Describe()).print("process")
    keyed.window(TumblingEventTimeWindows.of(Time.seconds(5))).reduce(
        Sum(), WithWindowEnd(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])
    ).print("reduce")
    keyed.window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))).aggregate(
        Average()
    ).print("aggregate")
    env.execute("windows")
