//===- matmul_benchmark.cpp - Turbine matmul artifacts vs OpenBLAS sgemm --===//
//
// Times C = A * B (f32, row-major) computed two ways in one process: by a
// precompiled Turbine artifact (`<dir>/matmul_<MxNxK>.tmod`, `main(A, B)`,
// loaded with the runtime library) and by OpenBLAS `cblas_sgemm`. Both get the
// same random inputs and the same thread count (--threads: Turbine runs on
// local-sync for 1, on local-task with that many workers otherwise; OpenBLAS
// via openblas_set_num_threads). Turbine and OpenBLAS calls alternate, and
// which goes first alternates too, so drifting machine load hits both alike.
// Reports median ms (or, with --statistic=min, the fastest call of each:
// on a shared machine the calls another tenant slowed down are dropped), GFLOP/s, the GFLOP/s ratio turbine/OpenBLAS and the
// largest absolute difference between the two results; exits 1 when that
// difference is over --tolerance.
//
// A Turbine call is Function::invoke as an embedder sees it (input checks,
// result allocation, dispatches); OpenBLAS writes into a preallocated C.
// Builds against the runtime only: no compiler, no MLIR.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Runtime.h"

#include <CLI/CLI.hpp>
#include <cblas.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <strings.h>

namespace {

using namespace turbine::runtime;
using BenchClock = std::chrono::steady_clock;

/// Command-line options.
struct MatmulBenchmarkOptions {
  std::string artifactDir;
  std::vector<std::string> shapes = {"256x256x256", "512x512x512"};
  int threads = 1;
  int repetitions = 50;
  int warmup = 5;
  std::string order = "interleaved";
  std::string statistic = "median";
  double tolerance = 1e-3;
};

/// Median (or minimum, --statistic=min) ms and derived numbers of one side
/// (Turbine or OpenBLAS).
struct SideTiming {
  double medianMs = 0;
  double gflops = 0;
};

/// One row of the report.
struct MatmulMeasurement {
  int64_t m = 0, n = 0, k = 0;
  SideTiming turbine;
  SideTiming openblas;
  double maxAbsError = 0;
  double maxAbsValue = 0;
};

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t count = values.size();
  return count % 2 == 1 ? values[count / 2]
                        : (values[count / 2 - 1] + values[count / 2]) / 2;
}

double millisecondsToRun(const std::function<void()> &call) {
  BenchClock::time_point start = BenchClock::now();
  call();
  BenchClock::time_point end = BenchClock::now();
  return std::chrono::duration<double, std::milli>(end - start).count();
}

/// Fills `tensor` (f32) with uniform values in [-1, 1).
void fillRandom(Tensor &tensor, std::mt19937 &rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  float *data = tensor.dataAs<float>();
  for (int64_t i = 0; i < tensor.elementCount(); ++i)
    data[i] = uniform(rng);
}

/// Reads M, K, N from `main(A: MxKxf32, B: KxNxf32) -> MxNxf32`.
Status readMatmulShape(const Function &function, int64_t &m, int64_t &k,
                       int64_t &n) {
  const auto &inputs = function.inputs();
  const auto &outputs = function.outputs();
  auto isStaticMatrix = [](const TensorSignature &s) {
    return s.dtype == DType::f32 && s.shape.size() == 2 && s.shape[0] > 0 &&
           s.shape[1] > 0;
  };
  if (inputs.size() != 2 || outputs.size() != 1 ||
      !isStaticMatrix(inputs[0]) || !isStaticMatrix(inputs[1]) ||
      !isStaticMatrix(outputs[0]) || inputs[0].shape[1] != inputs[1].shape[0] ||
      outputs[0].shape[0] != inputs[0].shape[0] ||
      outputs[0].shape[1] != inputs[1].shape[1])
    return Status::error("function '" + function.name() +
                         "' is not a static f32 matmul (MxK, KxN) -> MxN: " +
                         function.signatureString());
  m = inputs[0].shape[0];
  k = inputs[0].shape[1];
  n = inputs[1].shape[1];
  return Status::success();
}

