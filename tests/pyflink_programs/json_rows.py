"""JSON records in a ROW_NAMED source: parse, update, filter; a Row-typed output."""

import json

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment

if __name__ == "__main__":
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection(
        [
            (1, '{"name": "Flink", "tel": 123, "addr": {"country": "Germany", "city": "Berlin"}}'),
            (2, '{"name": "hello", "tel": 135, "addr": {"country": "China", "city": "Shanghai"}}'),
            (3, '{"name": "world", "tel": 124, "addr": {"country": "USA", "city": "NewYork"}}'),
            (4, '{"name": "PyFlink", "tel": 32, "addr": {"country": "China", "city": "Hangzhou"}}'),
        ],
        type_info=Types.ROW_NAMED(["id", "info"], [Types.INT(), Types.STRING()]),
    )

    def update_tel(data):
        info = json.loads(data.info)
        info["tel"] += 1
        return data.id, info

    ds.map(update_tel).filter(lambda d: d[1]["addr"]["country"] == "China").print("china")
    ds.map(
        lambda d: Row(d.id, json.loads(d.info)["addr"]["city"], json.loads(d.info)["tel"] > 100),
        output_type=Types.ROW([Types.INT(), Types.STRING(), Types.BOOLEAN()]),
    ).print("row")
    env.execute("json")
