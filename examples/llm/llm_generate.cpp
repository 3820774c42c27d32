//===- llm_generate.cpp - Token generation with a compiled stateful LLM ---===//
//
// The generation loop of examples/llm in C++, on the runtime library alone:
// loads a compiled llama-style module (functions `prefill(tokens[1, T])` and
// `decode(token[1, 1], pos)` over a KV cache in mutable globals), creates an
// Instance (the sequence's state), prefills the prompt, then decodes one
// token at a time, choosing each next id greedily (argmax) or by temperature
// / top-k sampling from a seeded generator. Prints the prompt and generated
// ids and prefill / decode tokens per second.
//
//   llm_generate MODEL.tmod [--parameters=FILE]... [--prompt=ID,ID,...]
//       [--new-tokens=N] [--temperature=T] [--top-k=K] [--seed=S]
//       [--device=local-task|local-sync] [--threads=N]
//       [--warmup=N] [--rounds=N] [--top-logits=K] [--json]
//
// n new tokens are produced: the first from prefill's logits, the others by
// n - 1 decode steps at positions T, T + 1, ... (as examples/llm/generate.py).
// For benchmarks (benchmarks/llm/run_llm_benchmark.py): --warmup untimed and
// --rounds timed generations, each a new sequence (Instance::reset), and
// --json prints one line in the format of benchmarks/llm/llama_cpp_bench.js:
// {"tokens" (last round), "prefill_s" / "decode_s" (per round),
// "decode_step_s" (each decode step of the last round: step i is position
// prompt_len + i, so one long generation shows decode time against cache
// length), "threads",
// "prompt_len", "new_tokens", "top_logits" (per step, the K largest as
// [id, logit], with --top-logits=K)}.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace turbine::runtime;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "llm_generate: error: %s\n", message.c_str());
  return 1;
}

struct Options {
  std::string model;
  std::vector<std::string> parameterFiles;
  std::vector<int64_t> prompt;
  int64_t newTokens = 16;
  double temperature = 0.0;
  int64_t topK = 0;
  uint64_t seed = 0;
  std::string device = "local-task";
  int threads = 0;
  int64_t warmup = 0;
  int64_t rounds = 1;
  int64_t topLogits = 0;
  bool json = false;
};

bool parseInteger(const char *text, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0)
    return false;
  out = value;
  return true;
}

/// Parses the command line; an error message, or "" on success.
std::string parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    int64_t n = 0;
    if (const char *v = value("--parameters=")) {
      o.parameterFiles.push_back(v);
    } else if (const char *v = value("--prompt=")) {
      std::string list = v;
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = std::min(list.find(',', start), list.size());
        std::string id = list.substr(start, comma - start);
        if (!parseInteger(id.c_str(), n) || n < 0)
          return "--prompt takes comma-separated non-negative token ids, got '" + id + "'";
        o.prompt.push_back(n);
        start = comma + 1;
      }
    } else if (const char *v = value("--new-tokens=")) {
      if (!parseInteger(v, o.newTokens) || o.newTokens < 1)
        return "--new-tokens must be an integer >= 1, got '" + std::string(v) + "'";
    } else if (const char *v = value("--temperature=")) {
      char *end = nullptr;
      o.temperature = std::strtod(v, &end);
      if (end == v || *end != '\0' || !(o.temperature >= 0) || std::isinf(o.temperature))
        return "--temperature must be a number >= 0, got '" + std::string(v) + "'";
    } else if (const char *v = value("--top-k=")) {
      if (!parseInteger(v, o.topK) || o.topK < 0)
        return "--top-k must be an integer >= 0, got '" + std::string(v) + "'";
    } else if (const char *v = value("--seed=")) {
      if (!parseInteger(v, n) || n < 0)
        return "--seed must be an integer >= 0, got '" + std::string(v) + "'";
      o.seed = static_cast<uint64_t>(n);
    } else if (const char *v = value("--device=")) {
      o.device = v;
    } else if (const char *v = value("--threads=")) {
      if (!parseInteger(v, n) || n < 0 || n > 1024)
        return "--threads must be an integer in [0, 1024], got '" + std::string(v) + "'";
      o.threads = static_cast<int>(n);
    } else if (const char *v = value("--warmup=")) {
      if (!parseInteger(v, o.warmup) || o.warmup < 0)
        return "--warmup must be an integer >= 0, got '" + std::string(v) + "'";
    } else if (const char *v = value("--rounds=")) {
      if (!parseInteger(v, o.rounds) || o.rounds < 1)
        return "--rounds must be an integer >= 1, got '" + std::string(v) + "'";
    } else if (const char *v = value("--top-logits=")) {
      if (!parseInteger(v, o.topLogits) || o.topLogits < 0)
        return "--top-logits must be an integer >= 0, got '" + std::string(v) + "'";
    } else if (arg == "--json") {
      o.json = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return "unknown option '" + arg + "'";
    } else if (o.model.empty()) {
      o.model = arg;
    } else {
      return "more than one model given ('" + o.model + "', '" + arg + "')";
    }
  }
  if (o.model.empty())
    return "no model given";
  if (o.prompt.empty())
    o.prompt = {1, 15043, 29892, 590, 1024, 338}; // any ids below the vocab size
  return "";
}

