// Model file writer and validating reader. Layout (docs/model-format.md):
//   "ANYCLMDL" | u32 version (1; 2 with a loss line; 3 with an input_shape line) | u32 L | L bytes
//   architecture text | u64 N | N × f32 | u64 FNV-1a
// All integers and floats little-endian; the checksum covers every byte before it.
#include "anycl/train/model_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "anycl/error.hpp"
#include "anycl/losses/loss.hpp"
#include "anycl/nn/registry.hpp"
#include "anycl/util/bounded_read.hpp"
#include "atomic_file.hpp"
#include "hash.hpp"

namespace anycl {
namespace {

constexpr char kMagic[8] = {'A', 'N', 'Y', 'C', 'L', 'M', 'D', 'L'};
constexpr size_t kMaxArchitectureBytes = 1 << 20;

void put_le(std::vector<unsigned char>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back((unsigned char)(v >> (8 * i)));
}

constexpr const char* kDefaultLoss = "softmax_cross_entropy";

// Version 1 files have no loss line (they are all softmax cross-entropy); a model with another
// loss is written as version 2, so that an older anycl says "upgrade" instead of misreading it.
// Likewise a model over images (an input_shape line, e.g. a CNN) is version 3; MLP files stay as they were.
uint32_t version_for(const ModelSpec& spec) {
  if (!spec.input_shape.empty()) return 3;
  return spec.loss == kDefaultLoss ? 1 : 2;
}

// A regression model's `classes` line holds its number of outputs (a count of 0, as releases
// before this one wrote for regressors, made the file unreadable).
size_t classes_field(const ModelSpec& spec, size_t num_classes) {
  if (spec.loss == kDefaultLoss || num_classes != 0) return num_classes;
  return Sequential(spec).output_features();
}

std::string architecture_text(const ModelSpec& spec, size_t num_classes) {
  num_classes = classes_field(spec, num_classes);
  std::string text = fmt::format("input {}\n", spec.input_features);
  if (!spec.input_shape.empty()) text += fmt::format("input_shape {}\n", fmt::join(spec.input_shape, " "));
  text += fmt::format("classes {}\n", num_classes);
  if (spec.loss != kDefaultLoss) text += fmt::format("loss {}\n", spec.loss);
  for (const LayerSpec& l : spec.layers) text += l.text() + "\n";
  return text;
}

// Reads little-endian fields from the file's bytes, failing with the file's name when short.
class Reader {
 public:
  Reader(const std::string& path, const std::vector<unsigned char>& bytes) : path_(path), bytes_(bytes) {}
  uint64_t le(int n, const char* what) {
    need(size_t(n), what);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(bytes_[pos_ + size_t(i)]) << (8 * i);
    pos_ += size_t(n);
    return v;
  }
  std::string text(size_t n, const char* what) {
    need(n, what);
    std::string s(bytes_.begin() + long(pos_), bytes_.begin() + long(pos_ + n));
    pos_ += n;
    return s;
  }
  void need(size_t n, const char* what) const {
    if (bytes_.size() - pos_ < n)
      throw DataError(
          fmt::format("model file '{}' is truncated: it ends inside the {} ({} bytes) — re-save the model",
                      path_, what, bytes_.size()));
  }
  size_t pos() const { return pos_; }

