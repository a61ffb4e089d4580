// Runs one command for the benchmarks and reports what it cost. Started from this small process,
// the command's peak RSS is its own: a child's peak starts from what its parent held when it was
// forked, and a Python benchmark holds tens of MiB.
//
//   run_measured OUTPUT COMMAND [ARG...]
//
// The command's stdout and stderr go to OUTPUT; on stdout: its exit code (128 + N for signal N),
// wall seconds, CPU seconds (user + system) and peak RSS in KiB.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: run_measured OUTPUT COMMAND [ARG...]\n");
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (int err = posix_spawnp(&pid, argv[2], &actions, nullptr, argv + 2, environ); err != 0) {
    std::fprintf(stderr, "run_measured: cannot run %s (error %d)\n", argv[2], err);
    return 2;
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      std::perror("run_measured: wait4");
      return 2;
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::printf("%d %.6f %.6f %ld\n", code, wall, seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_maxrss);
  return 0;
}
