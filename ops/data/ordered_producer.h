// Reading ahead on threads of an iterator's own, keeping the input's order:
// what PrefetchDataset (one thread, a buffer of buffer_size elements) and
// ParallelMapDatasetV2 (num_parallel_calls threads, each calling the map
// function on an element of its own) share.
//
// Each producer thread takes the next sequence number and reads the input
// element that goes with it (reads are serialised, so element i is the
// input's i-th), then transforms it outside the lock (the map function; the
// element itself for prefetch) and files the result, an element or an error,
// under its number. GetNext hands results out by number, so the output
// order is the input's whatever order the threads finish in; errors come
// where their element was, and the end comes after the last element.
// Producers stop taking numbers while `capacity` results are ahead of the
// reader, so memory stays bounded.
//
// Cancellation: a GetNext waiting for a result ends CANCELLED when its
// step's CancellationManager is cancelled (the results stay for a later
// call). The producers run under a CancellationManager of the producer's
// own, cancelled by the destructor, which then joins the threads; an input
// or function waiting on it (a nested prefetch, a function's blocking op)
// is woken, one running plain computation is waited for.
//
// Threads start on the first GetNext, so making an iterator is cheap.
//
// Thread safety: GetNext is for one caller at a time (as for every
// iterator); the producers synchronise with it internally.
#ifndef WEFT_OPS_DATA_ORDERED_PRODUCER_H_
#define WEFT_OPS_DATA_ORDERED_PRODUCER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "ops/data/dataset.h"

namespace weft {
namespace data {

class OrderedProducer {
 public:
  // The next input element (called by one producer at a time, in order).
  using ReadFn = std::function<absl::Status(IteratorContext*, std::vector<Tensor>*,
                                            bool* end_of_sequence)>;
  // The output for an input element (called concurrently); null: the
  // element itself.
  using TransformFn = std::function<absl::Status(
      IteratorContext*, std::vector<Tensor> element, std::vector<Tensor>* out)>;

  // `threads` >= 1 producers, `capacity` >= threads results ahead at most.
  OrderedProducer(int threads, int64_t capacity, ReadFn read, TransformFn transform);
  ~OrderedProducer();
  OrderedProducer(const OrderedProducer&) = delete;
  OrderedProducer& operator=(const OrderedProducer&) = delete;

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                       bool* end_of_sequence);

 private:
  struct State;
  static void Produce(std::shared_ptr<State> state);

  const int num_threads_;
  std::shared_ptr<State> state_;
  std::vector<std::thread> threads_;
};

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_ORDERED_PRODUCER_H_
