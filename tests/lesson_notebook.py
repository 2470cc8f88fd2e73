"""A lesson notebook written for a test: the cells given and the ``python3`` kernel, as the
lessons in ``notebooks/`` name it, so that ``make lessons``' builder (``winviz.viz.lessons``)
and JupyterLab run it as a lesson."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import nbformat

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def write_lesson(path: Path, cells: Iterable[nbformat.NotebookNode]) -> Path:
    """Write the notebook of ``cells`` to ``path``; returns ``path``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nbformat.write(nb, path)
    return path
