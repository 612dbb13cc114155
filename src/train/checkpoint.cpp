// Checkpoint writer and validating reader. Layout (docs/checkpoint-format.md):
//   "ANYCLCKP" | u32 version | u32 H | H bytes state text | u32 A | A bytes app text
//   | u64 M | M bytes model file | u32 T | T × (u64 n | n × f32) | u64 S | S × f32 | u64 FNV-1a
// Little-endian; the checksum covers every byte before it and is verified before anything is parsed.
#include "anycl/train/checkpoint.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "anycl/error.hpp"
#include "anycl/util/bounded_read.hpp"
#include "atomic_file.hpp"
#include "hash.hpp"

namespace anycl {
namespace {

constexpr char kMagic[8] = {'A', 'N', 'Y', 'C', 'L', 'C', 'K', 'P'};
constexpr size_t kMaxTextBytes = 1 << 20;
constexpr uint32_t kMaxStateTensors = 16;

void put_le(std::vector<unsigned char>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back((unsigned char)(v >> (8 * i)));
}

void put_floats(std::vector<unsigned char>& out, const std::vector<float>& values) {
  put_le(out, values.size(), 8);
  for (float f : values) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    put_le(out, bits, 4);
  }
}

void put_text(std::vector<unsigned char>& out, const std::string& text) {
  put_le(out, text.size(), 4);
  out.insert(out.end(), text.begin(), text.end());
}

// Doubles as hexadecimal floats, so history figures round-trip exactly.
std::string hex(double v) { return fmt::format("{:a}", v); }

// Text as hexadecimal bytes ("-" when empty), so any path survives the space-separated fields.
std::string hex_bytes(const std::string& text) {
  if (text.empty()) return "-";
  std::string out;
  for (unsigned char ch : text) out += fmt::format("{:02x}", ch);
  return out;
}

std::string join_hex(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : ",") + hex(v);
  return out.empty() ? "-" : out;
}

std::string state_text(const Checkpoint& c) {
  std::string t = fmt::format(
      "optimizer {}\nlearning_rate {}\niterations {}\nseed {}\nbatch {}\nsteps_done {}\nepoch {}\n"
      "step_in_epoch {}\ntrain_count {}\n",
      c.optimizer, hex(c.learning_rate), c.optimizer_iterations, c.seed, c.batch, c.steps_done, c.epoch,
      c.step_in_epoch, c.train_count);
  std::string devices;
  for (const std::string& d : c.run.devices) devices += (devices.empty() ? "" : ",") + hex_bytes(d);
  t += fmt::format(
      "data_dir {}\nlimit {}\nvalidation_split {}\nnum_classes {}\nshares {}\ndevices {}\nepochs {}\n"
      "checkpoint_every {}\nprocesses {}\n",
      hex_bytes(c.run.data_dir), c.run.limit, hex(c.run.validation_split), c.run.num_classes,
      join_hex(c.run.shares), devices.empty() ? "-" : devices, c.run.epochs, c.run.checkpoint_every,
      c.run.processes);
  if (c.schedule.kind != ScheduleKind::constant)  // version 2: the schedule and ReduceLROnPlateau's state
    t += fmt::format("schedule {}\nschedule_state {},{},{},{}\n", schedule_text(c.schedule),
                     hex(c.schedule_state.learning_rate), hex(c.schedule_state.best), c.schedule_state.wait,
                     c.schedule_state.cooldown_counter);
  // The 12th history field (the epoch's learning rate) is new; version-1 readers ignore it.
  for (const EpochStats& e : c.history)
    t += fmt::format("history {} {} {} {} {} {} {} {} {} {} {} {}\n", e.epoch, e.steps, hex(e.train_loss),
                     hex(e.train_accuracy), e.has_eval ? 1 : 0, e.eval_name.empty() ? "-" : e.eval_name,
                     hex(e.eval.loss), hex(e.eval.accuracy), e.eval.count, hex(e.seconds),
                     hex(e.samples_per_second), hex(e.learning_rate));
  return t;
}

