/*===- fake_cuda_driver.c - A stand-in CUDA driver for runtime tests -----===//
 *
 * Implements the driver entry points the cuda device resolves, with host
 * memory for device memory, so CudaDeviceTest can drive the device on a
 * machine without a GPU ($TURBINE_CUDA_DRIVER points at this library). It
 * records what the device asked for (allocations, copies, module images,
 * launch geometry) in fake_cuda_stats, and "runs" only test_add_f32 (out =
 * a + b over the constant n) so values go through uploads and downloads.
 * Knobs: $FAKE_CUDA_CC (compute capability, default 80),
 * $FAKE_CUDA_REJECT_CUBIN (cubin loads fail with CUDA_ERROR_NO_BINARY_FOR_GPU).
 * Nothing here says anything about real GPUs.
 *===----------------------------------------------------------------------===*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int allocs, frees, h2d, d2h, launches, moduleLoads, ptxLoads, cubinLoads;
  unsigned grid[3], block[3];
  int64_t lastCounts[3];
} fake_cuda_stats_t;

fake_cuda_stats_t fake_cuda_stats;

static int cc(void) {
  const char *t = getenv("FAKE_CUDA_CC");
  return t ? atoi(t) : 80;
}

int cuInit(unsigned f) { (void)f; return 0; }
int cuDriverGetVersion(int *v) { *v = 12000; return 0; }
int cuGetErrorName(int r, const char **s) { (void)r; *s = "FAKE_ERROR"; return 0; }
int cuGetErrorString(int r, const char **s) { (void)r; *s = "fake driver error"; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int o) { *d = o; return o == 0 ? 0 : 101; }
int cuDeviceGetName(char *s, int n, int d) { (void)d; strncpy(s, "Fake GPU", (size_t)n); return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) {
  (void)d;
  if (a == 75) { *v = cc() / 10; return 0; }
  if (a == 76) { *v = cc() % 10; return 0; }
  return 1;
}
static int context;
int cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &context; return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
int cuCtxSetCurrent(void *c) { (void)c; return 0; }
static int stream;
int cuStreamCreate(void **s, unsigned f) { (void)f; *s = &stream; return 0; }
int cuStreamDestroy_v2(void *s) { (void)s; return 0; }
int cuStreamSynchronize(void *s) { (void)s; return 0; }
int cuMemAlloc_v2(unsigned long long *p, size_t n) {
  void *m = malloc(n);
  if (!m) return 2;
  fake_cuda_stats.allocs++;
  *p = (unsigned long long)(uintptr_t)m;
  return 0;
}
int cuMemFree_v2(unsigned long long p) { fake_cuda_stats.frees++; free((void *)(uintptr_t)p); return 0; }
int cuMemcpyHtoDAsync_v2(unsigned long long d, const void *s, size_t n, void *st) {
  (void)st;
  fake_cuda_stats.h2d++;
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
int cuMemcpyDtoHAsync_v2(void *d, unsigned long long s, size_t n, void *st) {
  (void)st;
  fake_cuda_stats.d2h++;
  memcpy(d, (const void *)(uintptr_t)s, n);
  return 0;
}
static int module;
int cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *o, void **v) {
  (void)n; (void)o; (void)v;
  if (memcmp(image, "\x7f" "ELF", 4) == 0) {
    if (getenv("FAKE_CUDA_REJECT_CUBIN")) return 209;
    fake_cuda_stats.cubinLoads++;
  } else {
    fake_cuda_stats.ptxLoads++;
  }
  fake_cuda_stats.moduleLoads++;
  *m = &module;
  return 0;
}
int cuModuleUnload(void *m) { (void)m; return 0; }
/* A function handle is its name (the test's kernels have static names). */
int cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)m;
  static const char *known[] = {"test_add_f32", "test_scale_f32", "test_count_workgroups"};
  for (int i = 0; i < 3; ++i)
    if (strcmp(name, known[i]) == 0) { *f = (void *)known[i]; return 0; }
  return 500; /* CUDA_ERROR_NOT_FOUND */
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *s, void **params, void **extra) {
  (void)shared; (void)s; (void)extra;
  fake_cuda_stats.launches++;
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  memcpy(fake_cuda_stats.grid, g, sizeof(g));
  memcpy(fake_cuda_stats.block, b, sizeof(b));
  if (strcmp((const char *)f, "test_add_f32") == 0) {
    /* (a, b, out, n, count x, count y, count z) */
    const float *a = (const float *)(uintptr_t)*(unsigned long long *)params[0];
    const float *bb = (const float *)(uintptr_t)*(unsigned long long *)params[1];
    float *out = (float *)(uintptr_t)*(unsigned long long *)params[2];
    int64_t n = *(int64_t *)params[3];
    for (int i = 0; i < 3; ++i)
      fake_cuda_stats.lastCounts[i] = *(int64_t *)params[4 + i];
    for (int64_t i = 0; i < n; ++i)
      out[i] = a[i] + bb[i];
  }
  return 0;
}