/// Measures one artifact against cblas_sgemm.
Result<MatmulMeasurement> measureMatmul(const std::string &artifactPath,
                                        Device &device,
                                        const MatmulBenchmarkOptions &options) {
  Result<std::shared_ptr<Module>> module = Module::load(artifactPath);
  if (!module)
    return module.status();
  Result<Function> function = (*module)->lookupFunction("main");
  if (!function)
    return function.status();
  MatmulMeasurement measurement;
  int64_t m = 0, k = 0, n = 0;
  if (Status s = readMatmulShape(*function, m, k, n); !s)
    return Status::error(artifactPath + ": " + s.message());
  measurement.m = m;
  measurement.n = n;
  measurement.k = k;

  Result<Tensor> a = Tensor::allocate(DType::f32, {m, k});
  Result<Tensor> b = Tensor::allocate(DType::f32, {k, n});
  Result<Tensor> openblasResult = Tensor::zeros(DType::f32, {m, n});
  if (!a || !b || !openblasResult)
    return Status::error("cannot allocate the operands of a " +
                         std::to_string(m) + "x" + std::to_string(n) + "x" +
                         std::to_string(k) + " matmul");
  std::mt19937 rng(20240607);
  fillRandom(*a, rng);
  fillRandom(*b, rng);
  const std::vector<Tensor> inputs = {*a, *b};

  Tensor turbineResult;
  Status turbineStatus = Status::success();
  auto runTurbine = [&] {
    Result<std::vector<Tensor>> results = function->invoke(device, inputs);
    if (!results)
      turbineStatus = results.status();
    else
      turbineResult = (*results)[0];
  };
  auto runOpenblas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), 1.0f,
                a->dataAs<float>(), static_cast<int>(k), b->dataAs<float>(),
                static_cast<int>(n), 0.0f, openblasResult->dataAs<float>(),
                static_cast<int>(n));
  };

  std::vector<double> turbineMs, openblasMs;
  const int totalRounds = options.warmup + options.repetitions;
  auto record = [&](int round, std::vector<double> &samples, double ms) {
    if (round >= options.warmup)
      samples.push_back(ms);
  };
  if (options.order == "interleaved") {
    for (int round = 0; round < totalRounds; ++round) {
      if (round % 2 == 0) {
        record(round, turbineMs, millisecondsToRun(runTurbine));
        record(round, openblasMs, millisecondsToRun(runOpenblas));
      } else {
        record(round, openblasMs, millisecondsToRun(runOpenblas));
        record(round, turbineMs, millisecondsToRun(runTurbine));
      }
      if (!turbineStatus)
        return Status::error(artifactPath + ": " + turbineStatus.message());
    }
  } else { // blocked: every Turbine call, then every OpenBLAS call
    for (int round = 0; round < totalRounds; ++round) {
      record(round, turbineMs, millisecondsToRun(runTurbine));
      if (!turbineStatus)
        return Status::error(artifactPath + ": " + turbineStatus.message());
    }
    for (int round = 0; round < totalRounds; ++round)
      record(round, openblasMs, millisecondsToRun(runOpenblas));
  }

  const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                      static_cast<double>(k);
  auto summarize = [&](const std::vector<double> &samples) {
    return options.statistic == "min" ? *std::min_element(samples.begin(), samples.end())
                                      : medianOf(samples);
  };
  measurement.turbine.medianMs = summarize(turbineMs);
  measurement.openblas.medianMs = summarize(openblasMs);
  measurement.turbine.gflops = flop / (measurement.turbine.medianMs * 1e6);
  measurement.openblas.gflops = flop / (measurement.openblas.medianMs * 1e6);

  const float *turbineValues = turbineResult.dataAs<float>();
  const float *openblasValues = openblasResult->dataAs<float>();
  for (int64_t i = 0; i < m * n; ++i) {
    double difference = std::fabs(static_cast<double>(turbineValues[i]) -
                                  static_cast<double>(openblasValues[i]));
    // NaN compares false: count it as an infinite error.
    if (!(difference <= measurement.maxAbsError))
      measurement.maxAbsError = std::isnan(difference) ? INFINITY : difference;
    measurement.maxAbsValue =
        std::max(measurement.maxAbsValue,
                 std::fabs(static_cast<double>(openblasValues[i])));
  }
  return measurement;
}

