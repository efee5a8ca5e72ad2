#include "flesh/spring_fit.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <random>

#include <Eigen/Dense>

#include "core/check.hpp"
#include "core/parallel.hpp"

namespace datadyn::flesh {
namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Row v of every frame of every sequence, laid out per sequence for vertex_loss.
void gather_tracks(const std::vector<FitSequence>& sequences, Eigen::Index v,
                   std::vector<VertexTrack>& tracks) {
  tracks.resize(sequences.size());
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const auto& seq = sequences[s];
    const Eigen::Index F = static_cast<Eigen::Index>(seq.target->size());
    auto& t = tracks[s];
    t.dt = seq.dt;
    t.target.resize(F, 3);
    t.truth.resize(F, 3);
    for (Eigen::Index n = 0; n < F; ++n) {
      t.target.row(n) = (*seq.target)[static_cast<std::size_t>(n)].row(v);
      t.truth.row(n) = (*seq.truth)[static_cast<std::size_t>(n)].row(v);
    }
  }
}

/// One vertex's loss summed over the sequences, with derivatives in (ks, kd).
double tracks_loss(const std::vector<VertexTrack>& tracks,
                   const std::vector<std::vector<double>>& weights, double ks, double kd,
                   Eigen::Vector2d* g, Eigen::Matrix2d* H) {
  double L = 0.0;
  if (g) g->setZero();
  if (H) H->setZero();
  for (std::size_t s = 0; s < tracks.size(); ++s) {
    Eigen::Vector2d gs;
    Eigen::Matrix2d Hs;
    L += vertex_loss(tracks[s], weights[s], ks, kd, g ? &gs : nullptr, H ? &Hs : nullptr);
    if (g) *g += gs;
    if (H) *H += Hs;
  }
  return L;
}

/// Chain rule from (ks, kd) to u = (ln ks, ln kd).
void to_log_space(const Eigen::Vector2d& k, Eigen::Vector2d* g, Eigen::Matrix2d* H) {
  if (g) *g = g->cwiseProduct(k);
  if (H) *H = k.asDiagonal() * (*H) * k.asDiagonal();
}

struct VertexProblem {
  std::vector<VertexTrack> tracks;
  const std::vector<std::vector<double>>* weights = nullptr;

  double loss(const Eigen::Vector2d& u, Eigen::Vector2d* g, Eigen::Matrix2d* H) const {
    const Eigen::Vector2d k(std::exp(u[0]), std::exp(u[1]));
    const double L = tracks_loss(tracks, *weights, k[0], k[1], g, H);
    to_log_space(k, g, H);
    return L;
  }
};

/// A shared region: one (ks, kd) for all its vertices, on the sum of their losses. The vertices
/// are evaluated in parallel over fixed chunks and the chunk sums combined in order, so the
/// result does not depend on the thread count.
struct RegionProblem {
  const std::vector<FitSequence>* sequences = nullptr;
  const std::vector<std::vector<double>>* weights = nullptr;
  const std::vector<Eigen::Index>* vertices = nullptr;
  std::size_t grain = 64;

  struct Sum {
    double L = 0.0;
    Eigen::Vector2d g = Eigen::Vector2d::Zero();
    Eigen::Matrix2d H = Eigen::Matrix2d::Zero();
  };

  double loss(const Eigen::Vector2d& u, Eigen::Vector2d* g, Eigen::Matrix2d* H) const {
    const Eigen::Vector2d k(std::exp(u[0]), std::exp(u[1]));
    const bool derivatives = g || H;
    const Sum total = parallel_reduce(
        vertices->size(), grain, Sum{},
        [&](std::size_t b, std::size_t e) {
          std::vector<VertexTrack> tracks;
          Sum part;
          for (std::size_t i = b; i < e; ++i) {
            gather_tracks(*sequences, (*vertices)[i], tracks);
            Eigen::Vector2d gi;
            Eigen::Matrix2d Hi;
            part.L += tracks_loss(tracks, *weights, k[0], k[1], derivatives ? &gi : nullptr,
                                  derivatives ? &Hi : nullptr);
            if (derivatives) {
              part.g += gi;
              part.H += Hi;
            }
          }
          return part;
        },
        [](Sum a, const Sum& b) {
          a.L += b.L;
          a.g += b.g;
          a.H += b.H;
          return a;
        });
    if (g) *g = total.g;
    if (H) *H = total.H;
    to_log_space(k, g, H);
    return total.L;
  }
};

