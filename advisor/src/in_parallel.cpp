// in_parallel: indexed work on a few threads, the first exception rethrown.
#include "cachewise/advisor/in_parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cachewise::advisor {

void in_parallel(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& run_one) {
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  threads = std::min(threads, count);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        run_one(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = count;
      }
    }
  };
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  pool.clear(); // joins
  if (failure) std::rethrow_exception(failure);
}

} // namespace cachewise::advisor