int runMatmulBenchmark(const MatmulBenchmarkOptions &options) {
  if (options.threads < 1 || options.repetitions < 1 || options.warmup < 0) {
    std::fprintf(stderr, "matmul_benchmark: error: need --threads >= 1, "
                         "--repetitions >= 1, --warmup >= 0\n");
    return 1;
  }
  openblas_set_num_threads(options.threads);

  DeviceOptions deviceOptions;
  deviceOptions.taskWorkers = options.threads;
  const std::string deviceName = options.threads == 1 ? "local-sync" : "local-task";
  Result<std::unique_ptr<Device>> device = Device::create(deviceName, deviceOptions);
  if (!device) {
    std::fprintf(stderr, "matmul_benchmark: error: %s\n", device.message().c_str());
    return 1;
  }

  fmt::print("Matmul C = A*B, f32 row-major: Turbine vs OpenBLAS cblas_sgemm, "
             "{} thread{}\n",
             options.threads, options.threads == 1 ? "" : "s");
  fmt::print("  Turbine:  {} ({} worker{})\n", (*device)->name(),
             (*device)->workerCount(), (*device)->workerCount() == 1 ? "" : "s");
  fmt::print("  OpenBLAS: core {}, {} thread{} ({})\n", openblas_get_corename(),
             openblas_get_num_threads(),
             openblas_get_num_threads() == 1 ? "" : "s", openblas_get_config());
  if (const char *requestedCore = std::getenv("OPENBLAS_CORETYPE");
      requestedCore && strcasecmp(requestedCore, openblas_get_corename()) != 0)
    fmt::print("  WARNING: OPENBLAS_CORETYPE={} but OpenBLAS runs its {} kernels\n",
               requestedCore, openblas_get_corename());
  if (openblas_get_num_threads() != options.threads)
    fmt::print("  WARNING: OpenBLAS uses {} threads, not {}\n",
               openblas_get_num_threads(), options.threads);
  fmt::print("  {} of {} {} repetitions after {} warmup\n",
             options.statistic == "min" ? "minimum" : "medians", options.repetitions,
             options.order, options.warmup);
  fmt::print("  {:>14} {:>7} {:>11} {:>9} {:>11} {:>9} {:>15} {:>11}\n", "MxNxK",
             "threads", "turbine ms", "GFLOP/s", "openblas ms", "GFLOP/s",
             "ratio t/o", "max |err|");

  bool allMatch = true;
  for (const std::string &shape : options.shapes) {
    std::string artifactPath = options.artifactDir + "/matmul_" + shape + ".tmod";
    Result<MatmulMeasurement> result = measureMatmul(artifactPath, **device, options);
    if (!result) {
      std::fprintf(stderr, "matmul_benchmark: error: %s\n", result.message().c_str());
      return 1;
    }
    const MatmulMeasurement &r = *result;
    bool matches = r.maxAbsError <= options.tolerance;
    allMatch = allMatch && matches;
    fmt::print("  {:>14} {:>7} {:>11.3f} {:>9.1f} {:>11.3f} {:>9.1f} {:>15.2f} "
               "{:>11.2e}{}\n",
               fmt::format("{}x{}x{}", r.m, r.n, r.k), options.threads, r.turbine.medianMs, r.turbine.gflops,
               r.openblas.medianMs, r.openblas.gflops,
               r.turbine.gflops / r.openblas.gflops, r.maxAbsError,
               matches ? "" : "  MISMATCH");
    std::fflush(stdout);
  }
  fmt::print("  ratio t/o = turbine GFLOP/s / OpenBLAS GFLOP/s (> 1: Turbine "
             "faster); max |err| = largest |turbine - OpenBLAS| element\n");
  if (!allMatch) {
    std::fprintf(stderr,
                 "matmul_benchmark: error: Turbine and OpenBLAS results differ "
                 "by more than --tolerance=%g\n",
                 options.tolerance);
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  MatmulBenchmarkOptions options;
  CLI::App app{"Times Turbine matmul artifacts against OpenBLAS cblas_sgemm"};
  app.add_option("artifact_dir", options.artifactDir,
                 "Directory holding matmul_<MxNxK>.tmod (from run_matmul_benchmark.sh)")
      ->required();
  app.add_option("--shapes", options.shapes, "Shapes MxNxK to run (artifact names)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--threads", options.threads,
                 "Threads for both (Turbine: 1 = local-sync, N = local-task "
                 "with N workers)")
      ->capture_default_str();
  app.add_option("--repetitions", options.repetitions, "Timed calls of each")
      ->capture_default_str();
  app.add_option("--warmup", options.warmup, "Untimed calls of each first")
      ->capture_default_str();
  app.add_option("--order", options.order,
                 "interleaved (alternate Turbine and OpenBLAS calls) or blocked "
                 "(all Turbine calls, then all OpenBLAS calls)")
      ->check(CLI::IsMember({"interleaved", "blocked"}))
      ->capture_default_str();
  app.add_option("--statistic", options.statistic,
                 "median, or min (the fastest call of each side: robust to "
                 "calls slowed down by other tenants of a shared machine)")
      ->check(CLI::IsMember({"median", "min"}))
      ->capture_default_str();
  app.add_option("--tolerance", options.tolerance,
                 "Largest |turbine - OpenBLAS| accepted")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return runMatmulBenchmark(options);
}
