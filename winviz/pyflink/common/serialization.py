"""PyFlink's ``Encoder`` (how ``FileSink.for_row_format`` writes a record) and
``SimpleStringSchema``."""

from __future__ import annotations


class Encoder:
    """``Encoder.simple_string_encoder()``: Flink's ``SimpleStringEncoder`` — each record's
    ``toString`` and a newline, in the given charset."""

    def __init__(self, charset_name: str = "UTF-8") -> None:
        self.charset_name = charset_name

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> Encoder:
        return Encoder(charset_name)


class SimpleStringSchema:
    def __init__(self, charset: str = "UTF-8") -> None:
        self.charset = charset
