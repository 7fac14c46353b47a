"""Who is calling: bearer API keys, compared in constant time, and a per-caller token bucket."""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence


def _digest(value: str) -> bytes:
    # Hashing first gives equal-length inputs, so the comparison time says nothing about a key's length.
    return hashlib.sha256(value.encode("utf-8")).digest()


class KeyChecker:
    """Checks ``Authorization: Bearer <key>`` against the configured keys.

    Every key is compared, in constant time, whatever matched, so timing does
    not tell how much of a guess was right or which key it was close to.
    """

    def __init__(self, keys: Sequence[str]) -> None:
        self._digests = [_digest(key) for key in keys]

    def identify(self, authorization: str | None) -> str | None:
        """The caller's id (``key-N``, never the key) if the header holds a configured key, else ``None``."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        given = _digest(token.strip())
        found = None
        for number, digest in enumerate(self._digests, start=1):
            if hmac.compare_digest(given, digest) and found is None:
                found = f"key-{number}"
        return found


class RateLimiter:
    """A token bucket per caller: ``burst`` requests at once, refilled at ``per_minute``.

    Kept in memory, so limits are per server process. At most ``max_callers``
    buckets are kept; the least recently seen caller is forgotten first (it
    comes back with a full bucket, which errs on the side of serving).
    """

    def __init__(
        self,
        per_minute: float,
        burst: int,
        *,
        max_callers: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.max_callers = max_callers
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # caller -> (tokens, when)

    @property
    def enabled(self) -> bool:
        """False when the rate is 0: every request passes."""
        return self.rate > 0

    def take(self, caller: str, n: float = 1.0) -> float:
        """Take ``n`` tokens for ``caller`` (at most a full bucket): 0 if the request may go ahead,
        else the seconds until it may (nothing is taken then)."""
        if not self.enabled:
            return 0.0
        n = min(n, self.burst)
        now = self.clock()
        tokens, then = self._buckets.pop(caller, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= n:
            tokens -= n
        else:
            wait = (n - tokens) / self.rate
        self._buckets[caller] = (tokens, now)
        while len(self._buckets) > self.max_callers:
            self._buckets.popitem(last=False)
        return wait

    def waiting(self, caller: str) -> float:
        """Seconds until ``caller`` has a token again (0 when it has one); takes nothing."""
        if not self.enabled or caller not in self._buckets:
            return 0.0
        tokens, then = self._buckets[caller]
        tokens = min(self.burst, tokens + (self.clock() - then) * self.rate)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate


def retry_after_header(wait_s: float) -> str:
    """``Retry-After`` in whole seconds, rounded up so a client that obeys it is served."""
    return str(max(1, math.ceil(wait_s)))
