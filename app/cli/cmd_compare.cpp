#include "cli_args.h"
#include "commands.h"
namespace attnscope::cli {
int cmdCompare(Args&) { throw UsageError("compare: not yet"); }
}  // namespace attnscope::cli
