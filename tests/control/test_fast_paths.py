"""The law's per-cycle shortcuts compute the same bits as the plain NumPy they replace.

The impedance law runs 50 times per env step in sim and at 500-1000 Hz on a real arm, so
its quaternion helpers work on Python floats, it clips with np.minimum/np.maximum and
compares arrays without np.array_equal. A changed bit would change every seeded rollout
(and a learning test's curve), so each shortcut is checked here against the NumPy
expression it stands for, on ordinary, tiny, huge, zero and non-finite inputs.
"""

import numpy as np
import pytest

from robot_rl.control import transforms as T
from robot_rl.control.impedance import _clip
from robot_rl.control.slew import same

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, 1e300, -1e300]


def _vectors(n, count, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        v = rng.normal(size=n) * rng.choice([1e-12, 1e-3, 1.0, 10.0, 1e3])
        if rng.random() < 0.2:
            v[rng.integers(n)] = rng.choice(SPECIALS)
        yield v


def _same_bits(a, b):
    """Equal bytes; a NaN only has to be a NaN in the same place (its sign bit carries nothing)."""
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(a)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(nan, np.isnan(b)) and \
        a[~nan].tobytes() == b[~nan].tobytes()


def _numpy_scalars(q):
    """The same numbers as NumPy float64 scalars: the helpers' general path, NumPy's arithmetic."""
    return [np.float64(x) for x in q]


def test_quaternion_products_and_conjugates_match_numpy_scalar_arithmetic():
    pairs = zip(_vectors(4, 3000, seed=1), _vectors(4, 3000, seed=2))
    for a, b in pairs:
        with np.errstate(all="ignore"):  # NumPy scalars warn on overflow; Python floats do not
            assert _same_bits(T.quat_mul(a, b), T.quat_mul(_numpy_scalars(a), _numpy_scalars(b))), (a, b)
            assert _same_bits(T.quat_conj(a), T.quat_conj(_numpy_scalars(a))), a


def test_float32_and_mixed_inputs_keep_numpy_s_own_arithmetic():
    a = np.array([0.1, 0.2, 0.3, 0.9], dtype=np.float32)
    b = np.array([0.7, -0.1, 0.2, 0.4], dtype=np.float32)
    assert T.quat_mul(a, b).dtype == np.float32  # float32 stays float32, as before
    assert _same_bits(T.quat_mul(a, b.astype(np.float64)), T.quat_mul(list(a), list(b.astype(np.float64))))


def test_rotation_vectors_match_the_numpy_norm_formula():
    def reference(q):
        q = np.asarray(q, dtype=np.float64)
        q = -q if q[0] < 0 else q
        s = np.linalg.norm(q[1:])
        return 2.0 * q[1:] if s < 1e-9 else q[1:] / s * (2.0 * np.arctan2(s, q[0]))

    with np.errstate(all="ignore"):
        for q in _vectors(4, 3000, seed=3):
            assert _same_bits(T.quat_to_rotvec(q), reference(q)), q


def test_matrix_to_quaternion_matches_indexing_the_numpy_matrix():
    def reference(m):
        tr = m[0, 0] + m[1, 1] + m[2, 2]
        if tr > 0:
            s = np.sqrt(tr + 1.0) * 2
            q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
        elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
            s = np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
            q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
        elif m[1, 1] > m[2, 2]:
            s = np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2
            q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
        else:
            s = np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2
            q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
        q = np.array(q)
        return q / np.linalg.norm(q)

    rotations = (T.quat_to_mat(q) for q in _vectors(4, 2000, seed=4) if np.all(np.isfinite(q)) and
                 1e-6 < np.linalg.norm(q) < 1e100)
    with np.errstate(all="ignore"):
        for m in [*rotations, *(v.reshape(3, 3) for v in _vectors(9, 2000, seed=5))]:
            assert _same_bits(T.mat_to_quat(m), reference(m)), m


@pytest.mark.parametrize("n", [3, 6, 7])
def test_clip_is_np_clip_bit_for_bit(n):
    rng = np.random.default_rng(n)
    for x in _vectors(n, 3000, seed=6):
        limit = np.abs(rng.normal(size=n)) * 10
        assert np.asarray(_clip(x, -limit, limit)).tobytes() == np.clip(x, -limit, limit).tobytes(), x
        assert np.asarray(_clip(x, -0.5, 0.5)).tobytes() == np.clip(x, -0.5, 0.5).tobytes(), x


def test_same_is_array_equal():
    a = np.array([0.1, 0.2, 0.3])
    cases = [(a, a.copy()), (a, a + 1e-16), (a, a[:2]), (np.array([np.nan]), np.array([np.nan])),
             (np.array([0.0]), np.array([-0.0])), (None, None), (a, None), (None, a)]
    for x, y in cases:
        assert same(x, y) == bool(np.array_equal(x, y)), (x, y)
