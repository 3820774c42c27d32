//===- KernelABI.h - The calling convention of compiled kernels -*- C -*-===//
//
// Every dispatch region is compiled to one kernel function that computes one
// workgroup (tile) of its iteration space. All kernels share this C ABI so the
// runtime can launch any of them without knowing its signature:
//
//   void kernel(const turbine_dispatch_state_t *state,
//               int64_t workgroup_x, int64_t workgroup_y, int64_t workgroup_z);
//
// `bindings[i]` is the base pointer of the i-th buffer the dispatch reads or
// writes (dense, row-major, 64-byte aligned where the runtime allocated it).
// `constants[i]` are the dispatch's push constants: the dynamic dims of its
// bindings and any other index values the host computed. A kernel must compute
// a correct result for any workgroup count >= 1 (it strides over its tiles).
//
// This header is plain C and is shared by the compiler (which emits code that
// follows it) and the runtime (which calls it).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_ARTIFACT_KERNELABI_H
#define TURBINE_ARTIFACT_KERNELABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct turbine_dispatch_state_t {
  void *const *bindings;      // field 0
  const int64_t *constants;   // field 1
  int64_t workgroup_count[3]; // field 2
} turbine_dispatch_state_t;

typedef void (*turbine_kernel_fn_t)(const turbine_dispatch_state_t *state,
                                    int64_t workgroup_x, int64_t workgroup_y,
                                    int64_t workgroup_z);

#ifdef __cplusplus
}
#endif

#endif // TURBINE_ARTIFACT_KERNELABI_H
