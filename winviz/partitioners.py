"""Stream partitioners (Flink's ``StreamPartitioner``s): which downstream subtask a record goes
to. ``forward``: subtask ``i`` to ``i`` (equal parallelisms only); ``RebalancePartitioner``:
round-robin, winviz's subtask ``i`` starting at channel ``i mod n`` (Flink: at random);
``KeyGroupStreamPartitioner``: ``key_by``, by key group with the *downstream* max parallelism.
Without one named, forward for equal parallelisms, else rebalance (``default_partitioner``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from winviz.errors import InputError
from winviz.keygroups import assign_to_key_group, operator_index_for_key_group

FORWARD = "forward"
REBALANCE = "rebalance"
HASH = "hash"


def default_partitioner(upstream_parallelism: int, downstream_parallelism: int) -> str:
    """Flink's choice when none is given: forward for equal parallelisms, else rebalance."""
    return FORWARD if upstream_parallelism == downstream_parallelism else REBALANCE


def check_forward(upstream: str, up: int, downstream: str, down: int) -> None:
    """Flink's ``StreamGraph`` check for a forward edge (same message, same rule)."""
    if up != down:
        raise InputError(
            "Forward partitioning does not allow change of parallelism. Upstream operation: "
            f"{upstream} parallelism: {up}, downstream operation: {downstream} parallelism: "
            f"{down} You must use another partitioning strategy, such as broadcast, "
            "rebalance, shuffle or global.",
            field="parallelism",
            value=down,
            expected=f"{up} (the upstream's parallelism) for a forward exchange",
        )


@dataclass
class RebalancePartitioner:
    """Round-robin over ``num_channels`` channels, starting at ``first`` (see the module)."""

    num_channels: int
    first: int = 0
    next_channel: int = field(init=False)

    def __post_init__(self) -> None:
        self.next_channel = (self.first - 1) % self.num_channels  # Flink's nextChannelToSendTo

    def select_channel(self, value: Any) -> int:
        self.next_channel = (self.next_channel + 1) % self.num_channels
        return self.next_channel

    def snapshot(self) -> int:
        return self.next_channel

    def restore(self, snap: int) -> None:
        self.next_channel = snap


@dataclass
class KeyGroupStreamPartitioner:
    """``key_by``: key → key group (downstream ``max_parallelism``) → subtask, cached per internal
    key (``1`` and ``True`` hash apart, as in Java)."""

    key_selector: Callable[[Any], Any]
    num_channels: int
    max_parallelism: int
    _cache: dict[Any, tuple[int, int]] = field(default_factory=dict, repr=False)

    def route(self, key: Any, internal: Any = None) -> tuple[int, int]:
        """``(key_group, channel)`` of a key, cached by ``internal`` (its internal key) when given,
        else only for a str or int key."""
        cached = internal is not None or key.__class__ is str or key.__class__ is int
        cache_key = key if internal is None else internal
        hit = self._cache.get(cache_key) if cached else None
        if hit is None:
            group = assign_to_key_group(key, self.max_parallelism)
            channel = operator_index_for_key_group(self.max_parallelism, self.num_channels, group)
            hit = (group, channel)
            if cached:
                self._cache[cache_key] = hit
        return hit
