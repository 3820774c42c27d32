/*===- test_kernels.c - Tiny kernels for runtime tests -----------*- C -*-===//
//
// Hand-written kernels following KernelABI.h, built into a shared object that
// tests embed as the `library` of hand-built artifacts. Each kernel strides
// over tiles so it is correct for any workgroup count >= 1.
//===---------------------------------------------------------------------===*/
#include "turbine/artifact/KernelABI.h"

#define TILE 16

static int64_t linearWorkgroup(const turbine_dispatch_state_t *s, int64_t x,
                               int64_t y, int64_t z) {
  return x + s->workgroup_count[0] * (y + s->workgroup_count[1] * z);
}

static int64_t totalWorkgroups(const turbine_dispatch_state_t *s) {
  return s->workgroup_count[0] * s->workgroup_count[1] * s->workgroup_count[2];
}

/* out[i] = a[i] + b[i]; bindings (a, b, out) f32; constants (n). */
void test_add_f32(const turbine_dispatch_state_t *s, int64_t x, int64_t y,
                  int64_t z) {
  const float *a = (const float *)s->bindings[0];
  const float *b = (const float *)s->bindings[1];
  float *out = (float *)s->bindings[2];
  int64_t n = s->constants[0];
  for (int64_t t = linearWorkgroup(s, x, y, z); t * TILE < n; t += totalWorkgroups(s))
    for (int64_t i = t * TILE; i < n && i < (t + 1) * TILE; ++i)
      out[i] = a[i] + b[i];
}

/* out[i] = in[i] * factor; bindings (in, out) f32; constants (n, factor). */
void test_scale_f32(const turbine_dispatch_state_t *s, int64_t x, int64_t y,
                    int64_t z) {
  const float *in = (const float *)s->bindings[0];
  float *out = (float *)s->bindings[1];
  int64_t n = s->constants[0];
  float factor = (float)s->constants[1];
  for (int64_t t = linearWorkgroup(s, x, y, z); t * TILE < n; t += totalWorkgroups(s))
    for (int64_t i = t * TILE; i < n && i < (t + 1) * TILE; ++i)
      out[i] = in[i] * factor;
}

/* counts[linear workgroup id] += 1; bindings (counts i32). */
void test_count_workgroups(const turbine_dispatch_state_t *s, int64_t x,
                           int64_t y, int64_t z) {
  int32_t *counts = (int32_t *)s->bindings[0];
  __atomic_fetch_add(&counts[linearWorkgroup(s, x, y, z)], 1, __ATOMIC_RELAXED);
}

/* dst[offset + i] = src[i] for i < n; bindings (src, dst) f32; constants
   (n, offset). Writes a slice of dst in place (module state tests). */
void test_write_at_f32(const turbine_dispatch_state_t *s, int64_t x, int64_t y,
                       int64_t z) {
  const float *src = (const float *)s->bindings[0];
  float *dst = (float *)s->bindings[1];
  int64_t n = s->constants[0], offset = s->constants[1];
  for (int64_t t = linearWorkgroup(s, x, y, z); t * TILE < n; t += totalWorkgroups(s))
    for (int64_t i = t * TILE; i < n && i < (t + 1) * TILE; ++i)
      dst[offset + i] = src[i];
}
