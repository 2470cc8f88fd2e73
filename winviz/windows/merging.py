"""Flink's ``MergingWindowSet``: per key, a mapping *window → state window* (the namespace its state
lives in, one of the windows that merged), so merging never moves state: the merge function folds
the other state windows into the kept one. ``persist`` / ``restore`` via keyed state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from winviz.errors import IllegalStateError
from winviz.windows.window import TimeWindow, java_time_window_hash

MergeFunction = Callable[[TimeWindow, list[TimeWindow], TimeWindow, list[TimeWindow]], None]


def java_hash_set_order(windows: list[TimeWindow]) -> list[TimeWindow]:
    """The order in which a Java ``HashSet`` (default capacity, insertion order ``windows``)
    iterates its ``TimeWindow``s: by bucket, then insertion order within a bucket."""
    capacity = 16
    while len(windows) > capacity * 3 // 4:
        capacity *= 2

    def bucket(w: TimeWindow) -> int:
        h = java_time_window_hash(w) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(windows, key=bucket)  # sorted() is stable: insertion order within a bucket


class MergingWindowSet:
    """The per-key set of in-flight merging windows and their state windows."""

    def __init__(
        self, assigner: Any, persisted: list[tuple[TimeWindow, TimeWindow]] | None = None
    ) -> None:
        self.assigner = assigner
        self.mapping: dict[TimeWindow, TimeWindow] = dict(persisted or [])
        self._initial = dict(self.mapping)

    def persist(self) -> list[tuple[TimeWindow, TimeWindow]] | None:
        """The mapping to write back to state when it changed since the last persist."""
        if self.mapping != self._initial:
            self._initial = dict(self.mapping)
            return list(self.mapping.items())
        return None

    def get_state_window(self, window: TimeWindow) -> TimeWindow | None:
        return self.mapping.get(window)

    def retire_window(self, window: TimeWindow) -> None:
        """Remove a window that was cleaned up or turned out to be late."""
        if self.mapping.pop(window, None) is None:
            raise IllegalStateError(f"Window {window} is not in in-flight window set.")

    def add_window(self, new_window: TimeWindow, merge_function: MergeFunction) -> TimeWindow:
        """Add a window, merging it with the windows it overlaps or touches; returns the window it
        ended up in. Each merge that changes something calls ``merge_function(merge_result,
        merged_windows, state_window_result, merged_state_windows)``."""
        windows = [*self.mapping, new_window]
        merge_results: list[tuple[TimeWindow, list[TimeWindow]]] = []
        self.assigner.merge_windows(
            windows, lambda to_merge, result: merge_results.append((result, list(to_merge)))
        )

        result_window = new_window
        merged_new_window = False
        for merge_result, merged in merge_results:
            merged = java_hash_set_order(merged)
            if new_window in merged:
                merged.remove(new_window)
                merged_new_window = True
                result_window = merge_result
            # Flink keeps the state window of the first remaining merged window (Java HashSet
            # iteration order) and folds the others into it.
            merged_state_window = self.mapping.get(merged[0])
            merged_state_windows = []
            for window in merged:
                state_window = self.mapping.pop(window, None)
                if state_window is not None:
                    merged_state_windows.append(state_window)
            self.mapping[merge_result] = merged_state_window  # type: ignore[assignment]
            if merged_state_window in merged_state_windows:
                merged_state_windows.remove(merged_state_window)
            # a "merge" of a window with itself (e.g. adding an existing window) changes nothing
            if not (merge_result in merged and len(merged) == 1):
                merge_function(
                    merge_result, merged, self.mapping[merge_result], merged_state_windows
                )

        if not merge_results or (result_window == new_window and not merged_new_window):
            self.mapping[result_window] = result_window
        return result_window

    def __repr__(self) -> str:
        return f"MergingWindowSet({self.mapping})"
