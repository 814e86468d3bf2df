#include "core/store/work_counters.h"

namespace attnscope {

WorkCounters& workCounters() {
  static WorkCounters counters;
  return counters;
}

}  // namespace attnscope
