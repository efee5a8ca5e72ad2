#include "flesh/spring_integrator.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/check.hpp"
#include "core/parallel.hpp"

namespace datadyn::flesh {
namespace {

/// Coefficients of the C1 cubic x̂(s) = ((q s + a) s + m0) s + p0 on the interval from x0 to x1
/// for coordinate k (section 4: central-difference tangents, one-sided where prev or next is
/// null). The per-coordinate twin of hermite_coefficients below, for the hot loops of apply.
struct ScalarCubic {
  double p0, m0, a, q;
};
inline ScalarCubic interval_cubic(const double* prev, const double* x0, const double* x1,
                                  const double* next, Eigen::Index k) {
  const double p0 = x0[k], p1 = x1[k];
  const double m0 = prev ? 0.5 * (p1 - prev[k]) : p1 - p0;
  const double m1 = next ? 0.5 * (next[k] - p0) : p1 - p0;
  return {p0, m0, -3.0 * p0 - 2.0 * m0 + 3.0 * p1 - m1, 2.0 * p0 + m0 - 2.0 * p1 + m1};
}

// ------------------------------------------------------------------------------------------------
// A forward-mode dual number with two derivative directions (ks, kd).
struct Dual {
  double v = 0.0;
  double d0 = 0.0, d1 = 0.0;
  Dual() = default;
  Dual(double value) : v(value) {}  // NOLINT: constants promote implicitly
  Dual(double value, double a, double b) : v(value), d0(a), d1(b) {}
};
inline Dual operator+(Dual a, Dual b) {
  return {a.v + b.v, a.d0 + b.d0, a.d1 + b.d1};
}
inline Dual operator-(Dual a, Dual b) {
  return {a.v - b.v, a.d0 - b.d0, a.d1 - b.d1};
}
inline Dual operator-(Dual a) {
  return {-a.v, -a.d0, -a.d1};
}
inline Dual operator*(Dual a, Dual b) {
  return {a.v * b.v, a.d0 * b.v + a.v * b.d0, a.d1 * b.v + a.v * b.d1};
}
inline Dual operator/(Dual a, Dual b) {
  const double inv = 1.0 / b.v, r = a.v * inv;
  return {r, (a.d0 - r * b.d0) * inv, (a.d1 - r * b.d1) * inv};
}
inline Dual exp(Dual a) {
  const double e = std::exp(a.v);
  return {e, e * a.d0, e * a.d1};
}
inline Dual expm1(Dual a) {
  const double e = std::exp(a.v);
  return {std::expm1(a.v), e * a.d0, e * a.d1};
}
inline Dual sqrt(Dual a) {
  const double s = std::sqrt(a.v), h = 0.5 / s;
  return {s, h * a.d0, h * a.d1};
}
inline Dual sin(Dual a) {
  const double c = std::cos(a.v);
  return {std::sin(a.v), c * a.d0, c * a.d1};
}
inline Dual cos(Dual a) {
  const double s = -std::sin(a.v);
  return {std::cos(a.v), s * a.d0, s * a.d1};
}
inline double value(double a) {
  return a;
}
inline double value(const Dual& a) {
  return a.v;
}

using std::cos;
using std::exp;
using std::expm1;
using std::sin;
using std::sqrt;

constexpr double kFactorial[] = {1.0,
                                 1.0,
                                 2.0,
                                 6.0,
                                 24.0,
                                 120.0,
                                 720.0,
                                 5040.0,
                                 40320.0,
                                 362880.0,
                                 3628800.0,
                                 39916800.0,
                                 479001600.0,
                                 6227020800.0,
                                 87178291200.0,
                                 1307674368000.0,
                                 20922789888000.0,
                                 355687428096000.0,
                                 6402373705728000.0,
                                 121645100408832000.0,
                                 2432902008176640000.0,
                                 51090942171709440000.0,
                                 1124000727777607680000.0,
                                 25852016738884976640000.0,
                                 620448401733239439360000.0,
                                 15511210043330985984000000.0,
                                 403291461126605635584000000.0,
                                 10888869450418352160768000000.0,
                                 304888344611713860501504000000.0,
                                 8841761993739701954543616000000.0,
                                 265252859812191058636308480000000.0,
                                 8222838654177922817725562880000000.0,
                                 263130836933693530167218012160000000.0,
                                 8683317618811886495518194401280000000.0,
                                 295232799039604140847618609643520000000.0,
                                 10333147966386144929666651337523200000000.0,
                                 371993326789901217467999448150835200000000.0,
                                 13763753091226345046315979581580902400000000.0};
constexpr int kMaxFactorial = 37;

// Σ_{k<terms} z^k / (2k + offset)! by Horner.
template <class T>
T even_series(const T& z, int offset, int terms) {
  T sum = 1.0 / kFactorial[2 * (terms - 1) + offset];
  for (int k = terms - 2; k >= 0; --k) sum = sum * z + 1.0 / kFactorial[2 * k + offset];
  return sum;
}

// φ_k(x) for real x <= 0 (k = 1, 2): series for |x| < 1/2, expm1 otherwise.
template <class T>
T phi_real(int k, const T& x) {
  if (std::abs(value(x)) < 0.5) {
    T sum = 1.0 / kFactorial[18 + k];
    for (int n = 17; n >= 0; --n) sum = sum * x + 1.0 / kFactorial[n + k];
    return sum;
  }
  if (k == 1) return expm1(x) / x;
  return (expm1(x) - x) / (x * x);
}

// What the interval map is built from: A = (e^a + e^b)/2, F_k = φ_k[a, b], and for the
// overdamped case the stable Φ11, Φ22.
template <class T>
struct MapParts {
  T A, F0, F1, F2;
  bool stable_diagonal = false;
  T phi11, phi22;
};

template <class T>
MapParts<T> map_parts(const T& ks, const T& kd, double tau) {
  MapParts<T> P;
  const T m = kd * (-0.5 * tau);
  const T r = ks * (tau * tau);
  const T z = m * m - r;
  const double zv = value(z), mv = value(m);
  if (std::abs(zv) < 1.0) {
    const T E = exp(m);
    P.A = E * even_series(z, 0, 16);
    if (std::abs(mv) < 2.0) {
      // φ_k[a, b] = Σ_{n>=1} h_{n-1}(a, b)/(n + k)!, h_n = p h_{n-1} - r h_{n-2} (complete
      // homogeneous symmetric polynomials of the roots, p = a + b, r = a b; |a|, |b| < 3).
      const T p = m * 2.0;
      T h_prev = 0.0, h = 1.0;
      T f0 = 0.0, f1 = 0.0, f2 = 0.0;
      for (int n = 1; n + 2 <= kMaxFactorial; ++n) {
        f0 = f0 + h * (1.0 / kFactorial[n]);
        f1 = f1 + h * (1.0 / kFactorial[n + 1]);
        f2 = f2 + h * (1.0 / kFactorial[n + 2]);
        const T next = p * h - r * h_prev;
        h_prev = h;
        h = next;
      }
      P.F0 = f0;
      P.F1 = f1;
      P.F2 = f2;
    } else {
      // Taylor coefficients c_n^(k) of φ_k about m (m <= -2): c^(0)_n = e^m/n!,
      // c^(k)_n = (c^(k-1)_n - c^(k)_{n-1})/m (from x φ_k = φ_{k-1} - 1/(k-1)!), stable since
      // |m| >= 2. Then φ_k[m + δ, m - δ] = Σ_j c^(k)_{2j+1} z^j.
      constexpr int kTerms = 14;
      T c1 = phi_real(1, m), c2 = phi_real(2, m);
      T f0 = 0.0, f1 = 0.0, f2 = 0.0, zj = 1.0;
      for (int n = 1; n <= 2 * kTerms - 1; ++n) {
        const T c0 = E * (1.0 / kFactorial[n]);
        c1 = (c0 - c1) / m;
        c2 = (c1 - c2) / m;
        if (n % 2 == 1) {
          f0 = f0 + c0 * zj;
          f1 = f1 + c1 * zj;
          f2 = f2 + c2 * zj;
          zj = zj * z;
        }
      }
      P.F0 = f0;
      P.F1 = f1;
      P.F2 = f2;
    }
  } else if (zv > 0.0) {
    // Overdamped: roots b = -λf tau = m - sqrt(z), a = -λs tau = r / b (no cancellation).
    const T b = m - sqrt(z);
    const T a = r / b;
    const T ea = exp(a), eb = exp(b), gap = a - b;
    P.A = (ea + eb) * 0.5;
    P.F0 = (ea - eb) / gap;
    P.F1 = (phi_real(1, a) - phi_real(1, b)) / gap;
    P.F2 = (phi_real(2, a) - phi_real(2, b)) / gap;
    P.stable_diagonal = true;
    P.phi11 = (a * eb - b * ea) / gap;
    P.phi22 = (a * ea - b * eb) / gap;
  } else {
    // Underdamped: roots m ± i w; φ_k[a, conj a] = Im φ_k(a) / w with w >= 1.
    const T w = sqrt(-z);
    const T E = exp(m), cw = cos(w), sw = sin(w);
    const T esw = E * sw, ecw = E * cw;
    const T mod2 = m * m + w * w;
    P.A = ecw;
    P.F0 = esw / w;
    P.F1 = (esw * m - (ecw - 1.0) * w) / (mod2 * w);
    P.F2 = ((esw - w) * (m * m - w * w) - m * w * (ecw - 1.0 - m) * 2.0) / (mod2 * mod2 * w);
  }
  return P;
}

template <class T>
void build_map(const T& ks, const T& kd, double tau, T& phi11, T& phi12, T& phi21, T& phi22, T& i1,
               T& j1) {
  const MapParts<T> P = map_parts(ks, kd, tau);
  const T half_kd_tau = kd * (0.5 * tau);
  phi11 = P.stable_diagonal ? P.phi11 : P.A + P.F0 * half_kd_tau;
  phi22 = P.stable_diagonal ? P.phi22 : P.A - P.F0 * half_kd_tau;
  phi12 = P.F0 * tau;
  phi21 = -(ks * tau) * P.F0;
  i1 = P.F1 * (tau * tau);
  j1 = P.F2 * (tau * tau * tau);
}

}  // namespace

IntervalMap interval_map(double ks, double kd, double tau) {
  DATADYN_CHECK(ks >= 0.0 && kd >= 0.0 && tau >= 0.0);
  IntervalMap M;
  build_map<double>(ks, kd, tau, M.phi11, M.phi12, M.phi21, M.phi22, M.i1, M.j1);
  return M;
}

IntervalMapGradient interval_map_gradient(double ks, double kd, double tau) {
  DATADYN_CHECK(ks >= 0.0 && kd >= 0.0 && tau >= 0.0);
  Dual p11, p12, p21, p22, i1, j1;
  build_map<Dual>(Dual(ks, 1.0, 0.0), Dual(kd, 0.0, 1.0), tau, p11, p12, p21, p22, i1, j1);
  IntervalMapGradient G;
  G.value = {p11.v, p12.v, p21.v, p22.v, i1.v, j1.v};
  G.d_ks = {p11.d0, p12.d0, p21.d0, p22.d0, i1.d0, j1.d0};
  G.d_kd = {p11.d1, p12.d1, p21.d1, p22.d1, i1.d1, j1.d1};
  return G;
}

HermiteCubic hermite_coefficients(const std::vector<Points3>& targets, std::size_t n,
                                  Eigen::Index vertex) {
  const std::size_t F = targets.size();
  DATADYN_CHECK(F >= 2 && n + 1 < F);
  const Eigen::Vector3d p0 = targets[n].row(vertex), p1 = targets[n + 1].row(vertex);
  const Eigen::Vector3d m0 =
      n == 0 ? Eigen::Vector3d(p1 - p0)
             : Eigen::Vector3d(0.5 * (p1 - Eigen::Vector3d(targets[n - 1].row(vertex))));
  const Eigen::Vector3d m1 =
      n + 2 < F ? Eigen::Vector3d(0.5 * (Eigen::Vector3d(targets[n + 2].row(vertex)) - p0))
                : Eigen::Vector3d(p1 - p0);
  HermiteCubic h;
  h.q = 2.0 * p0 + m0 - 2.0 * p1 + m1;
  h.a = -3.0 * p0 - 2.0 * m0 + 3.0 * p1 - m1;
  h.b = m0;
  h.c = p0;
  return h;
}

SpringStepper::SpringStepper(const Springs& springs, double dt, const SpringApplyOptions& options)
    : n_(springs.ks.size()),
      subframes_(options.subframes),
      amount_(options.amount),
      grain_(options.grain),
      alpha_scale_(2.0 / (dt * dt)),
      beta_scale_(6.0 / (dt * dt * dt)) {
  DATADYN_CHECK(dt > 0.0);
  DATADYN_CHECK_GE(subframes_, 1);
  DATADYN_CHECK(amount_ >= 0.0);
  DATADYN_CHECK_GT(grain_, std::size_t{0});
  DATADYN_CHECK_EQ(springs.kd.size(), n_);
  const std::size_t N = static_cast<std::size_t>(n_), S = static_cast<std::size_t>(subframes_);
  maps_.assign(S, std::vector<IntervalMap>(N));
  parallel_for(N, grain_, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const Eigen::Index v = static_cast<Eigen::Index>(i);
      maps_[0][i] = interval_map(springs.ks[v], springs.kd[v], dt);
      for (std::size_t j = 1; j < S; ++j)
        maps_[j][i] = interval_map(springs.ks[v], springs.kd[v], dt * double(j) / double(S));
    }
  });
  y_.assign(3 * N, 0.0);
  yv_.assign(3 * N, 0.0);
}

