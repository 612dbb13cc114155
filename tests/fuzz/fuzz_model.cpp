// libFuzzer target for the decoders that take bytes: any input must decode or give an anycl::Error.
// The first byte picks the decoder, so one corpus covers the model file, the checkpoint and the
// metrics file (CSV or JSON Lines) that `anycl plot` reads.
#include <anycl/error.hpp>
#include <anycl/train/checkpoint.hpp>
#include <anycl/train/model_file.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "learning_curves.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<unsigned char> bytes(data + 1, data + size);
  try {
    switch (data[0] % 4) {
      case 0:
        (void)anycl::decode_model("fuzz.anycl", bytes);
        break;
      case 1:
        (void)anycl::decode_checkpoint("fuzz.anyclckpt", bytes);
        break;
      default:  // metrics: 2 as CSV, 3 as JSON Lines
        (void)anycl::cli::parse_learning_curves(std::string(bytes.begin(), bytes.end()),
                                                data[0] % 4 == 2 ? "fuzz.csv" : "fuzz.jsonl");
        break;
    }
  } catch (const anycl::Error&) {
  }
  return 0;
}
