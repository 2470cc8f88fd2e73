"""Per-window state on session windows: taking ``context.window_state()`` is fine, taking a
state from it is refused ("Per-window state is not allowed when using merging windows.",
PyFlink's and Java Flink's ``MergingWindowStateStore``); global state works."""

from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import ProcessWindowFunction, StreamExecutionEnvironment
from pyflink.datastream.state import ValueStateDescriptor
from pyflink.datastream.window import EventTimeSessionWindows

REFUSAL = "Per-window state is not allowed when using merging windows."


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[2]


class Counted(ProcessWindowFunction):
    def process(self, key, context, elements):
        store = context.window_state()
        try:
            store.get_state(ValueStateDescriptor("firings", Types.INT()))
            refused = False
        except Exception as exc:  # the refusal is the point: print whether it came
            refused = str(exc).startswith(REFUSAL)
        total = context.global_state().get_state(ValueStateDescriptor("total", Types.INT()))
        total.update((total.value() or 0) + len(list(elements)))
        yield key, context.window().start, context.window().end, refused, total.value()


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 1, 1000), ("a", 2, 3000), ("b", 3, 2000), ("a", 4, 20000)]
    env.from_collection(
        data, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])
    ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(
            Duration.of_seconds(0)
        ).with_timestamp_assigner(EventTime())
    ).key_by(lambda e: e[0], key_type=Types.STRING()).window(
        EventTimeSessionWindows.with_gap(Duration.of_seconds(5))
    ).process(Counted()).print()
    env.execute("session window state")