void SpringStepper::prepare_step(const std::initializer_list<const Points3*> frames,
                                 std::span<Points3> out) const {
  DATADYN_CHECK_EQ(out.size(), static_cast<std::size_t>(subframes_));
  for (const Points3* f : frames)
    if (f) DATADYN_CHECK_EQ(f->rows(), n_);
  for (Points3& o : out) o.resize(n_, 3);
}

void SpringStepper::advance(const Points3* prev, const Points3& x0, const Points3& x1,
                            const Points3* next, std::span<Points3> out) {
  prepare_step({prev, &x0, &x1, next}, out);
  const std::size_t S = static_cast<std::size_t>(subframes_);
  // Tangents are one-sided at the ends of a clip.
  const double* p = prev ? prev->data() : nullptr;
  const double* a0 = x0.data();
  const double* a1 = x1.data();
  const double* q = next ? next->data() : nullptr;
  // Coordinate l = 3 i + c of vertex i: its cubic, and α and β of the file comment.
  const auto cubic_at = [&](std::size_t l) {
    const ScalarCubic h = interval_cubic(p, a0, a1, q, static_cast<Eigen::Index>(l));
    return std::tuple{h, h.a * alpha_scale_, h.q * beta_scale_};
  };
  parallel_for(static_cast<std::size_t>(n_), grain_, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = 1; j < S; ++j) {
      const double s = double(j) / double(S);
      double* o = out[j - 1].data();
      for (std::size_t l = 3 * b; l < 3 * e; ++l) {
        const IntervalMap& M = maps_[j][l / 3];
        const auto [h, alpha, beta] = cubic_at(l);
        const double target = ((h.q * s + h.a) * s + h.m0) * s + h.p0;
        o[l] = target + amount_ * (M.phi11 * y_[l] + M.phi12 * yv_[l] - alpha * M.i1 - beta * M.j1);
      }
    }
    double* o = out[S - 1].data();
    for (std::size_t l = 3 * b; l < 3 * e; ++l) {
      const IntervalMap& M = maps_[0][l / 3];
      const auto [h, alpha, beta] = cubic_at(l);
      const double y0 = y_[l], v0 = yv_[l];
      y_[l] = M.phi11 * y0 + M.phi12 * v0 - alpha * M.i1 - beta * M.j1;
      yv_[l] = M.phi21 * y0 + M.phi22 * v0 - alpha * M.phi12 - beta * M.i1;
      o[l] = a1[l] + amount_ * y_[l];
    }
  });
}

