"""Value, list, map, reducing and aggregating state in one KeyedProcessFunction."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction, KeyedProcessFunction
from pyflink.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)


class Mean(AggregateFunction):
    def create_accumulator(self):
        return [0, 0]

    def add(self, value, accumulator):
        return [accumulator[0] + value, accumulator[1] + 1]

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a, acc_b):
        return [acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]]


class AllStates(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.INT()))
        self.per_value = runtime_context.get_map_state(
            MapStateDescriptor("per_value", Types.INT(), Types.INT())
        )
        self.largest = runtime_context.get_reducing_state(
            ReducingStateDescriptor("largest", lambda a, b: max(a, b), Types.INT())
        )
        self.mean = runtime_context.get_aggregating_state(
            AggregatingStateDescriptor("mean", Mean(), Types.PICKLED_BYTE_ARRAY())
        )

    def process_element(self, value, ctx):
        v = value[1]
        self.count.update((self.count.value() or 0) + 1)
        self.seen.add(v)
        self.per_value.put(v, (self.per_value.get(v) or 0) + 1)
        self.largest.add(v)
        self.mean.add(v)
        yield (
            ctx.get_current_key(),
            self.count.value(),
            list(self.seen.get()),
            sorted(self.per_value.items()),
            self.largest.get(),
            self.mean.get(),
        )
        if self.count.value() == 3:
            self.seen.clear()
            self.per_value.remove(v)


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 3), ("b", 1), ("a", 5), ("a", 3), ("b", 4), ("a", 2)]
    env.from_collection(data).key_by(lambda e: e[0]).process(AllStates()).print()
    env.execute("state kinds")
