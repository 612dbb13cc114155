// The seam of clblast_binary_cache.hpp. CLBlast 1.5.3's cache.hpp declares
//   template <typename Key, typename Value> class Cache {
//     template <typename U> Value Get(const U& key, bool* in_cache) const;
//     void Store(Key&& key, Value&& value);   // throws when the key is there already
//     static Cache& Instance(); ... };
// with Key = std::tuple<cl_platform_id, Precision, std::string, std::string> and Value = std::string
// for its binaries, and libclblast exports those three members. They are called here as the
// functions they are in the Itanium C++ ABI (Linux, BSDs, macOS): `this` first, after the hidden
// return slot of a class returned by value. The symbol names carry the full types, so they are
// found only where the types are these (libstdc++'s C++11 std::string).
#include "blas/clblast_binary_cache.hpp"

#include <clblast.h>

#include <string>
#include <tuple>

#include "util/process.hpp"

namespace anycl::detail::clblast_binaries {

#if defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI && !defined(_WIN32)
namespace {

using Key = std::tuple<cl_platform_id, clblast::Precision, std::string, std::string>;
using KeyRef =
    std::tuple<const cl_platform_id&, const clblast::Precision&, const std::string&, const std::string&>;
using InstanceFn = void* (*)();
using GetFn = std::string (*)(const void* cache, const KeyRef& key, bool* in_cache);
using StoreFn = void (*)(void* cache, Key&& key, std::string&& value);

#define ANYCL_CLBLAST_BINARY_CACHE                                                               \
  "clblast5CacheISt5tupleIJP15_cl_platform_idNS_9PrecisionENSt7__cxx1112basic_stringIcSt11char_" \
  "traitsIcESaIcEEESA_EESA_E"
constexpr const char* kInstance = "_ZN7" ANYCL_CLBLAST_BINARY_CACHE "8InstanceEv";
constexpr const char* kGet = "_ZNK7" ANYCL_CLBLAST_BINARY_CACHE "3GetIS1_IJRKS3_RKS4_RKSA_SJ_EEEESA_RKT_Pb";
constexpr const char* kStore = "_ZN7" ANYCL_CLBLAST_BINARY_CACHE "5StoreEOSB_OSA_";
#undef ANYCL_CLBLAST_BINARY_CACHE

struct Members {
  void* cache = nullptr;
  GetFn get = nullptr;
  StoreFn store = nullptr;
};

const Members* members() noexcept {
  static const Members found = [] {
    Members m;
    const auto instance = reinterpret_cast<InstanceFn>(platform::find_loaded_symbol(kInstance));
    m.get = reinterpret_cast<GetFn>(platform::find_loaded_symbol(kGet));
    m.store = reinterpret_cast<StoreFn>(platform::find_loaded_symbol(kStore));
    if (instance && m.get && m.store) m.cache = instance();
    return m;
  }();
  return found.cache ? &found : nullptr;
}

constexpr clblast::Precision kSingle = clblast::Precision::kSingle;

// Cache<std::tuple<cl_context, cl_device_id, Precision, std::string>, std::shared_ptr<Program>>::Invalidate()
constexpr const char* kInvalidatePrograms =
    "_ZN7clblast5CacheISt5tupleIJP11_cl_contextP13_cl_device_idNS_9PrecisionENSt7__cxx1112basic_"
    "stringIcSt11char_"
    "traitsIcESaIcEEEEESt10shared_ptrINS_7ProgramEEE10InvalidateEv";
constexpr const char* kProgramsInstance =
    "_ZN7clblast5CacheISt5tupleIJP11_cl_contextP13_cl_device_idNS_9PrecisionENSt7__cxx1112basic_"
    "stringIcSt11char_"
    "traitsIcESaIcEEEEESt10shared_ptrINS_7ProgramEEE8InstanceEv";
using InvalidateFn = void (*)(void* cache);

}  // namespace

bool forget_programs() noexcept {
  static const auto instance = reinterpret_cast<InstanceFn>(platform::find_loaded_symbol(kProgramsInstance));
  static const auto invalidate =
      reinterpret_cast<InvalidateFn>(platform::find_loaded_symbol(kInvalidatePrograms));
  if (!instance || !invalidate) return false;
  try {
    invalidate(instance());
    return true;
  } catch (...) {
    return false;
  }
}

bool reachable() noexcept { return members() != nullptr; }

bool get(cl_platform_id platform, const char* routine, const char* device, Sink sink,
         void* context) noexcept {
  const Members* m = members();
  if (!m) return false;
  try {
    const std::string r(routine), d(device);
    bool in_cache = false;
    const std::string binary = m->get(m->cache, KeyRef(platform, kSingle, r, d), &in_cache);
    if (in_cache) sink(context, binary.data(), binary.size());
    return in_cache;
  } catch (...) {
    return false;
  }
}

bool put(cl_platform_id platform, const char* routine, const char* device, const char* bytes,
         size_t size) noexcept {
  const Members* m = members();
  if (!m) return false;
  try {
    std::string r(routine), d(device);
    bool in_cache = false;
    (void)m->get(m->cache, KeyRef(platform, kSingle, r, d), &in_cache);
    if (in_cache) return true;
    m->store(m->cache, Key(platform, kSingle, std::move(r), std::move(d)), std::string(bytes, size));
    return true;
  } catch (...) {  // another thread stored it first (CLBlast throws on a second Store)
    return false;
  }
}

#else  // another standard library or Windows: CLBlast's cache is out of reach

bool reachable() noexcept { return false; }
bool get(cl_platform_id, const char*, const char*, Sink, void*) noexcept { return false; }
bool put(cl_platform_id, const char*, const char*, const char*, size_t) noexcept { return false; }
bool forget_programs() noexcept { return false; }

#endif

}  // namespace anycl::detail::clblast_binaries
