//===- torchscript_fuzzer.cpp - TorchScript archive bytes -> the importer -===//
//
// Input: one line of input specs ("2x4xf32 1x3xi64", optionally "0:0" for a
// dynamic dim, as `turbine compile --input-shape/--dynamic-dim` take them),
// a newline, then the bytes of a TorchScript archive (a zip file). Before
// loading, the CRC-32 of every stored (uncompressed) zip entry is
// recomputed in the local and central headers, so mutations of the pickles
// and the serialized code reach libtorch's parsers instead of all stopping
// at a CRC mismatch (the seeds are stored uncompressed: make_seeds.sh).
//
// importTorchScriptBytes dlopens the loader module (libtorch:
// torch::jit::load, freeze, inline, then the copy into TorchGraph structs)
// and imports the graph into MLIR, which must verify. libtorch itself is not
// instrumented: a crash inside it is libtorch's, not Turbine's, and
// run_fuzz.sh files such crashes separately (by the frames of the report).
//===----------------------------------------------------------------------===//
#include "turbine/frontends/torch/TorchImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>

namespace {

constexpr int kInputsPerContext = 200;

void check(bool condition, const std::string &what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
    std::abort();
  }
}

uint32_t crc32(const uint8_t *p, size_t n) {
  static uint32_t table[256];
  static bool ready = false;
  if (!ready) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = true;
  }
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i)
    c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t u32(const std::string &s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
uint16_t u16(const std::string &s, size_t at) {
  uint16_t v;
  std::memcpy(&v, s.data() + at, 2);
  return v;
}

/// Recomputes the CRC-32 of every stored entry listed in the central
/// directory (see the file comment); leaves anything malformed alone.
void fixZipCrcs(std::string &zip) {
  if (zip.size() < 22)
    return;
  size_t eocd = std::string::npos;
  for (size_t i = zip.size() - 22 + 1; i-- > 0 && zip.size() - i <= 22 + 65535;)
    if (u32(zip, i) == 0x06054b50u) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos)
    return;
  uint16_t count = u16(zip, eocd + 10);
  size_t at = u32(zip, eocd + 16);
  for (uint16_t e = 0; e < count; ++e) {
    if (at > zip.size() || zip.size() - at < 46 || u32(zip, at) != 0x02014b50u)
      return;
    uint16_t method = u16(zip, at + 10);
    uint32_t size = u32(zip, at + 20);
    size_t local = u32(zip, at + 42);
    size_t next = at + 46 + u16(zip, at + 28) + u16(zip, at + 30) + u16(zip, at + 32);
    if (method == 0 && local <= zip.size() && zip.size() - local >= 30 &&
        u32(zip, local) == 0x04034b50u) {
      size_t dataAt = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
      if (dataAt <= zip.size() && zip.size() - dataAt >= size) {
        uint32_t crc = crc32(reinterpret_cast<const uint8_t *>(zip.data()) + dataAt, size);
        std::memcpy(&zip[at + 16], &crc, 4);
        std::memcpy(&zip[local + 14], &crc, 4);
      }
    }
    at = next;
  }
}

std::unique_ptr<mlir::MLIRContext> &context() {
  static std::unique_ptr<mlir::MLIRContext> ctx;
  static int uses = 0;
  if (!ctx || ++uses > kInputsPerContext) {
    ctx.reset();
    ctx = std::make_unique<mlir::MLIRContext>(mlir::MLIRContext::Threading::DISABLED);
    turbine::torch_frontend::registerImportedDialects(*ctx);
    uses = 1;
  }
  return ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string input(reinterpret_cast<const char *>(data), size);
  size_t newline = input.find('\n');
  if (newline == std::string::npos || newline > 256)
    return 0;
  turbine::torch_frontend::ImportOptions options;
  std::istringstream specs(input.substr(0, newline));
  std::string token;
  while (specs >> token) {
    if (token.find(':') != std::string::npos) {
      auto dim = turbine::torch_frontend::parseDynamicDim(token);
      if (!dim)
        return 0;
      options.dynamicDims.push_back(*dim);
    } else {
      auto parsed = turbine::torch_frontend::parseInputSpec(token);
      if (!parsed)
        return 0;
      turbine::torch_frontend::InputSpec &spec = *parsed;
      int64_t elements = 1;
      for (int64_t d : spec.shape) {
        if (d > (1 << 16))
          return 0;
        elements *= d;
        if (elements > (1 << 16))
          return 0; // shapes are examples for the importer; keep them small
      }
      options.inputs.push_back(spec);
    }
  }
  std::string archive = input.substr(newline + 1);
  fixZipCrcs(archive);
  mlir::MLIRContext &ctx = *context();
  mlir::ScopedDiagnosticHandler quiet(&ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  auto module = turbine::torch_frontend::importTorchScriptBytes(ctx, archive, "fuzz.pt", options);
  if (!module) {
    const std::string &error = module.message();
    check(!error.empty(), "an import error without a message");
    // An archive can carry the words itself (a name quoted in the error;
    // libFuzzer learns them from this very comparison).
    bool archiveSaysIt = input.find("internal error") != std::string::npos;
    check(archiveSaysIt || error.find("internal error") == std::string::npos,
          "importer bug: " + error);
    return 0;
  }
  check(mlir::succeeded(mlir::verify(**module)), "an imported module does not verify");
  return 0;
}
