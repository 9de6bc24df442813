// SPDX-License-Identifier: MIT
// loaded_objects.cpp - walks the dynamic linker's list of mapped objects and reads each one's
// build ID and dependencies from its mapped program headers.
#include "support/libraries/loaded_objects.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <new>

#include "support/files/unique_fd.h"

namespace hipacm::backend {
namespace {

// Notes and string tables are bounded before they are read: a damaged object must not send the
// reader past its mapping.
constexpr std::size_t kMaxBuildIdBytes = 64;
constexpr std::size_t kMaxNeededEntries = 256;
constexpr std::size_t kMaxSonameLength = 4096;
constexpr std::size_t kMaxProgramHeaders = 256;
constexpr std::size_t kMaxNoteBytes = 64 * 1024;

std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

std::string hex(const unsigned char* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

std::string build_id_in(const unsigned char* notes, std::size_t size) {
  std::size_t offset = 0;
  while (size - offset >= sizeof(ElfW(Nhdr))) {
    ElfW(Nhdr) header;
    std::memcpy(&header, notes + offset, sizeof header);
    offset += sizeof header;
    const std::size_t name_size = align4(header.n_namesz);
    const std::size_t desc_size = align4(header.n_descsz);
    if (name_size > size - offset || desc_size > size - offset - name_size) break;
    const bool gnu = header.n_namesz == 4 && std::memcmp(notes + offset, "GNU", 4) == 0;
    if (gnu && header.n_type == NT_GNU_BUILD_ID && header.n_descsz > 0 &&
        header.n_descsz <= kMaxBuildIdBytes)
      return hex(notes + offset + name_size, header.n_descsz);
    offset += name_size + desc_size;
  }
  return {};
}

// glibc rewrites DT_STRTAB to an absolute address when it relocates an object; other loaders
// leave the file's virtual address. Either way the result is an address inside the object.
const char* string_table(const dl_phdr_info& info, const ElfW(Dyn) * dynamic) {
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag != DT_STRTAB) continue;
    ElfW(Addr) address = entry->d_un.d_ptr;
    if (address < info.dlpi_addr) address += info.dlpi_addr;
    return reinterpret_cast<const char*>(address);
  }
  return nullptr;
}

std::vector<std::string> needed_in(const dl_phdr_info& info, const ElfW(Dyn) * dynamic) {
  std::vector<std::string> needed;
  const char* strings = string_table(info, dynamic);
  if (strings == nullptr) return needed;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag != DT_NEEDED || needed.size() >= kMaxNeededEntries) continue;
    const char* name = strings + entry->d_un.d_val;
    needed.emplace_back(name, ::strnlen(name, kMaxSonameLength));
  }
  return needed;
}

LoadedObject describe(const dl_phdr_info& info) {
  LoadedObject object;
  object.path = info.dlpi_name;
  for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info.dlpi_phdr[i];
    const auto* start = reinterpret_cast<const unsigned char*>(info.dlpi_addr + segment.p_vaddr);
    if (segment.p_type == PT_NOTE && object.build_id.empty())
      object.build_id = build_id_in(start, segment.p_memsz);
    else if (segment.p_type == PT_DYNAMIC)
      object.needed = needed_in(info, reinterpret_cast<const ElfW(Dyn)*>(start));
  }
  return object;
}

struct Walk {
  std::vector<LoadedObject> objects;
  const void* address = nullptr;  // when set: keep only the object containing it
  bool out_of_memory = false;
};

bool contains(const dl_phdr_info& info, const void* address) {
  const auto target = reinterpret_cast<ElfW(Addr)>(address);
  for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info.dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const ElfW(Addr) start = info.dlpi_addr + segment.p_vaddr;
    if (target >= start && target - start < segment.p_memsz) return true;
  }
  return false;
}

// Runs inside the dynamic linker's lock, called from C: nothing may unwind out of it.
int visit(dl_phdr_info* info, std::size_t, void* data) noexcept {
  auto* walk = static_cast<Walk*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
  if (walk->address != nullptr && !contains(*info, walk->address)) return 0;
  try {
    walk->objects.push_back(describe(*info));
  } catch (...) {
    walk->out_of_memory = true;
    return 1;
  }
  return walk->address != nullptr ? 1 : 0;
}

Walk walk_objects(const void* address) {
  Walk walk;
  walk.address = address;
  ::dl_iterate_phdr(&visit, &walk);
  if (walk.out_of_memory) throw std::bad_alloc();
  return walk;
}

}  // namespace

std::vector<LoadedObject> loaded_objects() { return walk_objects(nullptr).objects; }

std::optional<LoadedObject> loaded_object_containing(const void* address) {
  Walk walk = walk_objects(address);
  if (walk.objects.empty()) return std::nullopt;
  return std::move(walk.objects.front());
}

std::string file_base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

namespace {

bool read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset) {
  auto* bytes = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t got = ::pread(fd, bytes, size, static_cast<off_t>(offset));
    if (got <= 0) return false;
    bytes += got;
    size -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

}  // namespace

std::string file_build_id(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  Elf64_Ehdr header{};
  if (!read_at(fd.get(), &header, sizeof header, 0)) return {};
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phnum > kMaxProgramHeaders)
    return {};
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  if (!read_at(fd.get(), segments.data(), segments.size() * sizeof(Elf64_Phdr), header.e_phoff))
    return {};
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_NOTE || segment.p_filesz > kMaxNoteBytes) continue;
    std::vector<unsigned char> notes(segment.p_filesz);
    if (!read_at(fd.get(), notes.data(), notes.size(), segment.p_offset)) continue;
    if (std::string id = build_id_in(notes.data(), notes.size()); !id.empty()) return id;
  }
  return {};
}

}  // namespace hipacm::backend
