// One child process per evaluation: whatever the work does to its process (segfault, abort,
// exit, a hang, a sticky CUDA error) stays there. The child reports through a pipe: one tag
// byte ('R' result, 'E' exception text) then the payload.
#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
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
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
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

  std::string received;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd descriptor{fds[0], POLLIN, 0};
    const int ready = ::poll(&descriptor, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; // EOF: the child closed its end (finished or died)
    received.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  ChildOutcome outcome;
  if (timed_out) {
    outcome.failure = "timed out after " + std::to_string(timeout.count()) + " ms";
  } else if (WIFSIGNALED(status)) {
    outcome.failure = signal_text(WTERMSIG(status));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    outcome.failure = "exited with code " + std::to_string(WEXITSTATUS(status));
  } else if (received.empty()) {
    outcome.failure = "exited without a result";
  } else if (received.front() == kErrorTag) {
    outcome.failure = "threw: " + received.substr(1);
  } else {
    outcome.ok = true;
    outcome.output = received.substr(1);
  }
  return outcome;
}

} // namespace cachewise::tuner
