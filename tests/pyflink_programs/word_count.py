"""Streaming word count: flat_map that yields, a typed map, key_by and a rolling reduce,
and KeyedStream.sum."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    lines = env.from_collection(["to be or", "not to be"])

    def split(line):
        yield from line.split()

    lines.flat_map(split).map(
        lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])
    ).key_by(lambda e: e[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).print("reduce")
    lines.flat_map(lambda line: line.split()).map(lambda w: (w, 1)).key_by(lambda e: e[0]).sum(
        1
    ).print("sum")
    env.execute("word count")
