// Declarations only: PyPI's torch wheel ships c10d/ProcessGroupGloo.hpp but not the gloo headers it
// includes. The engine names gloo's types only through pointers (shared_ptr, unique_ptr) and never
// makes one: LibTorch's own gloo makes and uses them. core/engine/CMakeLists.txt puts this folder
// on the include path only when the wheel has no gloo/ headers of its own.
#pragma once
namespace gloo::transport {
class Device;
class UnboundBuffer;
}  // namespace gloo::transport
