"""Per-world random streams for the vector environments' resets (lockstep.episodes).

Gymnasium seeds each sub-environment of a vector environment on its own: reset(seed=[s0, s1, ...])
seeds sub-environment i with s_i, and reset(seed=s) means [s, s+1, ..., s+n-1] (SyncVectorEnv).
Here world i's reset noise and randomization in its k-th episode since it was seeded are drawn from
a counter-based stream keyed by (s_i, k) alone: a start depends on its world's seed and episode,
not on the other worlds' seeds, the number of worlds or which other worlds reset at the same time.

The stream is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
OOPSLA 2014; the same mixing function as the studies' draws, host/study/study_worlds.cpp) started
at a key hashed from (seed, episode), computed for every resetting world at once with NumPy.
"""
from __future__ import annotations

import math

import numpy as np

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_EPISODE = np.uint64(0x632BE59BD9B4E019)    # spreads episode counts before they are mixed in
_RANDOMIZE = np.uint64(0xD1B54A32D192ED03)  # a key of its own for the randomization's draws
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function of x + gamma, element by element (uint64, wrapping)."""
    z = np.asarray(x, dtype=np.uint64) + _GAMMA
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def seeds_of(seed, n: int) -> np.ndarray:
    """Gymnasium's seeds of n sub-environments as uint64 [n]: an int s gives s, s+1, ..., s+n-1; a
    sequence gives one per sub-environment (None entries: a fresh random seed, as Gymnasium's
    seeding.np_random(None)). Seeds are integers in [0, 2**64)."""
    if isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) != n:
            raise ValueError(f"seed: a list of {n} seeds (one per environment), not {len(seed)}")
        values = list(seed)
    else:
        values = [_integer(seed) + i for i in range(n)]
    fresh = np.random.SeedSequence().generate_state(n, np.uint64)
    out = np.empty(n, dtype=np.uint64)
    for i, s in enumerate(values):
        if s is None:
            out[i] = fresh[i]
            continue
        s = _integer(s)
        if not 0 <= s < 2**64:
            raise ValueError(f"seed {s} (of environment {i}) must be in [0, 2**64)")
        out[i] = s
    return out


def _integer(s) -> int:
    if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
        raise TypeError(f"seed must be an int, a list of ints (or None) or None, not {type(s).__name__}")
    return int(s)


def episode_keys(seeds: np.ndarray, episodes: np.ndarray) -> np.ndarray:
    """The key of each world's stream in its episode: a hash of (seed, episode) [k] uint64 (array
    arithmetic on uint64 wraps, without a warning)."""
    return mix(mix(seeds) ^ (np.asarray(episodes, dtype=np.uint64) * _EPISODE))


def randomization_indices(keys: np.ndarray) -> list:
    """The counters at which the studies' generator (lockstep._ext.draw_variations) draws each world's
    randomized parameters: 63-bit hashes of its episode key, as Python ints."""
    return (mix(keys ^ _RANDOMIZE) >> np.uint64(1)).astype(np.int64).tolist()


class WorldStreams:
    """Random numbers for k worlds at once: every draw has shape (k, ...) and row i comes from world
    i's own stream (its key), so a world's numbers do not depend on the others'. It offers the part
    of numpy.random.Generator's interface the environments' reset noise uses."""

    def __init__(self, keys: np.ndarray):
        self.keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
        self._drawn = 0  # numbers drawn so far from each stream

    def _bits(self, size) -> np.ndarray:
        size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        if not size or size[0] != self.keys.size:
            raise ValueError(f"draws for {self.keys.size} worlds have shape ({self.keys.size}, ...), not {size}")
        per_world = math.prod(size[1:])
        counters = np.arange(self._drawn + 1, self._drawn + per_world + 1, dtype=np.uint64)
        self._drawn += per_world
        state = self.keys[:, None] + counters * _GAMMA  # arrays of uint64 wrap without a warning
        z = (state ^ (state >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
        return (z ^ (z >> _S31)).reshape(size)

    def random(self, size) -> np.ndarray:
        """Uniform in (0, 1), float64: 53 bits, centred in their interval (never 0 or 1)."""
        return ((self._bits(size) >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 9007199254740992.0)

    def uniform(self, low=0.0, high=1.0, size=None) -> np.ndarray:
        return low + (high - low) * self.random(size)

    def standard_normal(self, size) -> np.ndarray:
        """Box-Muller from two uniform draws per number (drawn as one block of twice the size)."""
        size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        u = self.random((size[0], 2 * math.prod(size[1:])))
        half = u.shape[1] // 2
        return (np.sqrt(-2.0 * np.log(u[:, :half])) * np.cos(2.0 * np.pi * u[:, half:])).reshape(size)

    def normal(self, loc=0.0, scale=1.0, size=None) -> np.ndarray:
        return loc + scale * self.standard_normal(size)