class Reader {
 public:
  Reader(const std::string& path, const std::vector<unsigned char>& bytes, size_t end)
      : path_(path), bytes_(bytes), end_(end) {}
  uint64_t le(int n, const char* what) {
    need(size_t(n), what);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(bytes_[pos_ + size_t(i)]) << (8 * i);
    pos_ += size_t(n);
    return v;
  }
  std::string text(const char* what) {
    const uint64_t n = le(4, what);
    if (n > kMaxTextBytes) throw corrupt(fmt::format("its {} claims {} bytes", what, n));
    need(size_t(n), what);
    std::string s(bytes_.begin() + long(pos_), bytes_.begin() + long(pos_ + n));
    pos_ += size_t(n);
    return s;
  }
  std::vector<unsigned char> blob(const char* what) {
    const uint64_t n = le(8, what);
    need(n, what);
    std::vector<unsigned char> b(bytes_.begin() + long(pos_), bytes_.begin() + long(pos_ + n));
    pos_ += size_t(n);
    return b;
  }
  std::vector<float> floats(const char* what) {
    const uint64_t n = le(8, what);
    if (n > (end_ - pos_) / 4) need(end_ - pos_ + 1, what);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& f : v) {
      const uint32_t bits = uint32_t(le(4, what));
      std::memcpy(&f, &bits, 4);
    }
    return v;
  }
  void need(uint64_t n, const char* what) const {
    if (end_ - pos_ < n)
      throw DataError(
          fmt::format("checkpoint '{}' is truncated or corrupt: it ends inside the {} — resume from another "
                      "checkpoint or "
                      "start the run again",
                      path_, what));
  }
  DataError corrupt(const std::string& why) const {
    return DataError(
        fmt::format("checkpoint '{}' is corrupt: {} — resume from another checkpoint or start "
                    "the run again",
                    path_, why));
  }
  size_t pos() const { return pos_; }

 private:
  const std::string& path_;
  const std::vector<unsigned char>& bytes_;
  size_t end_, pos_ = 0;
};

uint64_t parse_u64(const Reader& r, const std::string& key, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE)
    throw r.corrupt(fmt::format("'{}' is not a count: '{}'", key, value));
  return v;
}

double parse_double(const Reader& r, const std::string& key, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0') throw r.corrupt(fmt::format("'{}' is not a number: '{}'", key, value));
  return v;
}

std::string parse_hex_bytes(const Reader& r, const std::string& value) {
  if (value == "-") return "";
  if (value.size() % 2) throw r.corrupt("the data folder field is not hexadecimal");
  std::string out;
  for (size_t i = 0; i < value.size(); i += 2) {
    const std::string pair = value.substr(i, 2);
    char* end = nullptr;
    const long v = std::strtol(pair.c_str(), &end, 16);
    if (*end != '\0' || !std::isxdigit(static_cast<unsigned char>(pair[0])))
      throw r.corrupt("the data folder field is not hexadecimal");
    out += char(v);
  }
  return out;
}

// Files of earlier versions recorded the command line instead: only the fields that select the
// data are taken from it (never an output path or another flag).
RunConfig run_from_recorded_flags(const std::string& app) {
  RunConfig run;
  std::vector<std::string> args;
  std::istringstream lines(app);
  for (std::string line; std::getline(lines, line);) args.push_back(line);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    const std::string value = i + 1 < args.size() ? args[i + 1] : "";
    char* end = nullptr;
    if (flag == "--data") run.data_dir = value;
    if (flag == "--limit") run.limit = size_t(std::strtoull(value.c_str(), &end, 10));
    if (flag == "--validation-split") run.validation_split = std::strtod(value.c_str(), &end);
    if (flag == "--distributed") run.processes = 2;  // more than one: resume distributed again
    if (flag == "--epochs") run.epochs = size_t(std::strtoull(value.c_str(), &end, 10));
    if (flag == "--checkpoint-every") run.checkpoint_every = size_t(std::strtoull(value.c_str(), &end, 10));
    if (flag == "--devices") {
      std::istringstream parts(value);
      for (std::string part; std::getline(parts, part, ',');) run.devices.push_back(part);
    }
    if (flag == "--split" && value != "equal" && value != "auto") {
      std::istringstream parts(value);
      for (std::string part; std::getline(parts, part, ':');)
        run.shares.push_back(std::strtod(part.c_str(), &end));
    }
  }
  return run;
}

