#pragma once
/// @file
/// Typed n-dimensional arrays as the cache stores them: C order (last index fastest), shape given
/// outermost first, e.g. {N, 3} for N points. `ArrayView` borrows memory to write; `Array<T>` owns
/// what a read returns.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

namespace datadyn::io {

/// Element types a cache dataset may hold.
enum class ElementType { Int8, UInt8, Int32, Int64, Float32, Float64 };

/// Name of an element type as the docs and error messages spell it ("float32", "int64", ...).
const char* element_type_name(ElementType t);

template <class T>
constexpr ElementType element_type_of() {
  if constexpr (std::is_same_v<T, std::int8_t>)
    return ElementType::Int8;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return ElementType::UInt8;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return ElementType::Int32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return ElementType::Int64;
  else if constexpr (std::is_same_v<T, float>)
    return ElementType::Float32;
  else if constexpr (std::is_same_v<T, double>)
    return ElementType::Float64;
  else
    static_assert(!sizeof(T), "unsupported element type");
}

using Shape = std::vector<std::size_t>;

/// Product of the extents (1 for a scalar shape {}).
std::size_t element_count(const Shape& shape);
/// "[10, 225, 3]".
std::string shape_string(const Shape& shape);

/// Borrowed, read-only view of contiguous C-order data. The memory must outlive the call it is
/// passed to.
struct ArrayView {
  const void* data = nullptr;
  ElementType type = ElementType::Float64;
  Shape shape;
};

/// View of a std::vector as an array of the given shape (default: 1-D).
template <class T>
ArrayView view(const std::vector<T>& v, Shape shape = {}) {
  if (shape.empty()) shape = {v.size()};
  return {v.data(), element_type_of<T>(), std::move(shape)};
}

/// View of an Eigen vector ({n}) or row-major matrix ({rows, cols}). Column-major matrices with
/// more than one column are rejected at compile time: their memory is not C order.
template <class Derived>
ArrayView view(const Eigen::PlainObjectBase<Derived>& m) {
  using Scalar = typename Derived::Scalar;
  constexpr bool is_vector = Derived::ColsAtCompileTime == 1 || Derived::RowsAtCompileTime == 1;
  static_assert(is_vector || Derived::IsRowMajor,
                "cache arrays are C order: use a row-major Eigen matrix");
  if constexpr (is_vector) {
    return {m.data(), element_type_of<Scalar>(), {static_cast<std::size_t>(m.size())}};
  } else {
    return {m.data(),
            element_type_of<Scalar>(),
            {static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols())}};
  }
}

/// An owned array read from a cache.
template <class T>
struct Array {
  Shape shape;
  std::vector<T> data;

  std::size_t size() const { return data.size(); }
  /// Extent of axis `axis` (outermost first).
  std::size_t dim(std::size_t axis) const { return shape.at(axis); }
  /// The array as a row-major matrix: {rows, cols} for 2-D, {n, 1} for 1-D; a higher-rank array is
  /// flattened to {shape[0], product of the rest}.
  Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> matrix() const {
    const Eigen::Index rows = shape.empty() ? 1 : static_cast<Eigen::Index>(shape[0]);
    const Eigen::Index cols = rows == 0 ? 0 : static_cast<Eigen::Index>(data.size()) / rows;
    return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        data.data(), rows, cols);
  }
};

}  // namespace datadyn::io
