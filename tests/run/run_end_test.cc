// Tests that a run is never left `running`: an exception, a store that refuses a write, an
// interrupt each end it `failed` or `interrupted` with its summary, and --resume continues it.
#include "forgek/run/run.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "forgek/agent/builtin_agent.h"
#include "forgek/knowledge/store.h"
#include "loop_fixture.h"
#include "scripted_evaluator.h"
#include "test_util.h"

namespace forgek {
namespace {

// A scripted GPU whose evaluations throw from the `fail_at`-th on (1-based), as a bug would.
class ThrowingEvaluator : public ScriptedEvaluator {
 public:
  ThrowingEvaluator(TimeModel model, int fail_at) : ScriptedEvaluator(std::move(model)), fail_at_(fail_at) {}
  EvalResult Evaluate(const EvalRequest& req) override {
    if (++calls_ >= fail_at_) throw std::runtime_error("evaluator exploded on call " + std::to_string(calls_));
    return ScriptedEvaluator::Evaluate(req);
  }

 private:
  int fail_at_;
  int calls_ = 0;
};

RunRecord StoredRun(Store& store, const std::string& id) {
  RunRecord run;
  bool found = false;
  std::string err;
  EXPECT_TRUE(store.GetRun(id, &run, &found, &err)) << err;
  EXPECT_TRUE(found) << id;
  return run;
}

void Exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* msg = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg), SQLITE_OK) << (msg ? msg : "");
  sqlite3_free(msg);
  sqlite3_close(db);
}

// The toy operator with only the family that compiles (every attempt is evaluated), a store, a
// compiler and an agent.
struct Rig : LoopFixture {
  Store store;
  Compiler compiler{TestCompilerOptions(dir)};
  BuiltinAgent agent{BuiltinAgentOptions{.seed = 4}};
  std::string err;
  Rig() {
    op.families = {"families/tiled.cu"};
    EXPECT_TRUE(store.Open(dir.file("store.db"), &err)) << err;
  }
  RunServices Services(Evaluator* evaluator) { return RunServices{&agent, &compiler, evaluator, &store}; }
  // A run of `iterations` attempts, one proposal at a time.
  static RunOptions Options(int iterations) {
    RunOptions opts;
    opts.iterations = iterations;
    opts.batch = 1;
    return opts;
  }
  // Resumes run `id` with a working evaluator: it finishes, with two more attempts than `before`.
  void ResumeFinishes(const std::string& id, int before) {
    ScriptedEvaluator good(Model);
    RunServices services = Services(&good);
    RunOptions opts = Options(2);
    opts.resume_run = id;
    RunSummary resumed;
    ASSERT_TRUE(RunOptimisation(op, opts, services, &resumed, &err)) << err;
    EXPECT_EQ(resumed.run_id, id);
    EXPECT_EQ(resumed.status, "finished");
    EXPECT_EQ(StoredRun(store, id).status, "finished");
    std::vector<AttemptRecord> attempts;
    ASSERT_TRUE(store.ListAttempts(id, &attempts, &err)) << err;
    EXPECT_EQ(static_cast<int>(attempts.size()), before + 2);
  }
};

TEST(RunEnd, AnExceptionInTheLoopEndsTheRunFailedWithItsReasonAndResumeContinues) {
  Rig rig;
  ThrowingEvaluator evaluator(Model, 3);
  RunServices services = rig.Services(&evaluator);
  RunSummary s;
  EXPECT_FALSE(RunOptimisation(rig.op, Rig::Options(6), services, &s, &rig.err));
  EXPECT_NE(rig.err.find("internal error: evaluator exploded on call 3"), std::string::npos) << rig.err;
  ASSERT_FALSE(s.run_id.empty()) << "the summary names the run that failed";
  EXPECT_EQ(s.stop_reason, StopReason::error);
  EXPECT_EQ(s.status, "failed");
  EXPECT_EQ(s.attempts, 2) << "the attempts before the exception are counted";
  RunRecord run = StoredRun(rig.store, s.run_id);
  EXPECT_EQ(run.status, "failed");
  nlohmann::json summary = nlohmann::json::parse(run.summary_json);
  EXPECT_NE(summary.value("error", "").find("evaluator exploded"), std::string::npos) << run.summary_json;
  EXPECT_NE(RunSummaryJson(s).find("\"status\": \"failed\""), std::string::npos);
  EXPECT_NE(RunSummaryText(s).find("evaluator exploded"), std::string::npos) << RunSummaryText(s);

  rig.ResumeFinishes(s.run_id, 2);
}

