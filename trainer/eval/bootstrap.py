"""Percentile bootstrap intervals for ratio metrics over clustered samples.

Every evaluation metric is a ratio sum(num) / sum(den) where num and den are counted per
problem (a cluster holding all samples of that problem, turn by turn). Resampling problems
with replacement keeps the samples of one problem together, which is right when several
samples of a problem are correlated. A paired comparison resamples the *same* problems for
both models and takes the difference of the two ratios in each resample.

Plain numpy; seeded, so an interval is reproducible from the same counts. The number of
resamples, the confidence and the seed default to the `eval.bootstrap` settings section's
(`assistant.settings.BootstrapSection`, the one place they are stated).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, TypedDict, Unpack

import numpy as np

from assistant.settings import BootstrapSection

DEFAULT = BootstrapSection()


class Resampling(TypedDict, total=False):
    """The keyword options of every interval: the fields of `BootstrapSection` (`DEFAULT`'s
    where left out), e.g. `**settings.bootstrap.model_dump()`."""

    resamples: int
    confidence: float
    seed: int


class _Plain:
    """A dataclass of plain values (numbers and None), so its dict is its fields'."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass
class Estimate(_Plain):
    """A ratio with its interval; `value` is None when nothing was counted (den = 0)."""

    value: float | None
    lo: float | None
    hi: float | None
    num: int
    den: int

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Estimate":
        return cls(**{k: data.get(k) for k in ("value", "lo", "hi", "num", "den")})


@dataclass
class Delta(_Plain):
    """B - A of a paired ratio with its paired interval; None values when undefined."""

    a: float | None
    b: float | None
    delta: float | None
    lo: float | None
    hi: float | None
    den_a: int
    den_b: int


def _r(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 4)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Column sums' ratio along axis -2; nan where the denominator is 0."""
    n, d = num.sum(axis=-2), den.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d > 0, n / np.maximum(d, 1), np.nan)


def _resampled_bounds(
    stat: Callable[[np.ndarray], np.ndarray], clusters: int, options: Resampling
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds per column of `stat(idx)`: each row of idx draws `clusters` clusters
    with replacement, the same draws for every column (and for both sides of a pair)."""
    boot = BootstrapSection(**options)
    idx = np.random.default_rng(boot.seed).integers(0, clusters, size=(boot.resamples, clusters))
    return _bounds(stat(idx), boot.confidence)


def _bounds(stats: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds per column of (resamples, K), ignoring undefined resamples."""
    alpha = (1.0 - confidence) / 2.0
    out_lo, out_hi = np.full(stats.shape[1], np.nan), np.full(stats.shape[1], np.nan)
    for k in range(stats.shape[1]):
        col = stats[:, k][np.isfinite(stats[:, k])]
        if col.size:
            out_lo[k], out_hi[k] = np.quantile(col, [alpha, 1.0 - alpha])
    return out_lo, out_hi


def ratio_intervals(num: np.ndarray, den: np.ndarray, **options: Unpack[Resampling]) -> list[Estimate]:
    """One Estimate per column of the (clusters, K) count matrices."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    value = _ratio(num, den)
    if num.shape[0] == 0:
        return [Estimate(None, None, None, 0, 0) for _ in range(num.shape[1])]
    lo, hi = _resampled_bounds(lambda idx: _ratio(num[idx], den[idx]), num.shape[0], options)
    return [
        Estimate(_r(value[k]), _r(lo[k]), _r(hi[k]), int(num[:, k].sum()), int(den[:, k].sum()))
        for k in range(num.shape[1])
    ]


def paired_intervals(
    num_a: np.ndarray,
    den_a: np.ndarray,
    num_b: np.ndarray,
    den_b: np.ndarray,
    **options: Unpack[Resampling],
) -> list[Delta]:
    """B - A per column, the same clusters resampled for both; rows must be the same problems."""
    arrays = [np.asarray(x, dtype=float) for x in (num_a, den_a, num_b, den_b)]
    if len({x.shape for x in arrays}) != 1:
        raise ValueError("paired counts must have the same shape (same problems, same turns)")
    na, da, nb, db = arrays
    a, b = _ratio(na, da), _ratio(nb, db)
    if na.shape[0] == 0:
        return [Delta(None, None, None, None, None, 0, 0) for _ in range(na.shape[1])]
    lo, hi = _resampled_bounds(lambda idx: _ratio(nb[idx], db[idx]) - _ratio(na[idx], da[idx]), na.shape[0], options)
    return [
        Delta(_r(a[k]), _r(b[k]), _r(b[k] - a[k]), _r(lo[k]), _r(hi[k]), int(da[:, k].sum()), int(db[:, k].sum()))
        for k in range(na.shape[1])
    ]
