"""A ProcessFunction that yields to a side output (yield output_tag, value)."""

from pyflink.common import Types
from pyflink.datastream import OutputTag, ProcessFunction, StreamExecutionEnvironment

odd = OutputTag("odd", Types.INT())


class Split(ProcessFunction):
    def process_element(self, value, ctx):
        if value % 2:
            yield odd, value
        else:
            yield value * 100


if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    main = env.from_collection([1, 2, 3, 4, 5], type_info=Types.INT()).process(
        Split(), output_type=Types.INT()
    )
    main.print("even")
    main.get_side_output(odd).print("odd")
    env.execute("side outputs")