 private:
  const std::string& path_;
  const std::vector<unsigned char>& bytes_;
  size_t pos_ = 0;
};

// Reads a size written in decimal, refusing anything that does not fit in 64 bits (and 0 unless
// `zero_ok`).
bool read_size(std::istringstream& words, size_t& out, bool zero_ok = false) {
  std::string word, extra;
  if (!(words >> word) || (words >> extra) || word.size() > 19 ||
      word.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = size_t(std::stoull(word));
  return out > 0 || zero_ok;
}

// A line of the file as a message may quote it: bytes outside printable ASCII as \xNN, so a NUL
// cannot cut the message short and no invalid UTF-8 reaches it; long lines are shortened.
std::string quoted(const std::string& line, bool ascii = true) {
  std::string out;
  const size_t limit = ascii ? 200 : line.size();
  for (size_t i = 0; i < line.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if ((c >= 0x20 && c < 0x7F) || (!ascii && c >= 0x80))
      out += char(c);
    else
      out += fmt::format("\\x{:02X}", c);
  }
  if (line.size() > limit) out += "...";
  return out;
}

ModelSpec parse_architecture(const std::string& path, const std::string& text, size_t& num_classes) {
  auto bad = [&](const std::string& line, const std::string& why) {
    return DataError(fmt::format("model file '{}' has an invalid architecture line '{}': {}", path,
                                 quoted(line), quoted(why)));
  };
  ModelSpec spec;
  bool has_classes = false;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind.empty()) continue;
    if (kind == "input") {
      if (!read_size(words, spec.input_features)) throw bad(line, "expected a positive size");
    } else if (kind == "input_shape") {
      size_t d = 0;
      std::string word;
      while (words >> word) {
        std::istringstream one(word);
        if (!read_size(one, d) || spec.input_shape.size() >= 3)
          throw bad(line, "expected C H W, positive sizes");
        spec.input_shape.push_back(d);
      }
      if (spec.input_shape.size() != 3) throw bad(line, "expected C H W, positive sizes");
    } else if (kind == "classes") {
      // 0: a regression model written before regressors recorded their outputs (checked below).
      if (!read_size(words, num_classes, true)) throw bad(line, "expected a class or output count");
      has_classes = true;
    } else if (kind == "loss") {
      if (!(words >> spec.loss)) throw bad(line, "expected a loss name");
      try {
        check_loss_name(spec.loss);
      } catch (const ValidationError& e) {
        throw bad(line, e.what());
      }
    } else {
      std::string args;
      std::getline(words >> std::ws, args);
      try {
        spec.layers.push_back(make_layer({kind, args})->spec());  // its registry entry validates the args
      } catch (const ValidationError& e) {
        throw bad(line, e.what());
      }
    }
  }
  if (!spec.input_shape.empty()) {
    size_t product = 1;
    for (size_t d : spec.input_shape) product = d > SIZE_MAX / product ? 0 : product * d;  // 0: overflow
    if (product != spec.input_features)
      throw DataError(fmt::format("model file '{}' has an input_shape of {} values but input {}", path,
                                  product, spec.input_features));
  }
  if (has_classes && num_classes == 0 && spec.loss == kDefaultLoss)
    throw DataError(fmt::format(
        "model file '{}' has an invalid architecture line 'classes 0': a classifier needs at least 2 "
        "classes — re-save the model",
        path));
  if (spec.input_features == 0 || !has_classes || spec.layers.empty() ||
      !make_layer(spec.layers.back())->can_be_output())
    throw DataError(
        fmt::format("model file '{}' has an incomplete architecture (needs input, classes and a final "
                    "dense layer)",
                    path));
  return spec;
}

}  // namespace

std::vector<unsigned char> encode_model(const ModelSpec& spec, size_t num_classes,
                                        const std::vector<float>& params) {
  const std::string arch = architecture_text(spec, num_classes);
  std::vector<unsigned char> out(kMagic, kMagic + sizeof(kMagic));
  put_le(out, version_for(spec), 4);
  put_le(out, arch.size(), 4);
  out.insert(out.end(), arch.begin(), arch.end());
  put_le(out, params.size(), 8);
  for (float f : params) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    put_le(out, bits, 4);
  }
  put_le(out, detail::fnv1a(out.data(), out.size()), 8);
  return out;
}

void save_model(const std::string& path, Sequential& model, size_t num_classes) {
  detail::write_file_atomically(path, encode_model(model.spec(), num_classes, model.download_weights()));
}

SavedModel read_model(const std::string& path) {
  return decode_model(path, read_file_bounded(path, kMaxModelFileBytes, "model file"));
}

