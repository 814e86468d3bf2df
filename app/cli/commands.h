#pragma once

#include <string>
#include <vector>

#include "cli_args.h"

namespace attnscope::cli {

int cmdTable(Args& a);
int cmdInfo(Args& a);
int cmdExplain(Args& a);
int cmdWhy(Args& a);
int cmdView(const std::string& view, Args& a);  // overview, kernels, memory, modules
int cmdCompare(Args& a);
int cmdExport(Args& a);   // --parquet DIR: Perfetto-shaped tables
int cmdRanks(Args& a);    // a distributed job's traces, one per rank
int cmdCapture(Args& a);  // a running job profiled now (core/capture)
int cmdRun(const std::vector<std::string>& args);
int cmdRecord(const std::vector<std::string>& args);
// record --on-demand (cmd_record_on_demand.cpp): the command run unprofiled, ready for a capture.
bool wantsOnDemand(const std::vector<std::string>& args);
int cmdRecordOnDemand(const std::vector<std::string>& args);
extern const char* kRecordOnDemandHelp;

}  // namespace attnscope::cli