void SpringStepper::cut(const Points3& x0, const Points3& x1, std::span<Points3> out) {
  prepare_step({&x0, &x1}, out);
  const std::size_t S = static_cast<std::size_t>(subframes_);
  parallel_for(static_cast<std::size_t>(n_), grain_, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = 1; j < S; ++j) {
      double* o = out[j - 1].data();
      for (std::size_t l = 3 * b; l < 3 * e; ++l) o[l] = x0.data()[l] + amount_ * y_[l];
    }
    double* o = out[S - 1].data();
    for (std::size_t l = 3 * b; l < 3 * e; ++l) {
      o[l] = x1.data()[l];
      y_[l] = yv_[l] = 0.0;
    }
  });
}

SpringApplyResult spring_apply(const std::vector<Points3>& targets, double dt,
                               const Springs& springs, const SpringApplyOptions& options,
                               const ProgressCallback& progress) {
  const std::size_t F = targets.size();
  DATADYN_CHECK_GE(F, std::size_t{2});
  const Eigen::Index N = targets[0].rows();
  DATADYN_CHECK_EQ(springs.ks.size(), N);
  // starts[f]: a clip starts at frame f (frame 0 and every reset).
  std::vector<char> starts(F + 1, 0);
  starts[0] = 1;
  for (std::size_t i = 0; i < options.resets.size(); ++i) {
    DATADYN_CHECK(options.resets[i] > 0 && options.resets[i] < F);
    DATADYN_CHECK(i == 0 || options.resets[i] > options.resets[i - 1]);
    starts[options.resets[i]] = 1;
  }
  SpringStepper stepper(springs, dt, options);
  const std::size_t S = static_cast<std::size_t>(options.subframes);
  SpringApplyResult result;
  const std::size_t outputs = (F - 1) * S + 1;
  result.positions.resize(outputs);
  for (std::size_t k = 0; k < outputs; ++k) result.times.push_back(dt * double(k) / double(S));
  result.positions[0] = targets[0];
  for (std::size_t n = 0; n + 1 < F; ++n) {
    const std::span<Points3> out(result.positions.data() + n * S + 1, S);
    if (starts[n + 1])
      stepper.cut(targets[n], targets[n + 1], out);
    else
      stepper.advance(starts[n] ? nullptr : &targets[n - 1], targets[n], targets[n + 1],
                      n + 2 < F && !starts[n + 2] ? &targets[n + 2] : nullptr, out);
    if (progress) progress(n + 2, F);
  }
  return result;
}

