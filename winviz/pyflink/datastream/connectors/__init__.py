"""PyFlink's connectors: winviz models the file system (``file_system``: ``FileSink`` with
a row format, ``FileSource`` over text lines) and ``NumberSequenceSource``
(``number_seq``). Kafka, Pulsar, Kinesis, Elasticsearch, JDBC, Cassandra, RabbitMQ… are
external systems: importing them says so (``winviz.pyflink.finder``)."""

from __future__ import annotations

from typing import Any

from winviz.pyflink.datastream.connectors.file_system import FileSink, FileSource
from winviz.pyflink.datastream.connectors.number_seq import NumberSequenceSource
from winviz.pyflink.errors import module_getattr

__all__ = ["FileSink", "FileSource", "NumberSequenceSource"]

__getattr__: Any = module_getattr(
    "pyflink.datastream.connectors",
    default="external connectors are not modelled by winviz.pyflink; read with "
    "from_collection(...) or from_source(NumberSequenceSource(...), ...) and write with "
    "print(), execute_and_collect() or FileSink.for_row_format(...)",
)
