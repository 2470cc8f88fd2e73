"""PyFlink's ``TimeDomain``."""

from winviz.pyflink.datastream.functions import TimeDomain

__all__ = ["TimeDomain"]
