// make_loss(): the one list of losses.
#include "anycl/losses/loss.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "anycl/losses/elementwise_loss.hpp"
#include "anycl/losses/mse.hpp"
#include "anycl/losses/softmax_cross_entropy.hpp"

namespace anycl {

const std::vector<std::string>& loss_names() {
  static const std::vector<std::string> names{"softmax_cross_entropy", "mse", "mae", "huber",
                                              "binary_crossentropy"};
  return names;
}

const LossInfo& loss_info(const std::string& name) {
  static const std::vector<LossInfo> infos{{"softmax_cross_entropy", true, "accuracy", true},
                                           {"mse", false, "mae", false},
                                           {"mae", false, "mae", false},
                                           {"huber", false, "mae", false},
                                           {"binary_crossentropy", false, "accuracy", true}};
  check_loss_name(name);
  for (const LossInfo& info : infos)
    if (info.name == name) return info;
  throw ValidationError(fmt::format("loss '{}' has no LossInfo entry (src/losses/loss.cpp)", name));
}

void Loss::predictions(const Tensor&, Tensor&) {
  throw ValidationError(
      fmt::format("the {} loss predicts the raw outputs: there are no probabilities to compute", name()));
}

void check_loss_name(const std::string& name) {
  for (const auto& n : loss_names())
    if (n == name) return;
  throw ValidationError(fmt::format("unknown loss '{}' (known: {})", name, fmt::join(loss_names(), ", ")));
}

std::unique_ptr<Loss> make_loss(Runtime& rt, const std::string& name) {
  check_loss_name(name);
  if (name == "mse") return std::make_unique<MeanSquaredError>(rt);
  if (name != "softmax_cross_entropy") return std::make_unique<ElementwiseLoss>(rt, name);
  return std::make_unique<SoftmaxCrossEntropyLoss>(rt);
}

}  // namespace anycl
