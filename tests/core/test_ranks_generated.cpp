// The straggler model against jobs whose stragglers are known by construction (tests/jobgen): 600
// random jobs with a fixed seed (120 under a sanitizer), each rank's trace read by the reader from its JSON text,
// summarised and analysed as `attnscope-cli ranks` does. Gates: recall >= 98% for the set of straggler ranks with their
// steps within one, and false stragglers in <= 1% of the jobs without one (the issue asked 95% and 2%; measured
// at seeds 42000, 7000, 91000: recall 99.5%, 98.6%, 99.1%, false 0/229, 1/228, 0/228; 120 jobs: 100%, 0).
// The figures, and every miss and false straggler, are printed.
//   ATTNSCOPE_GEN_JOBS=N ATTNSCOPE_GEN_SEED=S ATTNSCOPE_GEN_FORM=F ATTNSCOPE_GEN_BACKEND=B
//   ATTNSCOPE_GEN_LATE_US=X ATTNSCOPE_GEN_JITTER_US=Y test_ranks_generated  (another sweep; the gates still apply)
#include <QtTest>
#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include "core/ranks/job.h"
#include "core/ranks/rank_summary.h"
#include "core/read/trace_reader.h"
#include "core/snapshot/trace_snapshot.h"
#include "job_gen.h"

using namespace attnscope;

