// One child process per evaluation (several at once with ChildProcesses): whatever the work does to its process
// (segfault, abort, exit, a hang, a sticky CUDA error) stays there. The child reports through a pipe: one tag byte ('R'
// result, 'E' exception text) then the payload.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <vector>
#include <string>

#include "cachewise/tuner/isolation.hpp"

namespace cachewise::tuner {
namespace {

constexpr char kResultTag = 'R';
constexpr char kErrorTag = 'E';

void write_all(int fd, const std::string& data) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return; // the parent is gone; nothing left to tell
    written += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void run_child(int write_fd, const std::function<std::string()>& work) {
  // Die with the parent, so a killed tuning run leaves no orphan measuring on the GPU.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::string message;
  try {
    message = kResultTag + work();
  } catch (const std::exception& e) {
    message = kErrorTag + std::string(e.what());
  } catch (...) {
    message = kErrorTag + std::string("unknown exception");
  }
  write_all(write_fd, message);
  ::close(write_fd);
  std::fflush(nullptr);
  // _exit: the parent's atexit handlers and static destructors are not the child's to run.
  ::_exit(0);
}

std::string signal_text(int signal_number) {
  const char* name = ::strsignal(signal_number);
  return "killed by signal " + std::to_string(signal_number) + (name != nullptr ? " (" + std::string(name) + ")" : "");
}

} // namespace

ChildOutcome run_in_child_process(const std::function<std::string()>& work, std::chrono::milliseconds timeout) {
  ChildProcesses children;
  children.start(work, timeout);
  return children.wait_any().second;
}

ChildProcesses::~ChildProcesses() {
  for (auto& [ticket, child] : children_) {
    ::kill(child.pid, SIGKILL);
    finish(child, true);
  }
}

std::uint64_t ChildProcesses::start(const std::function<std::string()>& work, std::chrono::milliseconds timeout) {
  int fds[2];
  // O_CLOEXEC: a later child must not hold this one's pipe open.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr); // otherwise buffered output would be written twice
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (::getppid() != parent) ::_exit(1); // the parent died before PDEATHSIG was armed
    run_child(fds[1], work);
  }
  ::close(fds[1]);
  const std::uint64_t ticket = next_ticket_++;
  children_[ticket] = {pid, fds[0], std::chrono::steady_clock::now() + timeout, timeout, {}};
  return ticket;
}

std::pair<std::uint64_t, ChildOutcome> ChildProcesses::wait_any() {
  if (children_.empty()) throw std::logic_error("ChildProcesses::wait_any: no child is running");
  char buffer[4096];
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<pollfd> descriptors;
    std::vector<std::uint64_t> tickets;
    auto earliest = children_.begin()->second.deadline;
    for (auto& [ticket, child] : children_) {
      if (child.deadline <= now) {
        ::kill(child.pid, SIGKILL);
        const std::uint64_t expired = ticket; // the key dies with the erased node
        ChildOutcome outcome = finish(child, true);
        children_.erase(expired);
        return {expired, std::move(outcome)};
      }
      earliest = std::min(earliest, child.deadline);
      descriptors.push_back({child.fd, POLLIN, 0});
      tickets.push_back(ticket);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(earliest - now).count() + 1;
    const int ready = ::poll(descriptors.data(), descriptors.size(), static_cast<int>(left));
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (std::size_t i = 0; ready > 0 && i < descriptors.size(); ++i) {
      if (descriptors[i].revents == 0) continue;
      Child& child = children_.at(tickets[i]);
      const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        child.received.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      // EOF: the child closed its end (finished or died).
      ChildOutcome outcome = finish(child, false);
      children_.erase(tickets[i]);
      return {tickets[i], std::move(outcome)};
    }
  }
}

ChildOutcome ChildProcesses::finish(Child& child, bool timed_out) {
  ::close(child.fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildOutcome outcome;
  if (timed_out) {
    outcome.failure = "timed out after " + std::to_string(child.timeout.count()) + " ms";
  } else if (WIFSIGNALED(status)) {
    outcome.failure = signal_text(WTERMSIG(status));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    outcome.failure = "exited with code " + std::to_string(WEXITSTATUS(status));
  } else if (child.received.empty()) {
    outcome.failure = "exited without a result";
  } else if (child.received.front() == kErrorTag) {
    outcome.failure = "threw: " + child.received.substr(1);
  } else {
    outcome.ok = true;
    outcome.output = child.received.substr(1);
  }
  return outcome;
}

} // namespace cachewise::tuner