/// The next id from a row of logits: argmax when temperature is 0, else a
/// sample from softmax(logits / temperature) over the top_k largest (0: all).
int64_t chooseToken(const float *logits, int64_t vocab, double temperature, int64_t topK,
                    std::mt19937_64 &rng) {
  if (temperature == 0.0)
    return std::max_element(logits, logits + vocab) - logits;
  std::vector<int64_t> ids(vocab);
  std::iota(ids.begin(), ids.end(), 0);
  int64_t keep = topK > 0 && topK < vocab ? topK : vocab;
  std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(),
                    [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  double top = logits[ids[0]];
  std::vector<double> weights(keep);
  for (int64_t i = 0; i < keep; ++i)
    weights[i] = std::exp((logits[ids[i]] - top) / temperature);
  std::discrete_distribution<int64_t> pick(weights.begin(), weights.end());
  return ids[pick(rng)];
}

Result<Tensor> int64Tensor(std::vector<int64_t> shape, const std::vector<int64_t> &values) {
  Result<Tensor> t = Tensor::allocate(DType::i64, std::move(shape));
  if (t)
    std::copy(values.begin(), values.end(), t->dataAs<int64_t>());
  return t;
}

/// The logits row of a function's only result ([1, vocab] or [vocab], f32).
Result<const float *> logitsOf(const std::vector<Tensor> &results, const char *function,
                               int64_t &vocab) {
  if (results.size() != 1 || results[0].dtype() != DType::f32)
    return Status::error(std::string(function) + " must return one f32 tensor of logits");
  vocab = results[0].shape().empty() ? 1 : results[0].shape().back();
  if (vocab < 1 || results[0].elementCount() != vocab)
    return Status::error(std::string(function) + " returned " + results[0].typeString() +
                         "; expected logits [1, vocab]");
  return results[0].dataAs<float>();
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Generation {
  std::vector<int64_t> tokens;
  double prefillSeconds = 0;
  double decodeSeconds = 0;
  /// Seconds of each decode step (invoke + choosing the token), in order.
  std::vector<double> stepSeconds;
  /// Per step, the --top-logits largest logits as (id, value).
  std::vector<std::vector<std::pair<int64_t, float>>> topLogits;
};

std::vector<std::pair<int64_t, float>> largest(const float *logits, int64_t vocab, int64_t k) {
  std::vector<int64_t> ids(vocab);
  std::iota(ids.begin(), ids.end(), 0);
  k = std::min(k, vocab);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                    [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  std::vector<std::pair<int64_t, float>> out;
  for (int64_t i = 0; i < k; ++i)
    out.emplace_back(ids[i], logits[ids[i]]);
  return out;
}

/// One generation in `instance` (a fresh sequence): prefill the prompt,
/// then newTokens - 1 decode steps.
Result<Generation> generate(Instance &instance, const Function &prefill, const Function &decode,
                            Device &device, const Options &options) {
  std::mt19937_64 rng(options.seed);
  Generation out;
  int64_t vocab = 0;
  const int64_t promptLength = static_cast<int64_t>(options.prompt.size());
  auto choose = [&](const float *logits) {
    out.tokens.push_back(chooseToken(logits, vocab, options.temperature, options.topK, rng));
    if (options.topLogits > 0)
      out.topLogits.push_back(largest(logits, vocab, options.topLogits));
  };

  auto start = std::chrono::steady_clock::now();
  Result<Tensor> tokens = int64Tensor({1, promptLength}, options.prompt);
  if (!tokens)
    return tokens.status();
  Result<std::vector<Tensor>> results = instance.invoke(prefill, device, {*tokens});
  if (!results)
    return results.status();
  Result<const float *> logits = logitsOf(*results, "prefill", vocab);
  if (!logits)
    return logits.status();
  choose(*logits);
  out.prefillSeconds = secondsSince(start);

  start = std::chrono::steady_clock::now();
  for (int64_t step = 1; step < options.newTokens; ++step) {
    auto stepStart = std::chrono::steady_clock::now();
    Result<Tensor> token = int64Tensor({1, 1}, {out.tokens.back()});
    if (!token)
      return token.status();
    Result<Tensor> position = int64Tensor({}, {promptLength + step - 1});
    if (!position)
      return position.status();
    results = instance.invoke(decode, device, {*token, *position});
    if (!results)
      return results.status();
    logits = logitsOf(*results, "decode", vocab);
    if (!logits)
      return logits.status();
    choose(*logits);
    out.stepSeconds.push_back(secondsSince(stepStart));
  }
  out.decodeSeconds = secondsSince(start);
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr,
                 "usage: %s MODEL.tmod [--parameters=FILE]... [--prompt=ID,ID,...]\n"
                 "    [--new-tokens=N] [--temperature=T] [--top-k=K] [--seed=S]\n"
                 "    [--device=local-task|local-sync] [--threads=N]\n"
                 "    [--warmup=N] [--rounds=N] [--top-logits=K] [--json]\n"
                 "Generates N tokens (default 16) with a compiled llama-style module\n"
                 "exporting prefill(tokens[1, T]) and decode(token[1, 1], pos).\n",
                 argv[0]);
    return argc == 2 ? 0 : 1;
  }
  Options options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return fail(error);

  std::vector<ParameterIndex> parameters;
  for (const std::string &path : options.parameterFiles) {
    Result<ParameterIndex> index = ParameterIndex::open(path);
    if (!index)
      return fail(index.message());
    parameters.push_back(std::move(*index));
  }
  Result<std::shared_ptr<Module>> module = Module::load(options.model, parameters);
  if (!module)
    return fail(module.message());
  Result<Function> prefill = (*module)->lookupFunction("prefill");
  if (!prefill)
    return fail(prefill.message());
  Result<Function> decode = (*module)->lookupFunction("decode");
  if (!decode)
    return fail(decode.message());
  DeviceOptions deviceOptions;
  deviceOptions.taskWorkers = options.threads;
  Result<std::unique_ptr<Device>> device = Device::create(options.device, deviceOptions);
  if (!device)
    return fail(device.message());
  Result<std::unique_ptr<Instance>> instance = (*module)->createInstance();
  if (!instance)
    return fail(instance.message());

  std::vector<Generation> runs;
  for (int64_t round = 0; round < options.warmup + options.rounds; ++round) {
    if (Status s = (*instance)->reset(); !s.ok())
      return fail(s.message());
    Result<Generation> run = generate(**instance, *prefill, *decode, **device, options);
    if (!run)
      return fail(run.message());
    if (round >= options.warmup)
      runs.push_back(std::move(*run));
  }
  const Generation &last = runs.back();
  const int64_t promptLength = static_cast<int64_t>(options.prompt.size());
  const int64_t steps = options.newTokens - 1;
  if (options.json) {
    std::string out = "{\"tokens\": [";
    for (size_t i = 0; i < last.tokens.size(); ++i)
      out += (i ? ", " : "") + std::to_string(last.tokens[i]);
    auto list = [&](double Generation::*field) {
      std::string text = "[";
      for (size_t i = 0; i < runs.size(); ++i) {
        char value[32];
        std::snprintf(value, sizeof(value), "%.9g", runs[i].*field);
        text += (i ? ", " : "") + std::string(value);
      }
      return text + "]";
    };
    auto stepList = [](const std::vector<double> &values) {
      std::string text = "[";
      for (size_t i = 0; i < values.size(); ++i) {
        char value[32];
        std::snprintf(value, sizeof(value), "%.6g", values[i]);
        text += (i ? ", " : "") + std::string(value);
      }
      return text + "]";
    };
    out += "], \"prefill_s\": " + list(&Generation::prefillSeconds) +
           ", \"decode_s\": " + list(&Generation::decodeSeconds) +
           ", \"decode_step_s\": " + stepList(last.stepSeconds) +
           ", \"threads\": " + std::to_string((*device)->workerCount()) +
           ", \"prompt_len\": " + std::to_string(promptLength) +
           ", \"new_tokens\": " + std::to_string(options.newTokens);
    if (options.topLogits > 0) {
      out += ", \"top_logits\": [";
      for (size_t step = 0; step < last.topLogits.size(); ++step) {
        out += step ? ", [" : "[";
        for (size_t i = 0; i < last.topLogits[step].size(); ++i) {
          char value[64];
          std::snprintf(value, sizeof(value), "[%lld, %.9g]",
                        static_cast<long long>(last.topLogits[step][i].first),
                        last.topLogits[step][i].second);
          out += (i ? ", " : "") + std::string(value);
        }
        out += "]";
      }
      out += "]";
    }
    std::printf("%s}\n", out.c_str());
    return 0;
  }
  auto printIds = [](const char *label, const std::vector<int64_t> &ids) {
    std::printf("%s", label);
    for (int64_t id : ids)
      std::printf(" %lld", static_cast<long long>(id));
    std::printf("\n");
  };
  printIds("prompt:", options.prompt);
  printIds("generated:", last.tokens);
  std::printf("prefill: %lld tokens in %.3f s (%.1f tok/s)\n",
              static_cast<long long>(promptLength), last.prefillSeconds,
              promptLength / last.prefillSeconds);
  if (steps > 0)
    std::printf("decode: %lld tokens in %.3f s (%.1f tok/s) on %s, %d worker(s)\n",
                static_cast<long long>(steps), last.decodeSeconds, steps / last.decodeSeconds,
                (*device)->name().c_str(), (*device)->workerCount());
  return 0;
}