template <class Problem>
Eigen::Vector2d genetic_initial_guess(const Problem& P, const Eigen::Vector2d& lo,
                                      const Eigen::Vector2d& hi, const SpringFitParams& params,
                                      std::uint64_t vertex) {
  if (params.generations <= 0) return 0.5 * (lo + hi);
  std::mt19937_64 rng(splitmix(params.seed ^ splitmix(vertex)));
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const int n = std::max(params.population, 2);
  std::vector<std::pair<double, Eigen::Vector2d>> pop;
  for (int i = 0; i < n; ++i) {
    const Eigen::Vector2d u(lo[0] + uni(rng) * (hi[0] - lo[0]), lo[1] + uni(rng) * (hi[1] - lo[1]));
    pop.emplace_back(P.loss(u, nullptr, nullptr), u);
  }
  const auto by_loss = [](const auto& a, const auto& b) { return a.first < b.first; };
  double sigma = 0.15;
  for (int g = 0; g < params.generations; ++g) {
    std::stable_sort(pop.begin(), pop.end(), by_loss);
    const int elite = std::max(1, n / 2);
    for (int i = elite; i < n; ++i) {
      const auto& pa =
          pop[static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(elite))].second;
      const auto& pb =
          pop[static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(elite))].second;
      const double t = uni(rng);
      Eigen::Vector2d child = t * pa + (1.0 - t) * pb;
      for (int c = 0; c < 2; ++c) child[c] += sigma * (hi[c] - lo[c]) * gauss(rng);
      child = child.cwiseMax(lo).cwiseMin(hi);
      pop[static_cast<std::size_t>(i)] = {P.loss(child, nullptr, nullptr), child};
    }
    sigma *= 0.6;
  }
  std::stable_sort(pop.begin(), pop.end(), by_loss);
  return pop.front().second;
}

/// Projected Levenberg-Marquardt in u = (ln ks, ln kd).
template <class Problem>
Eigen::Vector2d descend(const Problem& P, Eigen::Vector2d u, const Eigen::Vector2d& lo,
                        const Eigen::Vector2d& hi, const SpringFitParams& params, double* loss) {
  Eigen::Vector2d g;
  Eigen::Matrix2d H;
  double L = P.loss(u, &g, &H);
  double lambda = 1e-3;
  for (int it = 0; it < params.iterations; ++it) {
    bool accepted = false;
    for (int tries = 0; tries < 12 && !accepted; ++tries) {
      Eigen::Matrix2d A = H;
      A.diagonal() += lambda * H.diagonal() + Eigen::Vector2d::Constant(1e-300);
      Eigen::Vector2d step = -A.ldlt().solve(g);
      if (!step.allFinite()) step = -g;
      const Eigen::Vector2d trial = (u + step).cwiseMax(lo).cwiseMin(hi);
      const Eigen::Vector2d moved = trial - u;
      if (moved.squaredNorm() == 0.0) break;
      Eigen::Vector2d g_new;
      Eigen::Matrix2d H_new;
      const double L_new = P.loss(trial, &g_new, &H_new);
      if (std::isfinite(L_new) && L_new <= L) {
        const double gain = L - L_new;
        u = trial;
        g = g_new;
        H = H_new;
        L = L_new;
        lambda = std::max(lambda / 3.0, 1e-12);
        accepted = true;
        if (gain <= params.relative_tolerance * L || L == 0.0) {
          if (loss) *loss = L;
          return u;
        }
      } else {
        lambda *= 8.0;
      }
    }
    if (!accepted) break;
  }
  if (loss) *loss = L;
  return u;
}

