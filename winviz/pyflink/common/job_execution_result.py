"""What ``env.execute()`` returns: winviz's ``JobExecutionResult`` (outputs, metrics, the
trace — so ``wv.why_fired`` and every chart work on it) with PyFlink's getters."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import winviz as wv


@dataclass
class JobExecutionResult(wv.JobExecutionResult):
    """PyFlink's ``JobExecutionResult`` and winviz's at once."""

    net_runtime: int = 0
    """The run's simulated processing time at its end (ms)."""

    @classmethod
    def of(cls, result: wv.JobExecutionResult, net_runtime: int) -> JobExecutionResult:
        own = {f.name: getattr(result, f.name) for f in fields(wv.JobExecutionResult)}
        return cls(**own, net_runtime=net_runtime)

    def get_job_id(self) -> str:
        """winviz runs have no JobID; the job's name stands for it."""
        return self.job_name

    def get_job_execution_result(self) -> JobExecutionResult:
        return self

    def get_net_runtime(self) -> int:
        return self.net_runtime

    def get_accumulator_result(self, accumulator_name: str) -> Any:
        return None

    def get_all_accumulator_results(self) -> dict[str, Any]:
        return {}

    def is_job_execution_result(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"JobExecutionResult({self.job_name!r})"