void parse_run(const Reader& r, const std::map<std::string, std::string>& fields, Checkpoint& c) {
  auto it = fields.find("data_dir");
  if (it == fields.end()) {  // format 1 as written before run fields existed
    c.run = run_from_recorded_flags(c.app);
    return;
  }
  auto field = [&](const char* key) -> const std::string& {
    auto f = fields.find(key);
    if (f == fields.end()) throw r.corrupt(fmt::format("the '{}' field is missing", key));
    return f->second;
  };
  c.run.data_dir = parse_hex_bytes(r, it->second);
  c.run.limit = size_t(parse_u64(r, "limit", field("limit")));
  c.run.validation_split = parse_double(r, "validation_split", field("validation_split"));
  if (!(c.run.validation_split >= 0 && c.run.validation_split < 1))
    throw r.corrupt("validation_split is outside [0, 1)");
  c.run.num_classes = size_t(parse_u64(r, "num_classes", field("num_classes")));
  c.run.epochs = size_t(parse_u64(r, "epochs", field("epochs")));
  c.run.checkpoint_every = size_t(parse_u64(r, "checkpoint_every", field("checkpoint_every")));
  c.run.processes = size_t(parse_u64(r, "processes", field("processes")));
  if (c.run.processes == 0) throw r.corrupt("processes must be at least 1");
  const std::string& devices = field("devices");
  if (devices != "-") {
    std::istringstream parts(devices);
    for (std::string part; std::getline(parts, part, ',');) c.run.devices.push_back(parse_hex_bytes(r, part));
  }
  const std::string& shares = field("shares");
  if (shares != "-") {
    std::istringstream parts(shares);
    for (std::string part; std::getline(parts, part, ',');) {
      const double v = parse_double(r, "shares", part);
      if (!(std::isfinite(v) && v > 0)) throw r.corrupt("a batch share is not a positive number");
      c.run.shares.push_back(v);
    }
  }
}

void parse_schedule_fields(const Reader& r, const std::map<std::string, std::string>& fields, Checkpoint& c) {
  const auto spec = fields.find("schedule"), state = fields.find("schedule_state");
  if (spec == fields.end()) return;  // no schedule (every version-1 file)
  if (state == fields.end()) throw r.corrupt("the 'schedule_state' field is missing");
  try {
    c.schedule = parse_schedule(spec->second);
  } catch (const ValidationError& e) {
    throw r.corrupt(fmt::format("its schedule '{}' is invalid: {}", spec->second, e.what()));
  }
  std::vector<std::string> parts;
  std::istringstream items(state->second);
  for (std::string part; std::getline(items, part, ',');) parts.push_back(part);
  if (parts.size() != 4) throw r.corrupt(fmt::format("bad schedule_state '{}'", state->second));
  ScheduleState& s = c.schedule_state;
  s.learning_rate = float(parse_double(r, "schedule_state", parts[0]));
  s.best = parse_double(r, "schedule_state", parts[1]);
  s.wait = parse_u64(r, "schedule_state", parts[2]);
  s.cooldown_counter = parse_u64(r, "schedule_state", parts[3]);
  if (!(std::isfinite(s.learning_rate) && s.learning_rate >= 0) || std::isnan(s.best))
    throw r.corrupt(fmt::format("bad schedule_state '{}'", state->second));
}

void parse_state(const Reader& r, const std::string& text, Checkpoint& c) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "history") {
      EpochStats e;
      std::string f[11];
      for (auto& w : f)
        if (!(words >> w)) throw r.corrupt(fmt::format("bad history line '{}'", line));
      e.epoch = size_t(parse_u64(r, "history epoch", f[0]));
      e.steps = size_t(parse_u64(r, "history steps", f[1]));
      e.train_loss = parse_double(r, "history loss", f[2]);
      e.train_accuracy = parse_double(r, "history accuracy", f[3]);
      e.has_eval = f[4] == "1";
      e.eval_name = f[5] == "-" ? "" : f[5];
      e.eval.loss = parse_double(r, "history eval loss", f[6]);
      e.eval.accuracy = parse_double(r, "history eval accuracy", f[7]);
      e.eval.count = size_t(parse_u64(r, "history eval count", f[8]));
      e.seconds = parse_double(r, "history seconds", f[9]);
      e.samples_per_second = parse_double(r, "history samples/s", f[10]);
      std::string lr;
      if (words >> lr) e.learning_rate = parse_double(r, "history learning rate", lr);
      c.history.push_back(e);
    } else if (!key.empty()) {
      std::string value;
      words >> value;
      fields[key] = value;
    }
  }
  auto field = [&](const char* key) -> const std::string& {
    auto it = fields.find(key);
    if (it == fields.end()) throw r.corrupt(fmt::format("the '{}' field is missing", key));
    return it->second;
  };
  c.optimizer = field("optimizer");
  c.learning_rate = float(parse_double(r, "learning_rate", field("learning_rate")));
  c.optimizer_iterations = parse_u64(r, "iterations", field("iterations"));
  c.seed = parse_u64(r, "seed", field("seed"));
  c.batch = size_t(parse_u64(r, "batch", field("batch")));
  c.steps_done = parse_u64(r, "steps_done", field("steps_done"));
  c.epoch = size_t(parse_u64(r, "epoch", field("epoch")));
  c.step_in_epoch = size_t(parse_u64(r, "step_in_epoch", field("step_in_epoch")));
  c.train_count = size_t(parse_u64(r, "train_count", field("train_count")));
  parse_run(r, fields, c);
  parse_schedule_fields(r, fields, c);
  if (c.batch == 0 || c.train_count == 0) throw r.corrupt("batch and train_count must be positive");
  if (c.step_in_epoch > c.train_count / c.batch + 1) throw r.corrupt("step_in_epoch is beyond the epoch");
  if (c.history.size() != c.epoch) throw r.corrupt("the history does not match the epoch count");
}

}  // namespace

