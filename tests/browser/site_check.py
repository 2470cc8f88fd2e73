"""Check every page of a built lesson site in Debian's Chromium (``make lessons`` output):

    python -m tests.browser.site_check build/lessons [--shots DIR]

For each ``NN_*.html`` page, opened from ``file://`` with every request leaving the machine
blocked and recorded: the charts are drawn (``window.winvizCharts``), there is no console
error, no console warning (Vega's warnings go to the console) and no page error, nothing was
fetched; and for each explorer with precomputed runs, moving its first control that has more
than one value to its other end redraws the charts (a real run of other values). Prints one
line per page and exits 1 if any page fails. ``tests/browser`` uses ``check_page`` on the
pages it builds.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tools.browser import CHARTS_DRAWN, OFFLINE, chromium, console_of, new_page, wait_until

# Moves an explorer's first control with two or more values to the end it is not at; returns
# 1, or -1 when no control has two values. (The explorer sets data-run once it has drawn.)
_MOVE = """(i) => {
  const ex = document.querySelectorAll("div.winviz-explorer")[i];
  const inputs = Array.from(ex.querySelectorAll("select, input[type=range]"));
  const input = inputs.find(function (x) {
    return x.tagName === "SELECT" ? x.options.length > 1 : Number(x.max) > 0;
  });
  if (!input) return -1;
  const last = input.tagName === "SELECT" ? input.options.length - 1 : Number(input.max);
  input.value = String(Number(input.value) === last ? 0 : last);
  input.dispatchEvent(new Event("input"));
  return 1;
}"""


@dataclass
class PageReport:
    """What one page did in the browser."""

    page: str
    charts: int = 0
    explorers: int = 0
    explorers_switched: int = 0
    console: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.console or self.blocked or self.errors)

    def line(self) -> str:
        status = "ok" if self.ok else "FAIL"
        text = (
            f"{status}  {self.page}: {self.charts} charts, {self.explorers_switched}/"
            f"{self.explorers} explorers switched runs, {len(self.console)} console messages, "
            f"{len(self.blocked)} requests blocked"
        )
        for problem in [*self.errors, *self.console[:5], *self.blocked[:3]]:
            text += f"\n    {problem}"
        return text


def _drawn(pg, expression: str, timeout: float) -> bool:
    """Whether ``expression`` became true in the page within ``timeout`` seconds."""
    try:
        wait_until(pg, expression, timeout)
    except TimeoutError:
        return False
    return True


def check_page(context, path: Path, shots: Path | None = None) -> PageReport:
    """Open ``path`` in a new page of ``context`` and report (module docstring)."""
    report = PageReport(path.name)
    pg, net = new_page(context, OFFLINE)
    report.blocked, report.console = net.blocked, console_of(pg)
    try:
        pg.goto(path.as_uri())
        if not _drawn(pg, CHARTS_DRAWN, 120):
            report.errors.append("the charts were not drawn within 120 s")
            return report
        state = pg.evaluate("window.winvizCharts")
        report.charts = state["charts"]
        report.errors += state["errors"]
        report.explorers = pg.locator("div.winviz-explorer").count()
        for i in range(report.explorers):
            ex = f"document.querySelectorAll('div.winviz-explorer')[{i}]"
            if not _drawn(pg, f"{ex}.dataset.state === 'ready'", 60):
                report.errors.append(f"explorer {i} did not draw its first run")
                continue
            before = pg.evaluate(f"[{ex}.dataset.run, {ex}.innerHTML]")
            if pg.evaluate(_MOVE, i) < 0:
                continue  # every control is fixed: nothing to switch
            moved = f"{ex}.dataset.state === 'ready' && {ex}.dataset.run !== '{before[0]}'"
            if not _drawn(pg, moved, 60):
                report.errors.append(f"explorer {i}: moving a control drew no other run")
            elif pg.evaluate(f"{ex}.innerHTML") == before[1]:
                report.errors.append(f"explorer {i}: another run, but the same marks")
            else:
                report.explorers_switched += 1
        if shots is not None:
            pg.screenshot(path=str(shots / f"{path.stem}.png"), full_page=True)
    finally:
        pg.close()
    return report


def check_site(folder: Path, chromium_exe: str, shots: Path | None = None) -> list[PageReport]:
    """``check_page`` for every lesson page of ``folder`` (relative or absolute) in one
    Chromium."""
    folder = Path(folder).resolve()
    with chromium(chromium_exe) as context:
        return [check_page(context, p, shots) for p in sorted(folder.glob("[0-9][0-9]_*.html"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.browser.site_check")
    parser.add_argument("folder", type=Path, help="a make lessons output folder")
    parser.add_argument("--shots", type=Path, help="save a full-page screenshot of each page")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    reports = check_site(args.folder, args.chromium, args.shots)
    for r in reports:
        print(r.line())
    if not reports:
        print(f"no lesson page in {args.folder}")
    return 0 if reports and all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
