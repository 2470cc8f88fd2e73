"""The chart registry (``winviz/_charts.py``) is the one list of ``winviz.viz``'s names:
``winviz.viz``, ``explore``'s chart menu and ``winviz``'s lazy names all come from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_import_graph import cycles, import_graph

import winviz as wv
from winviz import _charts, viz

ROOT = Path(__file__).resolve().parent.parent

VIZ_ALL = [
    "Explorer",
    "TraceInputError",
    "explore",
    "operator_flow",
    "propagation_chart",
    "save_html",
    "save_png",
    "save_svg",
    "scrubber",
    "setup_rendering",
    "skew_chart",
    "stage_watermarks",
    "timeline",
    "timers_chart",
    "window_lanes",
]
LAZY = [
    "timeline",
    "window_lanes",
    "timers_chart",
    "scrubber",
    "propagation_chart",
    "skew_chart",
    "operator_flow",
    "stage_watermarks",
    "explore",
    "save_html",
    "save_svg",
    "save_png",
    "setup_rendering",
    "build_twin",
    "compare",
]


def test_the_exact_names():
    explore_module = sys.modules["winviz.viz.explore"]
    assert viz.__all__ == VIZ_ALL
    assert wv.__all__[-len(LAZY) :] == LAZY
    assert tuple(LAZY[:6]) == explore_module.CHART_NAMES  # the first six: the charts
    for name in VIZ_ALL:
        defined = getattr(sys.modules[f"winviz.viz.{_charts.PUBLIC[name]}"], name)
        assert getattr(viz, name) is defined, name
        assert name in dir(viz), name
        if name in LAZY:
            assert getattr(wv, name) is defined, name
    from winviz.viz import Explorer, explore, scrubber, timeline

    assert (timeline, scrubber, explore) == (viz.timeline, viz.scrubber, viz.explore)
    assert Explorer is explore_module.Explorer


def test_import_winviz_imports_no_altair():
    code = "import sys, winviz; print('altair' in sys.modules, 'winviz.viz' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False False\n"


# A registry with one more line, read by a fresh interpreter: the chart reaches all three places.
_ADDED = """
import json, sys, types
from pathlib import Path
source = Path(sys.argv[1]).read_text()
line = '    "skew_chart": "skew",\\n'
assert line in source
registry = types.ModuleType("winviz._charts")
exec(source.replace(line, line + '    "toy_chart": "toy",\\n'), registry.__dict__)
sys.modules["winviz._charts"] = registry
toy = types.ModuleType("winviz.viz.toy")
def toy_chart(trace): return "toy"
toy_chart.vega_lite = lambda view: {"toy": view}
toy.toy_chart = toy_chart
sys.modules["winviz.viz.toy"] = toy
import winviz as wv
from winviz import viz
explore = sys.modules["winviz.viz.explore"]
print(json.dumps({
    "wv_all": "toy_chart" in wv.__all__,
    "wv": wv.toy_chart is toy_chart,
    "viz_all": "toy_chart" in viz.__all__,
    "viz": viz.toy_chart is toy_chart,
    "explore_names": explore.CHART_NAMES,
    "explore_draws": explore._chart_function("toy_chart")(None, 7, None),
}))
"""


def test_a_chart_added_to_the_registry_alone_is_everywhere():
    out = subprocess.run(
        [sys.executable, "-c", _ADDED, str(ROOT / "winviz" / "_charts.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == {
        "wv_all": True,
        "wv": True,
        "viz_all": True,
        "viz": True,
        "explore_names": [
            "timeline",
            "window_lanes",
            "timers_chart",
            "scrubber",
            "propagation_chart",
            "skew_chart",
            "toy_chart",
        ],
        "explore_draws": {"toy": 7},
    }


def test_the_registry_imports_make_no_cycle():
    """``load`` imports by name, which the import-graph check cannot see: its edges added."""
    graph = import_graph()
    graph["winviz.viz"] |= {f"winviz.viz.{m}" for m in _charts.PUBLIC.values()}
    graph["winviz.viz.explore"] |= {f"winviz.viz.{m}" for m in _charts.EXPLORE_CHARTS.values()}
    assert graph["winviz._charts"] == set()
    assert cycles(graph) == []
