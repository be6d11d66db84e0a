"""The main job's closing table: every step with its time, then the total."""

from __future__ import annotations

from collections.abc import Sequence


def summary_table(steps: Sequence[tuple[str, float]]) -> list[str]:
    """Lines of a plain-text table (no colour codes): one row per ``(step, seconds)`` in run
    order, then the total; step titles are cut to keep each line under 100 characters."""
    width = min(max((len(title) for title, _ in steps), default=4), 80)
    rule = f"{'-' * width}  {'-' * 8}"
    lines = [f"{'step':<{width}}  {'seconds':>8}", rule]
    for title, seconds in steps:
        shown = title if len(title) <= width else title[: width - 1] + "…"
        lines.append(f"{shown:<{width}}  {seconds:>8.1f}")
    lines += [rule, f"{'total':<{width}}  {sum(s for _, s in steps):>8.1f}"]
    return lines
