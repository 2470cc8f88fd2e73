"""An answer to a why-question: the question, its claims (``winviz.why.claims``) and a table;
its sentence is rendered from the claims only (``winviz.why.render``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from winviz.why.claims import Claim
from winviz.why.render import render

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Answer:
    """A question's ``claims``, the ``sentence`` rendered from them only, and a ``table``."""

    question: str
    claims: tuple[Claim, ...]
    table: pd.DataFrame

    @property
    def sentence(self) -> str:
        return render(self.claims)

    def __repr__(self) -> str:
        body = "" if self.table.empty else "\n\n" + self.table.to_string(index=False)
        return f"{self.question}\n{self.sentence}{body}"
