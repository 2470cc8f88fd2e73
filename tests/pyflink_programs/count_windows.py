"""Count windows: a tumbling count_window with a WindowFunction and a sliding one."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment, WindowFunction
from pyflink.datastream.window import CountWindow


class SumWindowFunction(WindowFunction[tuple, tuple, str, CountWindow]):
    def apply(self, key, window, inputs):
        return [(key, sum(i[0] for i in inputs))]


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = env.from_collection(
        [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello"), (6, "hello")],
        type_info=Types.TUPLE([Types.INT(), Types.STRING()]),
    )
    data.key_by(lambda x: x[1], key_type=Types.STRING()).count_window(2).apply(
        SumWindowFunction(), Types.TUPLE([Types.STRING(), Types.INT()])
    ).print("tumbling")
    data.key_by(lambda x: x[1], key_type=Types.STRING()).count_window(3, 1).apply(
        SumWindowFunction(), Types.TUPLE([Types.STRING(), Types.INT()])
    ).print("sliding")
    env.execute("count windows")
