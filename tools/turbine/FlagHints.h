//===- FlagHints.h - The CLI's flag names added to library errors ---------===//
//
// Errors from the runtime, the compiler and the frontends name what is
// missing in their own terms ("needs a parameter file", "one input shape per
// input"): a Python or C++ caller has no flags. The CLI adds the flag that
// sets it, once, at the end of the message.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_FLAGHINTS_H
#define TURBINE_TOOLS_FLAGHINTS_H

#include <string>

namespace turbine::tools {

/// `message` with " (set with --FLAG ...)" appended for each thing it names
/// that a flag of `turbine compile` / `turbine run` sets.
std::string withFlagHints(const std::string &message);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_FLAGHINTS_H
