"""A keyed map and flat_map with state taken in open() (RuntimeContext.get_state), and a
keyed filter."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import FlatMapFunction, MapFunction, RuntimeContext
from pyflink.datastream.state import ListStateDescriptor, ValueStateDescriptor


class Count(MapFunction):
    def open(self, runtime_context: RuntimeContext):
        self.n = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def map(self, value):
        n = (self.n.value() or 0) + 1
        self.n.update(n)
        return value, n


class Pairs(FlatMapFunction):
    def open(self, runtime_context: RuntimeContext):
        self.previous = runtime_context.get_list_state(ListStateDescriptor("prev", Types.STRING()))

    def flat_map(self, value):
        for p in self.previous.get():
            yield p + "-" + value[1]
        self.previous.add(value[1])


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    words = env.from_collection(["a", "b", "a", "c", "b", "a"], type_info=Types.STRING())
    words.key_by(lambda w: w).map(
        Count(), output_type=Types.TUPLE([Types.STRING(), Types.INT()])
    ).print("count")
    tagged = env.from_collection([("x", "1"), ("y", "2"), ("x", "3"), ("x", "4")])
    tagged.key_by(lambda e: e[0]).flat_map(Pairs()).print("pairs")
    words.key_by(lambda w: w).filter(lambda w: w != "b").print("filter")
    env.execute("keyed rich functions")
