#include <anycl/anycl.hpp>
// ^ The snippet starts above; its body below is copied verbatim, wrapped in a function that
// receives x, y, d, k and new_x and returns p.
std::vector<float> train_and_predict(const std::vector<float>& x, const std::vector<int32_t>& y, size_t d,
                                     size_t k, const std::vector<float>& new_x) {
  // clang-format off
// x: n rows × d float features (row-major); y: n class indices in [0, k); new_x: m × d
anycl::Runtime rt;                                   // best device, or $ANYCL_DEVICE
anycl::Sequential model(d);
model.dense(64, anycl::Activation::relu).dense(64, anycl::Activation::relu).dense(k);
model.build(rt, 64);
model.initialize(1);
auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"adam", 0.01f});
anycl::DeviceDataset train = anycl::DeviceDataset::from_features(rt, x, y, d, k);
anycl::TrainOptions options;
options.epochs = 40;
options.batch = 64;
anycl::Trainer trainer(model, *optimizer, options);
trainer.fit(train);
std::vector<float> p = anycl::predict(model, new_x);  // m × k class probabilities, no labels needed
  // clang-format on
  return p;
}
