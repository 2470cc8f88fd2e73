"""PyFlink's Table API is not modelled: importing ``pyflink.table`` says so."""

from winviz.pyflink.errors import unsupported

raise unsupported(
    "The Table API (pyflink.table: TableEnvironment, StreamTableEnvironment, SQL)",
    "write the job with the DataStream API (pyflink.datastream): windows with "
    "key_by(...).window(...), aggregations with reduce/aggregate, joins with "
    "connect(...).key_by(...).process(...)",
)