TEST(RunEnd, AnExceptionOnOneOfSeveralGpusFailsTheRunWithoutEndingTheProcess) {
  Rig rig;
  ScriptedEvaluator gpu0(Model);
  ThrowingEvaluator gpu1(Model, 1);
  RunServices services = rig.Services(&gpu0);
  services.more_evaluators = {&gpu1};
  RunOptions opts = Rig::Options(8);
  opts.batch = 4;
  RunSummary s;
  EXPECT_FALSE(RunOptimisation(rig.op, opts, services, &s, &rig.err));
  EXPECT_NE(rig.err.find("evaluator exploded"), std::string::npos) << rig.err;
  EXPECT_EQ(StoredRun(rig.store, s.run_id).status, "failed");
}

TEST(RunEnd, AStoreThatRefusesAWriteMidRunEndsItFailedAndResumeContinues) {
  Rig rig;
  // From the third attempt on, the store refuses to record one, as a lock held beyond the busy
  // timeout would; the runs table still takes the run's end.
  Exec(rig.dir.file("store.db"),
       "CREATE TRIGGER refuse_attempts BEFORE INSERT ON attempts WHEN (SELECT COUNT(*) FROM attempts) >= 2 "
       "BEGIN SELECT RAISE(ABORT, 'database is locked'); END;");
  ScriptedEvaluator evaluator(Model);
  RunServices services = rig.Services(&evaluator);
  RunSummary s;
  EXPECT_FALSE(RunOptimisation(rig.op, Rig::Options(6), services, &s, &rig.err));
  EXPECT_NE(rig.err.find("database is locked"), std::string::npos) << rig.err;
  EXPECT_EQ(s.status, "failed");
  RunRecord run = StoredRun(rig.store, s.run_id);
  EXPECT_EQ(run.status, "failed");
  EXPECT_NE(run.summary_json.find("database is locked"), std::string::npos) << run.summary_json;

  Exec(rig.dir.file("store.db"), "DROP TRIGGER refuse_attempts;");
  rig.ResumeFinishes(s.run_id, 2);
}

TEST(RunEnd, AStoreThatRefusesEvenTheRunsEndSaysTheRunStaysRunningAndHowToResume) {
  Rig rig;
  Exec(rig.dir.file("store.db"),
       "CREATE TRIGGER refuse_attempts BEFORE INSERT ON attempts BEGIN SELECT RAISE(ABORT, 'database is locked'); END;"
       "CREATE TRIGGER refuse_end BEFORE UPDATE ON runs BEGIN SELECT RAISE(ABORT, 'database is locked'); END;");
  ScriptedEvaluator evaluator(Model);
  RunServices services = rig.Services(&evaluator);
  RunSummary s;
  EXPECT_FALSE(RunOptimisation(rig.op, Rig::Options(3), services, &s, &rig.err));
  EXPECT_NE(rig.err.find("stays 'running'"), std::string::npos) << rig.err;
  EXPECT_NE(rig.err.find("--resume " + s.run_id), std::string::npos) << rig.err;
  EXPECT_EQ(StoredRun(rig.store, s.run_id).status, "running");
}

TEST(RunEnd, AnInterruptedRunIsRecordedInterruptedAndResumes) {
  Rig rig;
  ScriptedEvaluator evaluator(Model);
  std::atomic<int> seen{0};
  RunServices services = rig.Services(&evaluator);
  services.progress = [&](const std::string&) { ++seen; };
  services.stop_requested = [&] { return seen.load() >= 2; };
  RunSummary s;
  ASSERT_TRUE(RunOptimisation(rig.op, Rig::Options(6), services, &s, &rig.err)) << rig.err;
  EXPECT_EQ(s.stop_reason, StopReason::interrupted);
  EXPECT_EQ(s.status, "interrupted");
  EXPECT_EQ(StoredRun(rig.store, s.run_id).status, "interrupted");
  rig.ResumeFinishes(s.run_id, 2);
}

}  // namespace
}  // namespace forgek
