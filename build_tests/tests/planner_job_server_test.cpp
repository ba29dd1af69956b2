// The planner's side of a served supervisor (planner/job_server.h) against scripted
// servers (sh): what it makes of an answer, an error, a malformed line, silence, and a server that
// ends. The real server (a test executable with --backendbench_serve) is tested end to end by
// security/gallery_served_with_planted_secrets and the cli/llm entries.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "planner/job_server.h"

namespace {

using backendbench::planner::JobServer;

const std::string kAnswer = R"({"schema":"backendbench-job-response","version":1,"verdicts":2})";

JobServer::Request a_request() { return {"{}", "/dev/null", "/dev/null", "/dev/null"}; }

TEST(JobServer, AnAnswerMeansTheJobRan) {
  JobServer server({"/bin/sh", "-c", "while read line; do echo '" + kAnswer + "'; done"}, "/dev/null");
  EXPECT_EQ(server.run(a_request(), 10), "");
  EXPECT_EQ(server.run(a_request(), 10), "");  // the same server, kept
}

TEST(JobServer, ItsErrorIsTheReason) {
  JobServer server({"/bin/sh", "-c",
                    R"(read line; echo '{"schema":"backendbench-job-response","version":1,"error":"no such manifest"}')"},
                   "/dev/null");
  EXPECT_EQ(server.run(a_request(), 10), "no such manifest");
}

TEST(JobServer, ALineThatIsNotAResponseFails) {
  JobServer server({"/bin/sh", "-c", "read line; echo 'backendbench: salt 0x1'; sleep 30"}, "/dev/null");
  EXPECT_NE(server.run(a_request(), 10).find("not a version 1 backendbench-job-response"), std::string::npos);
}

TEST(JobServer, ASilentServerIsStoppedAtTheTimeout) {
  JobServer server({"/bin/sh", "-c", "read line; sleep 30"}, "/dev/null");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(server.run(a_request(), 0.5).find("did not answer within"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(JobServer, AServerThatDiesInARequestFailsIt) {
  JobServer server({"/bin/sh", "-c", "read line; exit 3"}, "/dev/null");
  EXPECT_NE(server.run(a_request(), 10).find("ended before it answered"), std::string::npos);
}

TEST(JobServer, AServerThatCannotStartSaysWhy) {
  char log[] = "/tmp/backendbench_job_server_log_XXXXXX";
  const int fd = mkstemp(log);
  ASSERT_GE(fd, 0);
  close(fd);
  JobServer server({"/bin/sh", "-c", "echo 'BACKENDBENCH_SANDBOX: error: bubblewrap is not installed' >&2; exit 2"}, log);
  const std::string failure = server.run(a_request(), 10);
  EXPECT_NE(failure.find("ended before"), std::string::npos) << failure;
  EXPECT_NE(failure.find("bubblewrap is not installed"), std::string::npos) << failure;
  unlink(log);
}

TEST(JobServer, AServerThatEndedBetweenRequestsIsStartedAgain) {
  // Each server answers one request, then ends: the second request goes to a new one.
  JobServer server({"/bin/sh", "-c", "read line; echo '" + kAnswer + "'"}, "/dev/null");
  EXPECT_EQ(server.run(a_request(), 10), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(server.run(a_request(), 10), "");
}

TEST(JobServer, AServerStartedAheadRunsBeforeItsFirstRequest) {
  char folder[] = "/tmp/backendbench_job_server_test_XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const std::string marker = std::string(folder) + "/started";
  JobServer server({"/bin/sh", "-c", "touch " + marker + "; while read line; do echo '" + kAnswer + "'; done"}, "/dev/null");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_NE(access(marker.c_str(), F_OK), 0);  // not started by being made
  server.start_ahead();
  bool started = false;
  for (int waited = 0; !started && waited < 10000; waited += 20) {
    started = access(marker.c_str(), F_OK) == 0;
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(started);
  unlink(marker.c_str());
  server.start_ahead();  // running: not started again
  EXPECT_EQ(server.run(a_request(), 10), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_NE(access(marker.c_str(), F_OK), 0);
  rmdir(folder);
}

TEST(JobServer, AServerEndsByItselfWhenItsPlannerIsDone) {
  // What it does once its input closes (a served executable removes its workers' scratch
  // folders) happens before it is gone: it is not killed at once.
  char folder[] = "/tmp/backendbench_job_server_test_XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const std::string marker = std::string(folder) + "/ended_by_itself";
  {
    JobServer server({"/bin/sh", "-c", "while read line; do echo '" + kAnswer + "'; done; sleep 0.2; touch " + marker},
                     "/dev/null");
    EXPECT_EQ(server.run(a_request(), 10), "");
  }
  EXPECT_EQ(access(marker.c_str(), F_OK), 0);
  unlink(marker.c_str());
  rmdir(folder);
}

}  // namespace
