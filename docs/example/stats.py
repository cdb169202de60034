"""A small module to try coderefine on: see the README's first steps."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of ``values``; raises ValueError when there are none."""
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    """The middle value of ``values`` (the mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
