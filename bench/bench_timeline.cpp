// attnscope-bench timeline [--events N] [--frames N]: renders the timeline
// offscreen (QImage + QPainter) at 1920x1080 across zoom levels, from fit-all
// down to ~20 us, on a synthetic store of N events (default 3,000,000) built
// with EventStoreBuilder: 4 CPU threads of step annotations > ops > inner ops
// > cudaLaunchKernel, each launch's kernel on one of 2 GPU streams, a GPU
// annotation span per step and the profiler's overhead events. Every frame
// is a new window, so each one rebuilds its geometry (no cache hits).
// Last line: frame_ms_p50=X frame_ms_p95=Y frame_ms_max=Z (ATTNSCOPE_BENCH_VERBOSE=1:
// every frame's zoom, items and time).
#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QScrollBar>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/store/event_store.h"
#include "ui/timeline/view.h"

using Clock = std::chrono::steady_clock;
using namespace attnscope;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double rssMb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, rss = 0;
  f >> pages >> rss;
  return static_cast<double>(rss) * 4096.0 / (1024.0 * 1024.0);
}

EventStore syntheticStore(uint64_t n) {
  EventStoreBuilder b;
  const int kThreads = 4;
  const int kStreams = 2;
  const int kGroups = 50;  // op groups per step: 4 events each (+1 annotation, +1 GPU span)
  const uint32_t names[] = {b.strings().intern("aten::linear"),
                            b.strings().intern("aten::addmm"),
                            b.strings().intern("cudaLaunchKernel"),
                            b.strings().intern("sm90_xmma_gemm_f32f32_tn_n_tilesize128x128x8"),
                            b.strings().intern("void at::native::elementwise_kernel<128, 2>"),
                            b.strings().intern("aten::softmax"),
                            b.strings().intern("aten::mul")};
  const uint32_t stepName = b.strings().intern("train_step");
  const uint32_t overheadName = b.strings().intern("Activity Buffer Request");
  uint32_t cpuLane[kThreads], gpuLane[kStreams];
  for (int t = 0; t < kThreads; ++t) cpuLane[t] = b.lane(LaneKind::CpuThread, 100, 100 + t);
  for (int s = 0; s < kStreams; ++s) gpuLane[s] = b.lane(LaneKind::GpuStream, 0, 7 + s);
  const uint32_t ohLane = b.lane(LaneKind::CpuThread, -1, 0);
  int64_t tcpu[kThreads] = {}, tgpu[kStreams] = {};
  int64_t corr = 1;
  uint64_t rng = 12345;
  auto rnd = [&](int64_t lo, int64_t hi) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + static_cast<int64_t>((rng >> 33) % static_cast<uint64_t>(hi - lo));
  };
  uint64_t step = 0;
  while (b.eventCount() < n) {
    const int t = static_cast<int>(step % kThreads);
    const int s = static_cast<int>(step % kStreams);
    const int64_t stepStart = tcpu[t] += rnd(2'000, 20'000);
    int64_t gpuFirst = -1, gpuLast = 0;
    for (int g = 0; g < kGroups && b.eventCount() < n; ++g) {
      const int64_t t0 = tcpu[t] + rnd(500, 3'000);
      const int64_t outerDur = rnd(12'000, 40'000);
      Event outer;
      outer.start = t0;
      outer.dur = outerDur;
      outer.name = names[(g % 3 == 2) ? 5 : (g % 3 == 1 ? 6 : 0)];
      outer.lane = cpuLane[t];
      outer.family = Family::CpuOp;
      outer.externalId = corr;
      b.addEvent(outer);
      Event inner = outer;
      inner.start = t0 + 1'000;
      inner.dur = outerDur - 2'000;
      inner.name = names[1];
      b.addEvent(inner);
      Event launch;
      launch.start = t0 + 3'000;
      launch.dur = rnd(4'000, std::max<int64_t>(5'000, outerDur - 6'000));
      launch.name = names[2];
      launch.lane = cpuLane[t];
      launch.family = Family::CudaRuntime;
      launch.correlation = corr;
      launch.externalId = corr;
      b.addEvent(launch);
      Event k;
      k.start = std::max(tgpu[s], launch.start + rnd(3'000, 9'000));
      k.dur = rnd(2'000, 45'000);
      k.name = names[3 + (g & 1)];
      k.lane = gpuLane[s];
      k.family = Family::Kernel;
      k.correlation = corr;
      k.externalId = corr;
      b.addEvent(k);
      tgpu[s] = k.end() + rnd(200, 2'000);
      if (gpuFirst < 0) gpuFirst = k.start;
      gpuLast = k.end();
      ++corr;
      tcpu[t] = t0 + outerDur;
    }
    Event ann;
    ann.start = stepStart;
    ann.dur = tcpu[t] + 1'000 - stepStart;
    ann.name = stepName;
    ann.lane = cpuLane[t];
    ann.family = Family::UserAnnotation;
    b.addEvent(ann);
    if (gpuFirst >= 0) {
      Event span = ann;
      span.start = gpuFirst;
      span.dur = gpuLast - gpuFirst;
      span.lane = gpuLane[s];
      span.family = Family::GpuUserAnnotation;
      b.addEvent(span);
    }
    if (step % 64 == 0) {
      Event oh;
      oh.start = stepStart;
      oh.dur = rnd(50'000, 400'000);
      oh.name = overheadName;
      oh.lane = ohLane;
      oh.family = Family::Overhead;
      b.addEvent(oh);
    }
    // Threads advance together so that the trace interleaves.
    for (int u = 0; u < kThreads; ++u) tcpu[u] = std::max(tcpu[u], tcpu[t] - 50'000);
    ++step;
  }
  return std::move(b).build();
}

}  // namespace

int benchTimeline(const std::vector<std::string>& args, int argc, char** argv) {
  uint64_t n = 3'000'000;
  int frames = 60;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--events" && i + 1 < args.size())
      n = std::stoull(args[++i]);
    else if (args[i] == "--frames" && i + 1 < args.size())
      frames = std::max(1, std::stoi(args[++i]));
    else {
      std::cerr << "usage: attnscope-bench timeline [--events N] [--frames N]\n";
      return 2;
    }
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);

  const double rss0 = rssMb();
  auto t0 = Clock::now();
  auto store = std::make_shared<const EventStore>(syntheticStore(n));
  const double buildMs = ms(Clock::now() - t0);
  const double rss1 = rssMb();
  const size_t events = store->events().size();

  ui::TimelineView view;
  view.setAttribute(Qt::WA_DontShowOnScreen);
  view.show();
  t0 = Clock::now();
  view.setStore(store);
  const double indexMs = ms(Clock::now() - t0);
  const double rss2 = rssMb();
  // Make the viewport 1920x1080.
  view.resize(1920, 1080);
  QApplication::processEvents();
  const QSize extra = view.size() - view.viewport()->size();
  view.resize(QSize(1920, 1080) + extra);
  QApplication::processEvents();
  const QSize size = view.viewport()->size();

  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  std::vector<double> times;
  std::vector<double> cached;
  ui::TimeAxis& axis = view.axis();
  axis.fitAll();
  const int64_t full = axis.span();
  const int64_t lo = axis.start();
  uint64_t rng = 7;
  size_t maxItems = 0;
  for (int f = 0; f < frames; ++f) {
    // Zoom levels from fit-all to ~20 us, at spread-out centres.
    const double level = static_cast<double>(f % 20) / 19.0;
    const auto span = static_cast<int64_t>(static_cast<double>(full) * std::pow(20'000.0 / full, level));
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t centre = lo + static_cast<int64_t>((rng >> 33) % static_cast<uint64_t>(full));
    axis.setVisibleRange(centre - span / 2, span);
    const auto a = Clock::now();
    {
      QPainter p(&image);
      view.renderFrame(p, size);
    }
    times.push_back(ms(Clock::now() - a));
    maxItems = std::max(maxItems, view.geometry().itemCount());
    if (std::getenv("ATTNSCOPE_BENCH_VERBOSE"))
      std::printf("frame %d level %.2f span %.3f ms items %zu labels %zu: %.2f ms\n", f, level,
                  static_cast<double>(span) / 1e6, view.geometry().itemCount(), view.geometry().labels.size(),
                  times.back());
    const auto c = Clock::now();
    {
      QPainter p(&image);
      view.renderFrame(p, size);  // same window: geometry from the cache
    }
    cached.push_back(ms(Clock::now() - c));
  }
  if (const char* out = std::getenv("ATTNSCOPE_BENCH_FRAME")) image.save(QString::fromLocal8Bit(out));
  auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  const double perM = 1e6 / static_cast<double>(std::max<size_t>(events, 1));
  std::printf("events=%zu store_build_ms=%.0f index_build_ms=%.0f frames=%d size=%dx%d max_items=%zu\n", events,
              buildMs, indexMs, frames, size.width(), size.height(), maxItems);
  std::printf("store_mb_per_M_events=%.1f (rss) index_mb_per_M_events=%.1f (exact %.1f) event_record_bytes=%zu\n",
              (rss1 - rss0) * perM, (rss2 - rss1) * perM,
              static_cast<double>(view.index().memoryBytes()) / (1024.0 * 1024.0) * perM, sizeof(Event));
  std::printf("cached_frame_ms_p50=%.2f cached_frame_ms_max=%.2f geometry_builds=%llu\n", pct(cached, 0.5),
              pct(cached, 1.0), static_cast<unsigned long long>(view.geometryBuilds()));
  std::printf("frame_ms_p50=%.2f frame_ms_p95=%.2f frame_ms_max=%.2f\n", pct(times, 0.5), pct(times, 0.95),
              pct(times, 1.0));
  return 0;
}
