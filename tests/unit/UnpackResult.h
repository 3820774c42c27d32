//===- UnpackResult.h - Result<T> unpacked the way older tests read it ----===//
//
// Many importer tests were written against "value or null, plus an error
// string"; `unpack` turns a turbine::Result<T> into that form so their
// assertions stay as they were.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TESTS_UNIT_UNPACKRESULT_H
#define TURBINE_TESTS_UNIT_UNPACKRESULT_H

#include "turbine/base/Status.h"

#include <string>
#include <utility>

namespace turbine::test_support {

/// The value of `result`, or a default-constructed T (null for handles) with
/// `error` set to the message.
template <typename T> T unpack(Result<T> result, std::string &error) {
  if (!result) {
    error = result.message();
    return T();
  }
  return std::move(*result);
}

} // namespace turbine::test_support

#endif // TURBINE_TESTS_UNIT_UNPACKRESULT_H
