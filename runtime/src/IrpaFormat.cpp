//===- IrpaFormat.cpp - IREE parameter archives (.irpa) -------------------===//
//
// The layout of IREE's iree/schemas/parameter_archive.h, version 0: a packed
// little-endian header (magic "IRPA"), a table of 16-byte aligned entries
// (SKIP, SPLAT, DATA; EXTERNAL is refused), a metadata segment holding names
// and metadata blobs, and a storage segment holding the data. Offsets in a
// header are relative to that header; headers may be linked. Written the way
// IREE's builder writes them: data 64-byte aligned, file padded to 4096.
//===----------------------------------------------------------------------===//
#include "ParameterFormats.h"

#include <cstring>
#include <set>

namespace turbine::runtime {

namespace {

constexpr uint32_t kMagic = 0x41505249u; // "IRPA" little-endian
constexpr uint64_t kEntryAlignment = 16;
constexpr uint64_t kHeaderAlignment = 16;
constexpr uint64_t kDataAlignment = 64;
constexpr uint64_t kFileAlignment = 4096;

enum EntryType : uint32_t { kSkip = 0, kSplat = 1, kData = 2, kExternal = 3 };

#pragma pack(push, 1)
struct Range {
  uint64_t offset;
  uint64_t length;
};
struct HeaderPrefix {
  uint32_t magic;
  uint16_t versionMajor;
  uint16_t versionMinor;
  uint64_t headerSize;
  uint64_t nextHeaderOffset;
  uint64_t flags;
};
struct HeaderV0 {
  HeaderPrefix prefix;
  uint64_t entryCount;
  Range entrySegment;
  Range metadataSegment;
  Range storageSegment;
};
struct EntryHeader {
  uint64_t entrySize;
  uint32_t type;
  uint64_t flags;
  Range name;
  Range metadata;
  uint64_t minimumAlignment;
};
struct SplatEntry {
  EntryHeader header;
  uint64_t length;
  uint8_t pattern[16];
  uint8_t patternLength;
};
struct DataEntry {
  EntryHeader header;
  Range storage;
};
#pragma pack(pop)
static_assert(sizeof(HeaderPrefix) == 32 && sizeof(HeaderV0) == 88);
static_assert(sizeof(EntryHeader) == 60 && sizeof(SplatEntry) == 85 &&
              sizeof(DataEntry) == 76);

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// True when [offset, offset + length) lies inside [0, limit).
bool rangeWithin(uint64_t offset, uint64_t length, uint64_t limit) {
  return offset <= limit && length <= limit - offset;
}

template <typename T> T readPacked(const uint8_t *at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

/// Parses the archive whose header starts at `headerOffset`; returns the
/// absolute offset of the next linked header, or 0.
Result<uint64_t> parseOneArchive(const uint8_t *base, uint64_t size, uint64_t headerOffset,
                                 const std::string &origin,
                                 std::vector<ParameterEntry> &entries) {
  auto bad = [&](const std::string &what) {
    return Status::error("corrupt parameter archive '" + origin + "' (header at offset " +
                         std::to_string(headerOffset) + "): " + what);
  };
  if (!rangeWithin(headerOffset, sizeof(HeaderPrefix), size))
    return bad("truncated header");
  auto prefix = readPacked<HeaderPrefix>(base + headerOffset);
  if (prefix.magic != kMagic)
    return bad("bad magic (not an IRPA header)");
  if (prefix.versionMajor != 0)
    return Status::error("parameter archive '" + origin + "' has version " +
                         std::to_string(prefix.versionMajor) + "." +
                         std::to_string(prefix.versionMinor) +
                         "; this build reads version 0 archives");
  if (prefix.headerSize < sizeof(HeaderV0) ||
      !rangeWithin(headerOffset, prefix.headerSize, size))
    return bad("header size " + std::to_string(prefix.headerSize) + " is out of range");
  auto header = readPacked<HeaderV0>(base + headerOffset);
  const uint64_t archiveSize = size - headerOffset;
  const uint8_t *archive = base + headerOffset;
  for (auto [segment, label] : {std::pair{header.entrySegment, "entry"},
                                {header.metadataSegment, "metadata"},
                                {header.storageSegment, "storage"}})
    if (!rangeWithin(segment.offset, segment.length, archiveSize))
      return bad(std::string(label) + " segment [" + std::to_string(segment.offset) + ", +" +
                 std::to_string(segment.length) + ") is outside the file (" +
                 std::to_string(size) + " bytes)");

  auto metadataString = [&](const Range &ref, std::string &out) {
    if (!rangeWithin(ref.offset, ref.length, header.metadataSegment.length))
      return false;
    out.assign(reinterpret_cast<const char *>(archive + header.metadataSegment.offset +
                                              ref.offset),
               ref.length);
    return true;
  };

  uint64_t position = 0;
  for (uint64_t i = 0; i < header.entryCount; ++i) {
    position = alignUp(position, kEntryAlignment);
    std::string where = "entry " + std::to_string(i);
    if (!rangeWithin(position, sizeof(EntryHeader), header.entrySegment.length))
      return bad(where + " lies outside the entry table (" +
                 std::to_string(header.entryCount) + " entries declared)");
    const uint8_t *at = archive + header.entrySegment.offset + position;
    auto entryHeader = readPacked<EntryHeader>(at);
    if (entryHeader.entrySize < sizeof(EntryHeader) ||
        !rangeWithin(position, entryHeader.entrySize, header.entrySegment.length))
      return bad(where + " has size " + std::to_string(entryHeader.entrySize) +
                 ", outside the entry table");
    position += entryHeader.entrySize;
    if (entryHeader.type == kSkip)
      continue;

    ParameterEntry entry;
    if (!metadataString(entryHeader.name, entry.name))
      return bad(where + ": name is outside the metadata segment");
    where += " '" + entry.name + "'";
    if (!metadataString(entryHeader.metadata, entry.metadata))
      return bad(where + ": metadata is outside the metadata segment");

    if (entryHeader.type == kSplat) {
      if (entryHeader.entrySize < sizeof(SplatEntry))
        return bad(where + ": splat entry is truncated");
      auto splat = readPacked<SplatEntry>(at);
      uint8_t n = splat.patternLength;
      if (n == 0 || n > 16 || (n & (n - 1)) != 0)
        return bad(where + ": splat pattern length " + std::to_string(n) +
                   " (must be 1, 2, 4, 8 or 16)");
      if (splat.length % n != 0)
        return bad(where + ": splat length " + std::to_string(splat.length) +
                   " is not a multiple of its pattern length " + std::to_string(n));
      entry.kind = ParameterEntry::Kind::splat;
      entry.length = splat.length;
      std::memcpy(entry.pattern.data(), splat.pattern, 16);
      entry.patternLength = n;
    } else if (entryHeader.type == kData) {
      if (entryHeader.entrySize < sizeof(DataEntry))
        return bad(where + ": data entry is truncated");
      auto data = readPacked<DataEntry>(at);
      if (!rangeWithin(data.storage.offset, data.storage.length,
                       header.storageSegment.length))
        return bad(where + ": data [" + std::to_string(data.storage.offset) + ", +" +
                   std::to_string(data.storage.length) +
                   ") is outside the storage segment (" +
                   std::to_string(header.storageSegment.length) + " bytes)");
      entry.kind = ParameterEntry::Kind::data;
      entry.length = data.storage.length;
      entry.fileOffset = headerOffset + header.storageSegment.offset + data.storage.offset;
      entry.bytes = base + entry.fileOffset;
    } else if (entryHeader.type == kExternal) {
      return Status::error("parameter archive '" + origin + "': " + where +
                           " refers to an external file; external entries are not "
                           "supported (repack the archive with its data)");
    } else {
      return bad(where + " has unknown type " + std::to_string(entryHeader.type));
    }
    if (auto typed = decodeTensorTypeMetadata(entry); !typed)
      return bad(typed.message());
    entries.push_back(std::move(entry));
  }

  if (prefix.nextHeaderOffset == 0)
    return uint64_t(0);
  // Links only go forward, so a corrupt chain cannot loop.
  if (prefix.nextHeaderOffset % kHeaderAlignment != 0 ||
      prefix.nextHeaderOffset > archiveSize)
    return bad("next header offset " + std::to_string(prefix.nextHeaderOffset) +
               " is out of range");
  return headerOffset + prefix.nextHeaderOffset;
}

} // namespace

bool hasIrpaMagic(const uint8_t *base, uint64_t size) {
  return size >= 4 && readPacked<uint32_t>(base) == kMagic;
}

Result<std::vector<ParameterEntry>> parseIrpa(const uint8_t *base, uint64_t size,
                                              const std::string &origin) {
  std::vector<ParameterEntry> entries;
  uint64_t headerOffset = 0;
  do {
    auto next = parseOneArchive(base, size, headerOffset, origin, entries);
    if (!next)
      return next.status();
    headerOffset = *next;
  } while (headerOffset != 0);
  std::set<std::string> names;
  for (const ParameterEntry &entry : entries)
    if (!names.insert(entry.name).second)
      return Status::error("parameter archive '" + origin + "' holds '" + entry.name +
                           "' twice");
  return entries;
}

Status writeIrpa(AtomicFileWriter &out, const std::vector<ParameterEntry> &entries) {
  // Plan the segments: entry table, then names + metadata, then the data.
  std::vector<std::string> blobs; // per entry: metadata blob written
  uint64_t entryTableSize = 0, metadataSize = 0, storageSize = 0;
  std::vector<uint64_t> dataOffsets;
  for (const ParameterEntry &entry : entries) {
    blobs.push_back(entry.hasTensorType() ? encodeTensorTypeMetadata(*entry.dtype, entry.shape)
                                          : entry.metadata);
    entryTableSize = alignUp(entryTableSize, kEntryAlignment) +
                     (entry.kind == ParameterEntry::Kind::splat ? sizeof(SplatEntry)
                                                                : sizeof(DataEntry));
    metadataSize += entry.name.size() + blobs.back().size();
    if (entry.kind == ParameterEntry::Kind::data) {
      storageSize = alignUp(storageSize, kDataAlignment);
      dataOffsets.push_back(storageSize);
      storageSize += entry.length;
    } else {
      dataOffsets.push_back(0);
    }
  }
  HeaderV0 header{};
  header.prefix = {kMagic, 0, 0, sizeof(HeaderV0), 0, 0};
  header.entryCount = entries.size();
  header.entrySegment = {alignUp(sizeof(HeaderV0), kEntryAlignment), entryTableSize};
  header.metadataSegment = {header.entrySegment.offset + entryTableSize, metadataSize};
  header.storageSegment = {alignUp(header.metadataSegment.offset + metadataSize, kDataAlignment),
                           storageSize};

  if (Status s = out.write(&header, sizeof(header)); !s)
    return s;
  uint64_t metadataOffset = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ParameterEntry &entry = entries[i];
    if (Status s = out.pad(alignUp(out.offset(), kEntryAlignment) - out.offset()); !s)
      return s;
    EntryHeader entryHeader{};
    entryHeader.name = {metadataOffset, entry.name.size()};
    metadataOffset += entry.name.size();
    entryHeader.metadata = {blobs[i].empty() ? 0 : metadataOffset, blobs[i].size()};
    metadataOffset += blobs[i].size();
    if (entry.kind == ParameterEntry::Kind::splat) {
      SplatEntry splat{};
      entryHeader.entrySize = sizeof(SplatEntry);
      entryHeader.type = kSplat;
      splat.header = entryHeader;
      splat.length = entry.length;
      std::memcpy(splat.pattern, entry.pattern.data(), 16);
      splat.patternLength = entry.patternLength;
      if (Status s = out.write(&splat, sizeof(splat)); !s)
        return s;
    } else {
      DataEntry data{};
      entryHeader.entrySize = sizeof(DataEntry);
      entryHeader.type = kData;
      entryHeader.minimumAlignment = kDataAlignment;
      data.header = entryHeader;
      data.storage = {dataOffsets[i], entry.length};
      if (Status s = out.write(&data, sizeof(data)); !s)
        return s;
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (Status s = out.write(entries[i].name.data(), entries[i].name.size()); !s)
      return s;
    if (Status s = out.write(blobs[i].data(), blobs[i].size()); !s)
      return s;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].kind != ParameterEntry::Kind::data)
      continue;
    uint64_t target = header.storageSegment.offset + dataOffsets[i];
    if (Status s = out.pad(target - out.offset()); !s)
      return s;
    if (Status s = out.write(entries[i].bytes, entries[i].length); !s)
      return s;
  }
  return out.pad(alignUp(out.offset(), kFileAlignment) - out.offset());
}

} // namespace turbine::runtime