/// Frame errors Σ_i ||x_i^n - x_D,i^n||^2 of one sequence under the springs.
std::vector<double> frame_errors(const FitSequence& s, const Springs& springs, bool with_springs) {
  std::vector<double> e(s.target->size(), 0.0);
  if (with_springs) {
    const auto r = spring_apply(*s.target, s.dt, springs);
    for (std::size_t n = 1; n < e.size(); ++n)
      e[n] = (r.positions[n] - (*s.truth)[n]).squaredNorm();
  } else {
    for (std::size_t n = 1; n < e.size(); ++n)
      e[n] = ((*s.target)[n] - (*s.truth)[n]).squaredNorm();
  }
  return e;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  return v[mid];
}

}  // namespace

std::vector<Eigen::Index> rigid_vertices(const std::vector<FitSequence>& sequences,
                                         double tolerance) {
  DATADYN_CHECK(!sequences.empty());
  DATADYN_CHECK_GE(tolerance, 0.0);
  const Eigen::Index N = sequences[0].target->front().rows();
  Eigen::VectorXd worst = Eigen::VectorXd::Zero(N);  // max over frames of ||x_D - x̂||^2
  for (const auto& s : sequences)
    for (std::size_t n = 0; n < s.target->size(); ++n)
      worst = worst.cwiseMax(((*s.truth)[n] - (*s.target)[n]).rowwise().squaredNorm());
  std::vector<Eigen::Index> out;
  for (Eigen::Index v = 0; v < N; ++v)
    if (worst[v] <= tolerance * tolerance) out.push_back(v);
  return out;
}

