// What /proc says about a process a capture may reach: is it there, may we read it, is it Python with
// torch loaded, was it started ready for capture (KINETO_USE_DAEMON in its environment), which rank of
// a job it is (torchrun's RANK, WORLD_SIZE). Nothing here writes or signals.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::capture {

struct ProcessInfo {
  int pid = 0;
  bool exists = false;
  bool readable = false;  // its environment and maps (same user, or root)
  bool python = false;
  bool torch = false;         // libtorch is mapped
  bool ready = false;         // KINETO_USE_DAEMON in its environment, or Kineto's client socket open
  bool kinetoClient = false;  // it holds a `dynoconfigclient...` socket: Kineto's poller runs
  int ppid = 0;
  uid_t uid = 0;
  uint64_t startTicks = 0;                        // /proc/PID/stat's starttime: tells a reused pid from the process
  std::string exe;                                // the executable's base name
  std::string commandLine;                        // its arguments, space-joined
  std::string socketDir;                          // KINETO_IPC_SOCKET_DIR (the dynolog socket's folder), when set
  std::string traceDir;                           // KINETO_ONDEMAND_TRACE_DIR (where Kineto may write), when set
  int64_t slurmJobId = 0;                         // SLURM_JOB_ID: Kineto's job id in its polls
  int rank = -1, localRank = -1, worldSize = -1;  // RANK, LOCAL_RANK, WORLD_SIZE (torchrun)
  std::string problem;                            // empty when it can be captured; else why not, in the user's words
};

// `procRoot` is /proc but for tests.
ProcessInfo probeProcess(int pid, const std::string& procRoot = "/proc");

// Whether the same process still runs (not exited, pid not reused).
bool stillRunning(const ProcessInfo& p, const std::string& procRoot = "/proc");

// This host's Python processes with torch loaded (among those we may read), by pid.
std::vector<ProcessInfo> listTorchProcesses(const std::string& procRoot = "/proc");

// The Python processes with torch under `pid` (a launcher such as torchrun), nearest first; not
// `pid` itself.
std::vector<ProcessInfo> torchDescendants(int pid, const std::string& procRoot = "/proc");

// How to start the process ready for capture next time, for the message that refuses it.
std::string readinessFix(const ProcessInfo& p);

}  // namespace attnscope::capture
