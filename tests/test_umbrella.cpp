// Public-header hygiene: an application that chooses its own OpenCL target and includes
// Boost.Compute itself first, then the whole anycl API, compiles (this file) and sees no
// Boost.Compute macros of anycl's. (tests/embed_snippet/boost_first.cpp does the same with no target.)
#define CL_TARGET_OPENCL_VERSION 200  // the application's choice, kept by anycl's headers
#include <boost/compute.hpp>

#include <doctest/doctest.h>

#include <anycl/anycl.hpp>
#include <type_traits>
#include <utility>

TEST_CASE("anycl.hpp includes the whole API after Boost.Compute and defines no Boost.Compute macros") {
#ifdef BOOST_COMPUTE_THREAD_SAFE
  FAIL("BOOST_COMPUTE_THREAD_SAFE leaked from anycl's public headers");
#endif
#ifdef BOOST_COMPUTE_HAVE_THREAD_LOCAL
  FAIL("BOOST_COMPUTE_HAVE_THREAD_LOCAL leaked from anycl's public headers");
#endif
  CHECK(CL_TARGET_OPENCL_VERSION == 200);
  // The umbrella gives every part of the embedding API.
  CHECK(sizeof(anycl::TrainOptions) > 0);
  CHECK(sizeof(anycl::DeviceDataset) > 0);
  static_assert(std::is_same_v<decltype(anycl::predict(std::declval<anycl::Sequential&>(),
                                                       std::declval<const std::vector<float>&>())),
                               std::vector<float>>);
  boost::compute::buffer none;
  CHECK(none.get() == nullptr);
}
