//===- GgufBuilder.h - GGUF files assembled byte by byte, for tests -------===//
//
// A GGUF v2/v3 writer for tests, written from the public layout
// (ggml/docs/gguf.md) and independent of the runtime's reader: metadata
// key/values as raw payloads, tensors with their ggml type and bytes. It
// records the offsets of interesting fields so corruption tests can
// overwrite them. Used by GgufTest (the reader) and the compiler's
// GgufMatmulTest (weights bound from a GGUF file).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TESTS_UNIT_GGUFBUILDER_H
#define TURBINE_TESTS_UNIT_GGUFBUILDER_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace turbine::testing {

/// Appends little-endian values to a byte string.
struct Bytes {
  std::string data;
  template <typename T> size_t put(T value) {
    size_t at = data.size();
    data.append(reinterpret_cast<const char *>(&value), sizeof(T));
    return at;
  }
  size_t putString(const std::string &s) {
    size_t at = put<uint64_t>(s.size());
    data += s;
    return at;
  }
};

/// A GGUF writer for tests. Offsets of interesting fields are recorded so
/// corruption tests can overwrite them.
struct GgufBuilder {
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne; // innermost first
    uint32_t type;
    std::string bytes;
  };
  uint32_t version = 3;
  uint32_t alignment = 32;
  bool writeAlignmentKey = true;
  std::vector<std::pair<std::string, std::string>> kv; // key, type + payload
  std::vector<Tensor> tensors;

  // Filled by build():
  size_t tensorCountAt = 0, kvCountAt = 0, dataStart = 0, dataEnd = 0;
  std::vector<size_t> infoAt;   // per tensor: start of its info (name length)
  std::vector<size_t> ndimsAt;  // per tensor: n_dims field
  std::vector<size_t> offsetAt; // per tensor: offset field

  void addKv(const std::string &key, uint32_t type, const std::string &payload) {
    Bytes b;
    b.put(type);
    kv.emplace_back(key, b.data + payload);
  }
  template <typename T> void addScalar(const std::string &key, uint32_t type, T value) {
    Bytes b;
    b.put(value);
    addKv(key, type, b.data);
  }
  void addTensor(std::string name, std::vector<uint64_t> ne, uint32_t type, std::string bytes) {
    tensors.push_back({std::move(name), std::move(ne), type, std::move(bytes)});
  }

  std::string build() {
    Bytes b;
    b.data = "GGUF";
    b.put(version);
    tensorCountAt = b.put<uint64_t>(tensors.size());
    kvCountAt = b.put<uint64_t>(kv.size() + (writeAlignmentKey ? 1 : 0));
    if (writeAlignmentKey) {
      b.putString("general.alignment");
      b.put<uint32_t>(4);
      b.put<uint32_t>(alignment);
    }
    for (auto &[key, value] : kv) {
      b.putString(key);
      b.data += value;
    }
    uint64_t offset = 0;
    infoAt.clear(), ndimsAt.clear(), offsetAt.clear();
    for (const Tensor &t : tensors) {
      infoAt.push_back(b.putString(t.name));
      ndimsAt.push_back(b.put<uint32_t>(t.ne.size()));
      for (uint64_t d : t.ne)
        b.put(d);
      b.put(t.type);
      offsetAt.push_back(b.put(offset));
      offset += (t.bytes.size() + alignment - 1) / alignment * alignment;
    }
    b.data.resize((b.data.size() + alignment - 1) / alignment * alignment, '\0');
    dataStart = b.data.size();
    for (const Tensor &t : tensors) {
      b.data += t.bytes;
      dataEnd = b.data.size();
      b.data.resize((b.data.size() + alignment - 1) / alignment * alignment, '\0');
    }
    return b.data;
  }
};

} // namespace turbine::testing

#endif // TURBINE_TESTS_UNIT_GGUFBUILDER_H