double largest_move(const Points3& from, const Points3& to) {
  DATADYN_CHECK_EQ(from.rows(), to.rows());
  return from.rows() == 0 ? 0.0 : (to - from).rowwise().norm().maxCoeff();
}

std::vector<std::size_t> jump_frames(const std::vector<Points3>& targets, double distance) {
  DATADYN_CHECK(distance > 0.0);
  std::vector<std::size_t> out;
  for (std::size_t f = 1; f < targets.size(); ++f)
    if (largest_move(targets[f - 1], targets[f]) > distance) out.push_back(f);
  return out;
}

double vertex_loss(const VertexTrack& track, const std::vector<double>& weights, double ks,
                   double kd, Eigen::Vector2d* gradient, Eigen::Matrix2d* gauss_newton) {
  const Eigen::Index F = track.target.rows();
  DATADYN_CHECK_GE(F, Eigen::Index{2});
  DATADYN_CHECK_EQ(track.truth.rows(), F);
  DATADYN_CHECK(weights.empty() || static_cast<Eigen::Index>(weights.size()) == F);
  const double dt = track.dt;
  const double alpha_scale = 2.0 / (dt * dt), beta_scale = 6.0 / (dt * dt * dt);
  const bool want_grad = gradient || gauss_newton;
  IntervalMapGradient G;
  if (want_grad)
    G = interval_map_gradient(ks, kd, dt);
  else
    G.value = interval_map(ks, kd, dt);
  const IntervalMap& M = G.value;
  const IntervalMap& Ms = G.d_ks;
  const IntervalMap& Md = G.d_kd;
  Eigen::Vector3d y = Eigen::Vector3d::Zero(), yv = Eigen::Vector3d::Zero();
  Eigen::Vector3d ys = y, yvs = y, yd = y, yvd = y;  // ∂/∂ks and ∂/∂kd of y, y'
  double loss = 0.0;
  Eigen::Vector2d grad = Eigen::Vector2d::Zero();
  Eigen::Matrix2d gn = Eigen::Matrix2d::Zero();
  const auto& X = track.target;
  for (Eigen::Index n = 0; n + 1 < F; ++n) {
    const Eigen::Vector3d p0 = X.row(n), p1 = X.row(n + 1);
    const Eigen::Vector3d m0 =
        n == 0 ? Eigen::Vector3d(p1 - p0) : Eigen::Vector3d(0.5 * (p1 - X.row(n - 1).transpose()));
    const Eigen::Vector3d m1 = n + 2 < F ? Eigen::Vector3d(0.5 * (X.row(n + 2).transpose() - p0))
                                         : Eigen::Vector3d(p1 - p0);
    const Eigen::Vector3d q = 2.0 * p0 + m0 - 2.0 * p1 + m1;
    const Eigen::Vector3d a = -3.0 * p0 - 2.0 * m0 + 3.0 * p1 - m1;
    const Eigen::Vector3d alpha = a * alpha_scale, beta = q * beta_scale;
    const Eigen::Vector3d y_new = M.phi11 * y + M.phi12 * yv - alpha * M.i1 - beta * M.j1;
    const Eigen::Vector3d yv_new = M.phi21 * y + M.phi22 * yv - alpha * M.phi12 - beta * M.i1;
    if (want_grad) {
      const auto step = [&](const IntervalMap& D, Eigen::Vector3d& dy, Eigen::Vector3d& dyv) {
        const Eigen::Vector3d dy_new =
            M.phi11 * dy + M.phi12 * dyv + D.phi11 * y + D.phi12 * yv - alpha * D.i1 - beta * D.j1;
        const Eigen::Vector3d dyv_new = M.phi21 * dy + M.phi22 * dyv + D.phi21 * y + D.phi22 * yv -
                                        alpha * D.phi12 - beta * D.i1;
        dy = dy_new;
        dyv = dyv_new;
      };
      step(Ms, ys, yvs);
      step(Md, yd, yvd);
    }
    y = y_new;
    yv = yv_new;
    const double w = weights.empty() ? 1.0 : weights[static_cast<std::size_t>(n + 1)];
    if (w == 0.0) continue;
    const Eigen::Vector3d r = p1 + y - track.truth.row(n + 1).transpose();
    loss += w * r.squaredNorm();
    if (want_grad) {
      grad[0] += 2.0 * w * r.dot(ys);
      grad[1] += 2.0 * w * r.dot(yd);
      gn(0, 0) += 2.0 * w * ys.squaredNorm();
      gn(0, 1) += 2.0 * w * ys.dot(yd);
      gn(1, 1) += 2.0 * w * yd.squaredNorm();
    }
  }
  gn(1, 0) = gn(0, 1);
  if (gradient) *gradient = grad;
  if (gauss_newton) *gauss_newton = gn;
  return loss;
}

}  // namespace datadyn::flesh
