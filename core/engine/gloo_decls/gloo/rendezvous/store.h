// Declarations only: PyPI's torch wheel ships c10d/ProcessGroupGloo.hpp but not the gloo headers it
// includes. The engine names gloo's types only through pointers (shared_ptr, unique_ptr) and never
// makes one: LibTorch's own gloo makes and uses them. core/engine/CMakeLists.txt puts this folder
// on the include path only when the wheel has no gloo/ headers of its own.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace gloo::rendezvous {
// The interface ProcessGroupGloo::GlooStore derives from (gloo's rendezvous store, version 1 calls).
class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::vector<char>& data) = 0;
  virtual std::vector<char> get(const std::string& key) = 0;
  virtual void wait(const std::vector<std::string>& keys) = 0;
  virtual void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) = 0;
};
}  // namespace gloo::rendezvous
