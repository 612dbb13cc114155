// make_loss(): the one list of losses.
#include "anycl/losses/loss.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "anycl/losses/mse.hpp"
#include "anycl/losses/softmax_cross_entropy.hpp"

namespace anycl {

const std::vector<std::string>& loss_names() {
  static const std::vector<std::string> names{"softmax_cross_entropy", "mse"};
  return names;
}

void check_loss_name(const std::string& name) {
  for (const auto& n : loss_names())
    if (n == name) return;
  throw ValidationError(fmt::format("unknown loss '{}' (known: {})", name, fmt::join(loss_names(), ", ")));
}

std::unique_ptr<Loss> make_loss(Runtime& rt, const std::string& name) {
  check_loss_name(name);
  if (name == "mse") return std::make_unique<MeanSquaredError>(rt);
  return std::make_unique<SoftmaxCrossEntropyLoss>(rt);
}

}  // namespace anycl