SpringFitResult fit_springs(const std::vector<FitSequence>& sequences,
                            const SpringFitParams& params, const ProgressCallback& progress) {
  DATADYN_CHECK(!sequences.empty());
  DATADYN_CHECK(params.ks_min > 0 && params.ks_max > params.ks_min);
  DATADYN_CHECK(params.kd_min > 0 && params.kd_max > params.kd_min);
  const Eigen::Index N = sequences[0].target->front().rows();
  for (const auto& s : sequences) {
    DATADYN_CHECK_GE(s.target->size(), std::size_t{2});
    DATADYN_CHECK_EQ(s.target->size(), s.truth->size());
    for (std::size_t n = 0; n < s.target->size(); ++n) {
      DATADYN_CHECK_EQ((*s.target)[n].rows(), N);
      DATADYN_CHECK_EQ((*s.truth)[n].rows(), N);
    }
  }
  const auto& regions = params.shared_regions;
  std::vector<int> region_of(static_cast<std::size_t>(N), -1);
  for (std::size_t r = 0; r < regions.size(); ++r) {
    DATADYN_CHECK(!regions[r].empty());
    for (const Eigen::Index v : regions[r]) {
      DATADYN_CHECK(v >= 0 && v < N);
      DATADYN_CHECK_EQ(region_of[static_cast<std::size_t>(v)], -1);
      region_of[static_cast<std::size_t>(v)] = static_cast<int>(r);
    }
  }
  std::vector<Eigen::Index> free_vertices;
  for (Eigen::Index v = 0; v < N; ++v)
    if (region_of[static_cast<std::size_t>(v)] < 0) free_vertices.push_back(v);

  const Eigen::Vector2d lo(std::log(params.ks_min), std::log(params.kd_min));
  const Eigen::Vector2d hi(std::log(params.ks_max), std::log(params.kd_max));

  std::vector<std::vector<double>> weights(sequences.size());
  for (std::size_t s = 0; s < sequences.size(); ++s)
    weights[s].assign(sequences[s].target->size(), 1.0);

  Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor> U(N, 2);
  Eigen::VectorXd loss(N);
  const int passes = params.reject_mads > 0 ? 2 : 1;
  const std::size_t total = static_cast<std::size_t>(N) * static_cast<std::size_t>(passes);
  std::size_t done = 0;
  std::mutex progress_mutex;
  const auto report_progress = [&](std::size_t count) {
    if (!progress) return;
    // The callback may log or throw to cancel: one caller at a time.
    const std::lock_guard<std::mutex> lock(progress_mutex);
    done += count;
    progress(done, total);
  };
  for (int pass = 0; pass < passes; ++pass) {
    // Shared regions one after the other, each evaluated in parallel over its vertices. Their
    // generators are seeded by (seed, N + region) so that the free vertices keep theirs.
    for (std::size_t r = 0; r < regions.size(); ++r) {
      RegionProblem P;
      P.sequences = &sequences;
      P.weights = &weights;
      P.vertices = &regions[r];
      P.grain = params.grain;
      const Eigen::Vector2d start =
          pass == 0 ? genetic_initial_guess(P, lo, hi, params, static_cast<std::uint64_t>(N) + r)
                    : Eigen::Vector2d(U.row(regions[r].front()));
      const Eigen::Vector2d u = descend(P, start, lo, hi, params, nullptr);
      for (const Eigen::Index v : regions[r]) U.row(v) = u.transpose();
      report_progress(regions[r].size());
    }
    parallel_for(free_vertices.size(), params.grain, [&](std::size_t b, std::size_t e) {
      VertexProblem P;
      P.weights = &weights;
      for (std::size_t i = b; i < e; ++i) {
        const Eigen::Index v = free_vertices[i];
        gather_tracks(sequences, v, P.tracks);
        const Eigen::Vector2d start =
            pass == 0 ? genetic_initial_guess(P, lo, hi, params, static_cast<std::uint64_t>(v))
                      : Eigen::Vector2d(U.row(v));
        double L = 0.0;
        U.row(v) = descend(P, start, lo, hi, params, &L).transpose();
        loss[v] = L;
      }
      report_progress(e - b);
    });
    if (pass + 1 < passes) {
      // Frame rejection: robust outliers of the per-frame error under the first fit.
      Springs current{U.col(0).array().exp(), U.col(1).array().exp()};
      for (std::size_t s = 0; s < sequences.size(); ++s) {
        const auto err = frame_errors(sequences[s], current, true);
        std::vector<double> rest(err.begin() + 1, err.end());
        const double med = median(rest);
        for (auto& x : rest) x = std::abs(x - med);
        const double mad = 1.4826 * median(rest);
        // A rejected frame must also be 10 times the median frame error, so that a few large
        // errors are needed (sound frames just after an impact can still be among them: see
        // docs/tools/spring-fit.md), and 1e-20 m^2 per vertex floors the limit so that data
        // without outliers (MAD = 0) keeps every frame.
        const double limit =
            std::max(med + params.reject_mads * mad, 10.0 * med) + 1e-20 * static_cast<double>(N);
        for (std::size_t n = 1; n < err.size(); ++n) weights[s][n] = err[n] > limit ? 0.0 : 1.0;
      }
    }
  }

  // Each region vertex's own loss at the shared values.
  for (const auto& region : regions)
    parallel_for(region.size(), params.grain, [&](std::size_t b, std::size_t e) {
      VertexProblem P;
      P.weights = &weights;
      for (std::size_t i = b; i < e; ++i) {
        gather_tracks(sequences, region[i], P.tracks);
        loss[region[i]] = P.loss(U.row(region[i]).transpose(), nullptr, nullptr);
      }
    });

  SpringFitResult result;
  result.springs.ks = U.col(0).array().exp();
  result.springs.kd = U.col(1).array().exp();
  result.loss = loss;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    SequenceFitReport rep;
    rep.name = sequences[s].name;
    const auto before = frame_errors(sequences[s], result.springs, false);
    const auto after = frame_errors(sequences[s], result.springs, true);
    for (std::size_t n = 1; n < before.size(); ++n) {
      rep.loss_target += before[n];
      rep.loss_fitted += after[n];
      if (weights[s][n] == 0.0) rep.rejected_frames.push_back(static_cast<int>(n));
    }
    const double count = double(before.size() - 1) * double(N);
    rep.rms_target = std::sqrt(rep.loss_target / count);
    rep.rms_fitted = std::sqrt(rep.loss_fitted / count);
    result.sequences.push_back(rep);
  }
  return result;
}

}  // namespace datadyn::flesh
