// libFuzzer target for the model-file and checkpoint decoders: any bytes must decode or give a
// DataError. The first byte picks the decoder so one corpus covers both formats.
#include <anycl/error.hpp>
#include <anycl/train/checkpoint.hpp>
#include <anycl/train/model_file.hpp>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<unsigned char> bytes(data + 1, data + size);
  try {
    if (data[0] & 1)
      (void)anycl::decode_checkpoint("fuzz.anyclckpt", bytes);
    else
      (void)anycl::decode_model("fuzz.anycl", bytes);
  } catch (const anycl::Error&) {
  }
  return 0;
}