std::vector<unsigned char> encode_checkpoint(const Checkpoint& c) {
  std::vector<unsigned char> out(kMagic, kMagic + sizeof(kMagic));
  const uint32_t version = c.schedule.has_warmup() ? 3 : c.schedule.kind == ScheduleKind::constant ? 1 : 2;
  put_le(out, version, 4);
  put_text(out, state_text(c));
  put_text(out, c.app);
  const std::vector<unsigned char> model =
      encode_model(c.model.spec, c.model.num_classes, c.model.parameters);
  put_le(out, model.size(), 8);
  out.insert(out.end(), model.begin(), model.end());
  put_le(out, c.optimizer_state.size(), 4);
  for (const auto& s : c.optimizer_state) put_floats(out, s);
  put_floats(out, c.epoch_metrics);
  put_le(out, detail::fnv1a(out.data(), out.size()), 8);
  return out;
}

Checkpoint decode_checkpoint(const std::string& path, const std::vector<unsigned char>& bytes) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw DataError(fmt::format(
        "'{}' is not an anycl checkpoint (it does not start with ANYCLCKP) — pass the folder given to "
        "`anycl train --checkpoint`",
        path));
  if (bytes.size() < sizeof(kMagic) + 4 + 8)
    throw DataError(
        fmt::format("checkpoint '{}' is truncated ({} bytes) — resume from another checkpoint or "
                    "start the run again",
                    path, bytes.size()));
  const size_t body = bytes.size() - 8;
  Reader head(path, bytes, body);
  head.le(8, "magic");
  const uint64_t version = head.le(4, "format version");
  if (version > kCheckpointFormatVersion)
    throw DataError(fmt::format(
        "checkpoint '{}' uses format version {}, newer than this anycl reads ({}) — upgrade anycl", path,
        version, kCheckpointFormatVersion));
  if (version == 0) throw head.corrupt("invalid format version 0");
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) stored |= uint64_t(bytes[body + size_t(i)]) << (8 * i);
  if (stored != detail::fnv1a(bytes.data(), body))
    throw DataError(fmt::format(
        "checkpoint '{}' failed its checksum: the file is truncated or corrupt — resume from another "
        "checkpoint or start the run again",
        path));
  Checkpoint c;
  const std::string state = head.text("state text");
  c.app = head.text("application text");
  parse_state(head, state, c);
  c.model = decode_model(path + " (model part)", head.blob("model"));
  const uint64_t tensors = head.le(4, "optimizer state count");
  if (tensors > kMaxStateTensors) throw head.corrupt(fmt::format("{} optimizer state tensors", tensors));
  for (uint64_t i = 0; i < tensors; ++i) c.optimizer_state.push_back(head.floats("optimizer state"));
  c.epoch_metrics = head.floats("epoch metrics");
  if (head.pos() != body)
    throw head.corrupt(fmt::format("{} unexpected bytes before the checksum", body - head.pos()));
  if (c.epoch_metrics.size() != 2 * c.step_in_epoch)
    throw head.corrupt("the partial epoch metrics do not match the step in the epoch");
  return c;
}

void write_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  detail::write_file_atomically(path, encode_checkpoint(checkpoint));
}

Checkpoint read_checkpoint(const std::string& path) {
  return decode_checkpoint(path, read_file_bounded(path, kMaxCheckpointBytes, "checkpoint"));
}

}  // namespace anycl