namespace {

ranks::RankSummary summarize(const jobgen::File& f) {
  LoadResult lr = parseTrace(f.text, f.name);
  if (!lr.ok()) return {};
  const auto snap = buildSnapshot(std::make_shared<const EventStore>(std::move(*lr.store)),
                                  {.shapeTables = false, .profilerStepsFirst = true, .stepsOnly = true});
  return ranks::summarizeRank(*snap, f.name);
}

struct Score {
  int jobs = 0, truths = 0, recalled = 0, cleanJobs = 0, falseJobs = 0, extras = 0, causesRight = 0;
  std::map<std::string, std::pair<int, int>> byForm;  // form -> (recalled, truths)
  std::vector<std::string> misses, falses;
};

bool withinOne(const std::vector<int>& a, const std::vector<int>& b) {
  auto covered = [](const std::vector<int>& x, const std::vector<int>& y) {
    for (int s : x)
      if (std::none_of(y.begin(), y.end(), [s](int t) { return std::abs(s - t) <= 1; })) return false;
    return true;
  };
  return !a.empty() && !b.empty() && covered(a, b) && covered(b, a);
}

// "1,2,3". Appended in two steps: GCC 12 at -O3 warns (-Wstringop-overflow) inside libstdc++'s memcpy on
// "," + std::to_string(x) inlined here, a false positive of the kind CMakeLists.txt's -Wno-restrict names
// (it appeared when the suites began to share precompiled headers).
template <typename T>
std::string list(const std::vector<T>& v) {
  std::string s;
  for (T x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

void scoreJob(const jobgen::Job& j, const ranks::JobReport& r, Score& sc) {
  std::map<std::string, int> index;
  for (size_t k = 0; k < j.stepNames.size(); ++k) index[j.stepNames[k]] = static_cast<int>(k);
  struct Found {
    std::vector<int64_t> ranks;
    std::vector<int> steps;
    const ranks::Straggler* s;
    bool used = false;
  };
  std::vector<Found> found;
  for (const ranks::Straggler& s : r.stragglers) {
    Found f{s.ranks, {}, &s};
    for (const std::string& st : s.steps) f.steps.push_back(index.count(st) ? index[st] : -99);
    found.push_back(f);
  }
  const std::string shape = "seed " + std::to_string(j.seed) + " " + j.form + " " + j.backend + " world " +
                            std::to_string(j.world) + " tp " + std::to_string(j.tp) + " C " +
                            std::to_string(j.collectivesPerStep) + " jitter " + std::to_string(j.jitterNs / 1000) +
                            " us, step " + std::to_string(j.medianStepNs / 1000) + " us";
  ++sc.jobs;
  if (j.stragglers.empty()) ++sc.cleanJobs;
  for (const jobgen::TrueStraggler& t : j.stragglers) {
    ++sc.truths;
    ++sc.byForm[j.form].second;
    bool ok = false;
    for (Found& f : found)
      if (!f.used && f.ranks == t.ranks && withinOne(f.steps, t.steps)) {
        ok = f.used = true;
        const bool cause = t.cause == "slow_link" ? f.s->cause == "slow_collective" && f.s->group == t.group
                                                  : f.s->cause == "slow_region" && f.s->region == t.cause;
        sc.causesRight += cause;
        break;
      }
    if (ok) {
      ++sc.recalled;
      ++sc.byForm[j.form].first;
      continue;
    }
    std::string got;
    for (const Found& f : found)
      got += " [" + list(f.ranks) + " @ " + list(f.steps) + " " + std::to_string(f.s->lateNs / 1000) + " us]";
    sc.misses.push_back(shape + ": truth ranks " + list(t.ranks) + " @ steps " + list(t.steps) + " late " +
                        std::to_string(t.lateNs / 1000) + " us (" + t.cause +
                        "); found:" + (got.empty() ? " none" : got));
  }
  int extra = 0;
  std::string what;
  for (const Found& f : found)
    if (!f.used) {
      ++extra;
      what += " [" + list(f.ranks) + " @ " + list(f.steps) + " " + std::to_string(f.s->lateNs / 1000) + " us, " +
              f.s->cause + " " + f.s->region + "]";
    }
  sc.extras += extra;
  if (j.stragglers.empty() && extra) ++sc.falseJobs;
  if (extra) sc.falses.push_back(shape + ": false straggler(s)" + what);
}

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

}  // namespace

class RanksGeneratedTest : public QObject {
  Q_OBJECT

 private slots:
  void sweep() {
    // 600 jobs in a release build (a few seconds); a sanitizer or debug build reads 120 of the same
    // jobs (the same code paths, at a tenth of the speed), against the same gates.
#if defined(ATTNSCOPE_SANITIZED) || !defined(NDEBUG)
    const int count = envInt("ATTNSCOPE_GEN_JOBS", 120);
#else
    const int count = envInt("ATTNSCOPE_GEN_JOBS", 600);
#endif
    const uint64_t seed = static_cast<uint64_t>(envInt("ATTNSCOPE_GEN_SEED", 42000));
    jobgen::Options o;
    if (const char* f = std::getenv("ATTNSCOPE_GEN_FORM")) o.form = f;
    if (const char* b = std::getenv("ATTNSCOPE_GEN_BACKEND")) o.backend = b;
    o.lateNs = static_cast<int64_t>(envInt("ATTNSCOPE_GEN_LATE_US", 0)) * 1000;
    o.jitterNs = static_cast<int64_t>(envInt("ATTNSCOPE_GEN_JITTER_US", 0)) * 1000;
    // Two threads, each its own jobs: every job is generated, read and analysed on one.
    std::vector<Score> parts(2);
    auto run = [&](size_t part) {
      for (int k = static_cast<int>(part); k < count; k += 2) {
        const jobgen::Job j = jobgen::generate(seed + static_cast<uint64_t>(k), o);
        std::vector<ranks::RankSummary> sums;
        for (const jobgen::File& f : j.files) sums.push_back(summarize(f));
        scoreJob(j, ranks::analyzeJob(std::move(sums)), parts[part]);
      }
    };
    std::thread other(run, 1);
    run(0);
    other.join();
    Score sc;
    for (const Score& p : parts) {
      sc.jobs += p.jobs, sc.truths += p.truths, sc.recalled += p.recalled, sc.cleanJobs += p.cleanJobs;
      sc.falseJobs += p.falseJobs, sc.extras += p.extras, sc.causesRight += p.causesRight;
      for (const auto& [form, v] : p.byForm) sc.byForm[form].first += v.first, sc.byForm[form].second += v.second;
      sc.misses.insert(sc.misses.end(), p.misses.begin(), p.misses.end());
      sc.falses.insert(sc.falses.end(), p.falses.begin(), p.falses.end());
    }
    const double recall = sc.truths ? static_cast<double>(sc.recalled) / sc.truths : 1.0;
    const double falseRate = sc.cleanJobs ? static_cast<double>(sc.falseJobs) / sc.cleanJobs : 0.0;
    std::printf("generated jobs: %d (seed %llu); stragglers %d, recalled %d (%.1f%%), their cause right %d (%.1f%%)\n",
                sc.jobs, static_cast<unsigned long long>(seed), sc.truths, sc.recalled, 100 * recall, sc.causesRight,
                sc.recalled ? 100.0 * sc.causesRight / sc.recalled : 0.0);
    for (const auto& [form, v] : sc.byForm) std::printf("  %-5s recalled %d of %d\n", form.c_str(), v.first, v.second);
    std::printf("jobs without a straggler: %d, with a false straggler %d (%.1f%%); false stragglers in all jobs: %d\n",
                sc.cleanJobs, sc.falseJobs, 100 * falseRate, sc.extras);
    for (const std::string& m : sc.misses) std::printf("  miss: %s\n", m.c_str());
    for (const std::string& f : sc.falses) std::printf("  false: %s\n", f.c_str());
    QVERIFY(sc.jobs == count);
    QVERIFY2(recall >= 0.98, qPrintable(QString("recall %1").arg(recall)));
    QVERIFY2(falseRate <= 0.01, qPrintable(QString("false stragglers in %1 of the clean jobs").arg(falseRate)));
  }
};

QTEST_GUILESS_MAIN(RanksGeneratedTest)
#include "test_ranks_generated.moc"
