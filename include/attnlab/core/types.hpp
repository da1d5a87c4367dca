#pragma once
// Scalar types and Eigen aliases shared by every layer.
#include <Eigen/Dense>
#include <cstdint>

namespace attnlab {

using Index = Eigen::Index;

// Row-major so that a token (a row of X, U = XQ or V = XK) is contiguous.
template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using RowVector = Eigen::Matrix<T, 1, Eigen::Dynamic>;

using MatrixD = Matrix<double>;
using VectorD = Vector<double>;

}  // namespace attnlab
