"""Retrying a model request that failed before any output: the policy and two pure functions."""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx

__all__ = ["RetryPolicy", "is_retryable", "retry_after_of", "retry_delay"]

_RNG = random.Random()


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_attempts`` counts the first try: ``RetryPolicy(max_attempts=1)`` never retries.

    Delays grow exponentially from ``base_delay`` with jitter, capped at ``max_delay``. A
    ``Retry-After`` the provider sent is honoured; one longer than ``max_delay`` is not waited
    for (the error goes to the host, which can tell the person when to try again).
    """

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy delays cannot be negative")


def is_retryable(error: BaseException) -> bool:
    """Whether a failure before any output is worth another try."""
    flag = getattr(error, "retryable", None)
    if isinstance(flag, bool):
        return flag
    return isinstance(error, httpx.TransportError | ConnectionError | TimeoutError)


def retry_after_of(error: BaseException) -> float | None:
    value = getattr(error, "retry_after", None)
    if isinstance(value, int | float) and value >= 0:
        return float(value)
    return None


def retry_delay(
    policy: RetryPolicy,
    attempt: int,
    retry_after: float | None,
    *,
    rng: random.Random | None = None,
) -> float | None:
    """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 1), or ``None``.

    ``None`` means do not retry: the attempts are used up, or the provider asked for a wait
    longer than the policy allows.
    """
    if attempt >= policy.max_attempts:
        return None
    if retry_after is not None:
        return retry_after if retry_after <= policy.max_delay else None
    backoff = min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1))
    jitter = (rng or _RNG).uniform(0.75, 1.0)
    return float(backoff * jitter)
