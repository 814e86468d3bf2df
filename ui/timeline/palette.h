// Colours of the timeline: one palette entry per (family, name variant),
// plus a "folded" twin of every entry for boxes that stand for many events.
// Fills are batched by palette index.
#pragma once

#include <QColor>
#include <cstdint>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope::ui {

class TimelinePalette {
 public:
  TimelinePalette();
  // The palette index of an event's box (by family, then name).
  uint16_t indexOf(const EventStore& s, const Event& e) const;
  static uint16_t foldedIndex(uint16_t i) { return static_cast<uint16_t>(i | 1u); }
  static bool isFolded(uint16_t i) { return (i & 1u) != 0; }
  const QColor& fill(uint16_t i) const { return fills_[i]; }
  const QColor& text(uint16_t i) const { return texts_[i]; }
  size_t size() const { return fills_.size(); }
  // Base colour of a family (legends).
  QColor familyColour(Family f) const;

 private:
  struct Range {
    uint16_t first = 0;
    uint16_t count = 1;
  };
  void add(Family f, std::initializer_list<const char*> colours);
  std::vector<QColor> fills_, texts_;
  Range ranges_[kFamilyCount];
  uint16_t sync_ = 0;         // cuda*Synchronize calls
  uint16_t eventRecord_ = 0;  // cudaEventRecord / cudaEventSynchronize markers
  mutable const EventStore* namesFor_ = nullptr;
  mutable std::vector<uint8_t> special_;  // per interned name: 0 none, 1 sync, 2 event record
};

}  // namespace attnscope::ui
