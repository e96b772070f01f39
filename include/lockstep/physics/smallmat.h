// Lockstep: small dense symmetric solves (n <= 6) for the joint-space inertias of the sweep.
#pragma once

#include "lockstep/physics/math.h"

namespace lockstep {

// Inverts the symmetric positive-definite n x n matrix A (row-major, n <= 6) into Ainv by
// Cholesky factorization (n divisions). Returns false (per lane), leaving Ainv unspecified there,
// when a pivot is not positive relative to the largest diagonal entry (a singular or indefinite
// joint inertia). ~n^3 flops.
template <class T>
LOCKSTEP_HD MaskOf<T> invertSymmetricPositiveDefinite(const T* A, int n, T* Ainv) {
  if (n == 1) {
    const MaskOf<T> ok = (A[0] > T(0)) & isFiniteT(A[0]);
    if (!anyLane(ok)) return ok;
    Ainv[0] = T(1) / A[0];
    return ok;
  }
  T L[36], invDiag[6];
  T maxDiag = T(0);
  for (int i = 0; i < n; ++i) maxDiag = selectT(A[i * n + i] > maxDiag, A[i * n + i], maxDiag);
  const T tiny = maxDiag * byPrecision<T>(1e-6, 1e-13);
  MaskOf<T> ok = MaskOf<T>(true);
  for (int j = 0; j < n; ++j) {
    T d = A[j * n + j];
    for (int k = 0; k < j; ++k) d -= L[j * 6 + k] * L[j * 6 + k];
    ok = ok & (d > tiny) & isFiniteT(d);
    if (!anyLane(ok)) return ok;
    const T ljj = sqrtT(d);
    L[j * 6 + j] = ljj;
    invDiag[j] = T(1) / ljj;
    for (int i = j + 1; i < n; ++i) {
      T s = A[i * n + j];
      for (int k = 0; k < j; ++k) s -= L[i * 6 + k] * L[j * 6 + k];
      L[i * 6 + j] = s * invDiag[j];
    }
  }
  // Ainv = L^-T L^-1, column by column: solve L y = e_c, then L^T x = y.
  for (int c = 0; c < n; ++c) {
    T y[6];
    for (int i = 0; i < n; ++i) {
      T s = (i == c) ? T(1) : T(0);
      for (int k = 0; k < i; ++k) s -= L[i * 6 + k] * y[k];
      y[i] = s * invDiag[i];
    }
    for (int i = n - 1; i >= 0; --i) {
      T s = y[i];
      for (int k = i + 1; k < n; ++k) s -= L[k * 6 + i] * Ainv[k * n + c];
      Ainv[i * n + c] = s * invDiag[i];
    }
  }
  return ok;
}

}  // namespace lockstep
