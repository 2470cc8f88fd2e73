"""execute() runs only what was added since the previous execute(); execute_and_collect()."""

from pyflink.datastream import StreamExecutionEnvironment

if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection([1, 2, 3])
    ds.map(lambda x: x * 10).print("first")
    env.execute("first")
    ds.filter(lambda x: x > 1).print("second")
    env.execute("second")
    with ds.map(lambda x: x + 100).execute_and_collect() as results:
        print("collected", list(results))
    print("limit", ds.map(lambda x: -x).execute_and_collect(limit=2))
