//===- FlagHints.cpp - The CLI's flag names added to library errors -------===//
#include "FlagHints.h"

namespace turbine::tools {
namespace {

/// A phrase the layers below use, and the flag that sets what it names.
struct Hint {
  const char *phrase;
  const char *flags;
};

constexpr Hint kHints[] = {
    {"needs its length fixed at compile time",
     "--sequence-length=NAME=N, --sequence-shapes=NAME=2x3,4x3 or --optional-absent=NAME"},
    {"give its element shapes at compile time", "--sequence-shapes=NAME=2x3,4x3"},
    {"give one input shape per input", "--input-shape=1x3x224x224xf32, once per input"},
    {"dynamic dim ", "--dynamic-dim=<input>:<dim>"},
    {"function shapes", "--function-shapes=METHOD:SHAPE,SHAPE,..."},
    {"malformed input shape", "--input-shape=1x3x224x224xf32"},
    {"needs a parameter file", "--parameters=FILE.irpa"},
    {"in the tensor text syntax", "--input='2xstring=\"a\" \"b\"'"},
};

} // namespace

std::string withFlagHints(const std::string &message) {
  std::string hinted = message;
  for (const Hint &hint : kHints)
    if (message.find(hint.phrase) != std::string::npos)
      hinted += std::string(" (set with ") + hint.flags + ")";
  return hinted;
}

} // namespace turbine::tools
