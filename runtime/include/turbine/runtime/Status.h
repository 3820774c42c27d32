//===- Status.h - The runtime's names for turbine::Status / Result --------===//
//
// The runtime API returns the stack's one error type (turbine/base/Status.h);
// these aliases keep `runtime::Status` and `runtime::Result<T>` spelled as
// embedders have always written them.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_STATUS_H
#define TURBINE_RUNTIME_STATUS_H

#include "turbine/base/Status.h"

namespace turbine::runtime {
using turbine::Result;
using turbine::Status;
} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_STATUS_H
