#include <algorithm>
#include <map>

#include "core/snapshot/trace_snapshot.h"
#include "core/views/views.h"

namespace attnscope {

namespace {

constexpr std::string_view kPrefix = "nn.Module: ";

bool isModule(const EventStore& s, const Event& e) {
  return e.family == Family::PythonFunction && s.name(e).rfind(kPrefix, 0) == 0;
}

}  // namespace

ModuleView moduleView(const TraceSnapshot& snap) {
  const EventStore& s = *snap.store;
  const ActivityIndex& index = snap.index;
  ModuleView v;
  std::map<std::string, int> byPath;
  std::vector<int> nodeOf(s.events().size(), -1);
  // Events are in start order (a caller before its callee at equal starts): a module's enclosing
  // module was seen before it.
  for (EventId id = 0; id < s.events().size(); ++id) {
    const Event& e = s.event(id);
    if (!isModule(s, e)) continue;
    v.present = true;
    int parent = -1;
    for (EventId p = e.parent; p != kNoEvent; p = s.event(p).parent)
      if (nodeOf[p] >= 0) {
        parent = nodeOf[p];
        break;
      }
    const std::string name(s.name(e).substr(kPrefix.size()));
    const std::string path = parent < 0 ? name : v.nodes[static_cast<size_t>(parent)].path + " > " + name;
    auto [it, fresh] = byPath.try_emplace(path, static_cast<int>(v.nodes.size()));
    if (fresh) {
      ModuleNode n;
      n.name = name;
      n.path = path;
      n.parent = parent;
      n.depth = parent < 0 ? 0 : v.nodes[static_cast<size_t>(parent)].depth + 1;
      v.nodes.push_back(std::move(n));
    }
    ModuleNode& n = v.nodes[static_cast<size_t>(it->second)];
    nodeOf[id] = it->second;
    ++n.calls;
    n.hostNs += e.dur;
    n.events.push_back(id);
    // The GPU work launched while it ran on its thread, found by correlation from the launches.
    for (EventId call : index.callsIn(e.start, e.end())) {
      const Event& c = s.event(call);
      if (c.lane != e.lane || c.end() > e.end() || c.correlation <= 0) continue;
      for (EventId g : s.byCorrelation(c.correlation))
        if (isGpuWork(s.event(g).family)) {
          n.gpuNs += s.event(g).dur;
          ++n.gpuActivities;
        }
    }
  }
  for (ModuleNode& n : v.nodes) n.selfHostNs = n.hostNs, n.selfGpuNs = n.gpuNs;
  for (const ModuleNode& n : v.nodes)
    if (n.parent >= 0) {
      v.nodes[static_cast<size_t>(n.parent)].selfHostNs -= n.hostNs;
      v.nodes[static_cast<size_t>(n.parent)].selfGpuNs -= n.gpuNs;
    }
  // Depth-first order: a parent, then its children in first-call order.
  std::vector<std::vector<int>> children(v.nodes.size());
  std::vector<int> roots;
  for (size_t i = 0; i < v.nodes.size(); ++i)
    (v.nodes[i].parent < 0 ? roots : children[static_cast<size_t>(v.nodes[i].parent)]).push_back(static_cast<int>(i));
  std::vector<int> order;
  std::vector<int> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    order.push_back(i);
    const auto& ch = children[static_cast<size_t>(i)];
    stack.insert(stack.end(), ch.rbegin(), ch.rend());
  }
  std::vector<int> newIndex(v.nodes.size());
  for (size_t k = 0; k < order.size(); ++k) newIndex[static_cast<size_t>(order[k])] = static_cast<int>(k);
  std::vector<ModuleNode> sorted;
  sorted.reserve(v.nodes.size());
  for (int i : order) {
    ModuleNode n = std::move(v.nodes[static_cast<size_t>(i)]);
    if (n.parent >= 0) n.parent = newIndex[static_cast<size_t>(n.parent)];
    sorted.push_back(std::move(n));
  }
  v.nodes = std::move(sorted);
  return v;
}

}  // namespace attnscope
