// An application that uses Boost.Compute itself and includes it before anycl: both must compile
// together (anycl's public headers include no Boost header and define no Boost.Compute or OpenCL
// macros of their own), and the application's Boost.Compute works on the runtime's raw handles.
#include <boost/compute.hpp>

#include <anycl/anycl.hpp>

// Something from each, so neither include is dead: a round trip through a buffer of the
// application's own, on anycl's context and queue.
size_t boost_compute_and_anycl_together() {
  anycl::Runtime rt;
  const boost::compute::context context(rt.context());  // retains: both own a reference
  boost::compute::command_queue queue(rt.queue());
  boost::compute::buffer buffer(context, sizeof(float));
  const float value = 2.f;
  float back = 0.f;
  queue.enqueue_write_buffer(buffer, 0, sizeof value, &value);
  queue.enqueue_read_buffer(buffer, 0, sizeof back, &back);
  return back == value && queue.get_device().id() == rt.device() ? sizeof(anycl::TrainOptions) : 0;
}
