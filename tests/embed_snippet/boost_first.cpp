// An application that uses Boost.Compute itself and includes it before anycl: both must compile
// together (anycl's public headers define no Boost.Compute or OpenCL macros of their own).
#include <boost/compute.hpp>

#include <anycl/anycl.hpp>

// Something from each, so neither include is dead.
size_t boost_compute_and_anycl_together() {
  boost::compute::buffer none;
  return none.get() == nullptr ? sizeof(anycl::TrainOptions) : 0;
}
