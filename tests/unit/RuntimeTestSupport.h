//===- RuntimeTestSupport.h - Devices and f32 vectors for runtime tests ---===//
//
// Shared by the runtime's unit tests (RuntimeTest.cpp, BufferReuseTest.cpp).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TESTS_UNIT_RUNTIMETESTSUPPORT_H
#define TURBINE_TESTS_UNIT_RUNTIMETESTSUPPORT_H

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace turbine::testing {

/// Device `name` ("local-sync", "local-task") with `workers` task workers.
inline std::unique_ptr<runtime::Device> device(const std::string &name, int workers = 0) {
  runtime::DeviceOptions options;
  options.taskWorkers = workers;
  runtime::Result<std::unique_ptr<runtime::Device>> d = runtime::Device::create(name, options);
  EXPECT_TRUE(d.ok()) << d.message();
  return std::move(*d);
}

/// A 1-D f32 tensor holding `values`.
inline runtime::Tensor vector(const std::vector<float> &values) {
  runtime::Result<runtime::Tensor> t =
      runtime::Tensor::fromBytes(runtime::DType::f32, {int64_t(values.size())}, values.data(),
                                 values.size() * sizeof(float));
  EXPECT_TRUE(t.ok());
  return *t;
}

/// The elements of f32 tensor `t`.
inline std::vector<float> values(const runtime::Tensor &t) {
  return std::vector<float>(t.dataAs<float>(), t.dataAs<float>() + t.elementCount());
}

} // namespace turbine::testing

#endif // TURBINE_TESTS_UNIT_RUNTIMETESTSUPPORT_H