SavedModel decode_model(const std::string& path, const std::vector<unsigned char>& bytes) {
  Reader r(path, bytes);
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw DataError(
        fmt::format("'{}' is not an anycl model file (it does not start with ANYCLMDL) — pass a file "
                    "written by `anycl train --save`",
                    path));
  r.text(sizeof(kMagic), "magic");
  const uint64_t version = r.le(4, "format version");
  // An unknown version is believed only when the bytes are intact (the checksum is always the
  // last 8 bytes, over everything before them): a flipped version byte is corruption, not a newer file.
  if ((version > kModelFormatVersion || version == 0) && bytes.size() >= sizeof(kMagic) + 12) {
    uint64_t stored = 0;
    for (size_t i = 0; i < 8; ++i) stored |= uint64_t(bytes[bytes.size() - 8 + i]) << (8 * i);
    if (stored != detail::fnv1a(bytes.data(), bytes.size() - 8))
      throw DataError(fmt::format(
          "model file '{}' failed its checksum: the file is corrupt — re-save or re-copy it", path));
  }
  if (version > kModelFormatVersion)
    throw DataError(
        fmt::format("model file '{}' uses format version {}, newer than this anycl reads ({}) — "
                    "upgrade anycl",
                    path, version, kModelFormatVersion));
  if (version == 0) throw DataError(fmt::format("model file '{}' has an invalid format version 0", path));
  const uint64_t arch_size = r.le(4, "architecture length");
  if (arch_size > kMaxArchitectureBytes)
    throw DataError(
        fmt::format("model file '{}' claims a {}-byte architecture; the file is corrupt", path, arch_size));
  const std::string arch = r.text(arch_size, "architecture");
  const uint64_t n = r.le(8, "parameter count");
  if (n > (bytes.size() - r.pos()) / 4)
    throw DataError(
        fmt::format("model file '{}' is truncated: it declares {} weights but holds fewer — re-save the "
                    "model",
                    path, n));
  // Checksum before interpreting the weights: a flipped bit anywhere is reported as such.
  const size_t body = r.pos() + size_t(n) * 4;
  Reader tail(path, bytes);
  tail.text(body, "weights");
  const uint64_t stored = tail.le(8, "checksum");
  if (tail.pos() != bytes.size())
    throw DataError(fmt::format("model file '{}' has {} unexpected bytes after the checksum", path,
                                bytes.size() - tail.pos()));
  if (stored != detail::fnv1a(bytes.data(), body))
    throw DataError(fmt::format(
        "model file '{}' failed its checksum: the file is corrupt — re-save or re-copy it", path));
  SavedModel saved;
  saved.spec = parse_architecture(path, arch, saved.num_classes);
  if (version < 3 && !saved.spec.input_shape.empty())
    throw DataError(
        fmt::format("model file '{}' has an input_shape line but declares format version {} (it needs "
                    "version 3) — the file is corrupt; re-save the model",
                    path, version));
  if (version < 2 && saved.spec.loss != kDefaultLoss)
    throw DataError(
        fmt::format("model file '{}' names a loss but declares format version {} (a loss needs "
                    "version 2) — the file is corrupt; re-save the model",
                    path, version));
  saved.parameters.resize(size_t(n));
  for (size_t i = 0; i < saved.parameters.size(); ++i) {
    const uint32_t bits = uint32_t(r.le(4, "weights"));
    std::memcpy(&saved.parameters[i], &bits, 4);
    if (!std::isfinite(saved.parameters[i]))
      throw DataError(
          fmt::format("model file '{}' holds a non-finite weight ({} at position {}): the model "
                      "diverged before it was saved — retrain it (e.g. with a smaller --lr)",
                      path, saved.parameters[i], i));
  }
  size_t needed = 0, outputs = 0;
  try {
    const Sequential shape_check(saved.spec);
    needed = shape_check.weight_count();  // checked: sizes that overflow are refused, never wrapped
    outputs = shape_check.output_features();
  } catch (const ValidationError& e) {
    throw DataError(fmt::format("model file '{}' has an impossible architecture: {}", path, e.what()));
  }
  if (saved.num_classes == 0) saved.num_classes = outputs;  // an older regression file ("classes 0")
  if (needed != n)
    throw DataError(
        fmt::format("model file '{}' holds {} weights but its architecture needs {}", path, n, needed));
  if (outputs < saved.num_classes)
    throw DataError(fmt::format("model file '{}' declares {} classes but the last layer has {} units", path,
                                saved.num_classes, outputs));
  return saved;
}

std::unique_ptr<Sequential> instantiate(const SavedModel& saved, Runtime& rt, size_t max_batch) {
  auto model = std::make_unique<Sequential>(saved.spec);
  model->build(rt, max_batch);
  model->upload_weights(saved.parameters);
  return model;
}

}  // namespace anycl
