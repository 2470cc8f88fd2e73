"""BATCH runtime mode: a keyed reduce gives one final result per key, keys in the order of
Flink's sorter; a keyed process function's timers fire at the end of each key."""

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[1]


class Last(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_event_time_timer(value[1] + 100)
        yield "element", ctx.get_current_key(), value[1], ctx.timer_service().current_watermark()

    def on_timer(self, timestamp, ctx):
        yield "timer", ctx.get_current_key(), timestamp


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)
    words = env.from_collection(["bb", "a", "bb", "c", "a", "bb"], type_info=Types.STRING())
    words.map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])).key_by(
        lambda e: e[0], key_type=Types.STRING()
    ).reduce(lambda a, b: (a[0], a[1] + b[1])).print("count")
    env.execute("batch word count")

    events = env.from_collection(
        [("k", 300), ("j", 200), ("k", 100)],
        type_info=Types.TUPLE([Types.STRING(), Types.LONG()]),
    ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(EventTime())
    )
    events.key_by(lambda e: e[0], key_type=Types.STRING()).process(Last()).print("process")
    env.execute("batch timers")
