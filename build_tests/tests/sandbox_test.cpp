// The sandbox's environment and command line (sandbox.h): what a kernel worker is given.
#include "backendbench/sandbox.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "backendbench/files.h"

namespace backendbench {
namespace {

TEST(Sandbox, OnlyAllowlistedVariablesPass) {
  const std::map<std::string, std::string> outside = {
      {"PATH", "/usr/bin"}, {"OMP_NUM_THREADS", "2"}, {"ANTHROPIC_API_KEY", "sk-ant-secret"},
      {"OPENAI_API_KEY", "sk-secret"}, {"AWS_SECRET_ACCESS_KEY", "aws"}, {"GITHUB_TOKEN", "ghp"},
      {"HOME", "/home/someone"}, {"SSH_AUTH_SOCK", "/run/agent"}};
  const auto lookup = [&](const char* name) -> const char* {
    const auto found = outside.find(name);
    return found == outside.end() ? nullptr : found->second.c_str();
  };
  const std::map<std::string, std::string> inside = sandbox_environment("/scratch", lookup);
  EXPECT_EQ(inside.at("PATH"), "/usr/bin");
  EXPECT_EQ(inside.at("OMP_NUM_THREADS"), "2");
  EXPECT_EQ(inside.at("HOME"), "/scratch/home");
  EXPECT_EQ(inside.at("TMPDIR"), "/scratch/tmp");
  for (const auto& [name, value] : inside) {
    EXPECT_EQ(value.find("secret"), std::string::npos) << name;
    EXPECT_TRUE(name != "ANTHROPIC_API_KEY" && name != "GITHUB_TOKEN" && name != "SSH_AUTH_SOCK") << name;
  }
}

TEST(Sandbox, SecretShapedNamesAreRefusedEvenIfListed) {
  EXPECT_TRUE(environment_variable_allowed("PATH"));
  EXPECT_FALSE(environment_variable_allowed("ANTHROPIC_API_KEY"));
  EXPECT_FALSE(environment_variable_allowed("HF_TOKEN"));
  EXPECT_FALSE(environment_variable_allowed("MY_PASSWORD"));
}

// The value following `flag` at each of its places in `argv`.
std::vector<std::string> values_of(const std::vector<std::string>& argv, const std::string& flag) {
  std::vector<std::string> values;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag) values.push_back(argv[i + 1]);
  }
  return values;
}

TEST(Sandbox, TheCommandIsolatesAndHidesHome) {
  SandboxPolicy policy;
  policy.environment = {{"PATH", "/usr/bin"}};
  policy.read_only = {"/usr/lib"};
  const std::vector<std::string> argv = sandboxed_command("/usr/bin/bwrap", policy, {"/bin/worker", "--manifest", "m"});
  auto has = [&](const char* flag) { return std::find(argv.begin(), argv.end(), flag) != argv.end(); };
  for (const char* flag : {"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv"}) {
    EXPECT_TRUE(has(flag)) << flag;
  }
  EXPECT_EQ(values_of(argv, "--cap-drop"), std::vector<std::string>{"ALL"});
  EXPECT_EQ(values_of(argv, "--uid"), std::vector<std::string>{"65534"});
  const std::vector<std::string> hidden = values_of(argv, "--tmpfs");
  EXPECT_NE(std::find(hidden.begin(), hidden.end(), "/tmp"), hidden.end());
  EXPECT_NE(std::find(hidden.begin(), hidden.end(), "/root"), hidden.end());
  // The root file system is bound read-only, never writable; no GPU device without `gpu`.
  EXPECT_TRUE(values_of(argv, "--bind").empty());
  EXPECT_TRUE(values_of(argv, "--dev-bind").empty());
  // /usr/lib is not under a hidden folder: readable already, not bound again.
  const std::vector<std::string> bound = values_of(argv, "--ro-bind");
  EXPECT_EQ(std::count(bound.begin(), bound.end(), "/usr/lib"), 0);
  EXPECT_EQ(values_of(argv, "--chdir"), std::vector<std::string>{SandboxPolicy::kScratch});
  EXPECT_EQ(std::vector<std::string>(argv.end() - 4, argv.end()), (std::vector<std::string>{"--", "/bin/worker", "--manifest", "m"}));
  EXPECT_EQ(values_of(argv, "--setenv"), std::vector<std::string>{"PATH"});
}

TEST(Sandbox, FoldersUnderAHiddenOneAreBoundBackReadOnly) {
  SandboxPolicy policy;
  policy.read_only = {"/root", "/tmp"};  // exist on every machine this runs on
  const std::vector<std::string> bound = values_of(sandboxed_command("bwrap", policy, {"w"}), "--ro-bind");
  EXPECT_NE(std::find(bound.begin(), bound.end(), "/root"), bound.end());
}

TEST(Sandbox, ALinkIsBoundWithWhereItLeads) {
  // A kernel view's file links to the user's kernel, both under a hidden folder (/tmp): the
  // worker must see the target too (a .py kernel of a view failed to import without it).
  const std::string base = "/tmp/sandbox_link_" + std::to_string(getpid());
  files::make_directories(base + "/kernels");
  files::make_directories(base + "/view");
  files::write_whole(base + "/kernels/k.py", "x = 1\n");
  files::make_link(base + "/kernels/k.py", base + "/view/k.py");
  SandboxPolicy policy;
  policy.read_only = {base + "/view/k.py"};
  const std::vector<std::string> bound = values_of(sandboxed_command("bwrap", policy, {"w"}), "--ro-bind");
  files::remove_tree(base);
  EXPECT_NE(std::find(bound.begin(), bound.end(), base + "/view/k.py"), bound.end());
  EXPECT_NE(std::find(bound.begin(), bound.end(), base + "/kernels/k.py"), bound.end());
}

TEST(Sandbox, AWritableFolderIsBoundAfterTheHiddenOnes) {
  SandboxPolicy policy;
  policy.writable = {"/tmp"};
  const std::vector<std::string> argv = sandboxed_command("bwrap", policy, {"w"});
  EXPECT_EQ(values_of(argv, "--bind"), std::vector<std::string>{"/tmp"});
  // After /tmp's own tmpfs, or the bind would be hidden by it.
  const auto tmpfs = std::find(argv.begin(), argv.end(), "--tmpfs");
  const auto bind = std::find(argv.begin(), argv.end(), "--bind");
  EXPECT_LT(tmpfs - argv.begin(), bind - argv.begin());
}

// A real bubblewrap run (skipped where there is none): the writable folder takes a file, a
// read-only one refuses it, and the host's environment does not come in.
TEST(Sandbox, WritesOnlyWhereWritableForReal) {
  const std::optional<std::string> bwrap = bubblewrap_executable();
  if (!bwrap) GTEST_SKIP() << "no bubblewrap";
  const std::string base = ::testing::TempDir() + "/sandbox_writable_" + std::to_string(getpid());
  files::make_directories(base + "/out");
  files::make_directories(base + "/in");
  SandboxPolicy policy;
  policy.read_only = {base + "/in"};
  policy.writable = {base + "/out"};
  policy.environment = {{"PATH", "/usr/bin:/bin"}};
  setenv("BACKENDBENCH_TEST_SECRET_TOKEN", "s3cret", 1);
  const std::string script = "echo \"$BACKENDBENCH_TEST_SECRET_TOKEN\" > " + base + "/out/made; echo x > " + base +
                             "/in/made 2>/dev/null; exit 0";
  std::string command;
  for (const std::string& part : sandboxed_command(*bwrap, policy, {"/bin/sh", "-c", script})) {
    command += "'" + part + "' ";
  }
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  unsetenv("BACKENDBENCH_TEST_SECRET_TOKEN");
  std::ifstream made(base + "/out/made");
  std::stringstream text;
  text << made.rdbuf();
  EXPECT_TRUE(made.is_open());
  EXPECT_EQ(text.str(), "\n");  // made, and without the secret
  EXPECT_FALSE(std::ifstream(base + "/in/made").is_open());
  files::remove_tree(base);
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(BuildCommand, WritesTheFoldersOfItsOutputsAndDependencyFile) {
  const std::vector<std::string> words = {"/usr/bin/c++", "-MD", "-MT", "k.o", "-MF", "deps/k.o.d", "-o", "objects/k.o",
                                          "-c", "/src/k.cpp"};
  EXPECT_EQ(build_command_outputs(words, "/build"), (std::vector<std::string>{"/build/deps", "/build/objects"}));
  EXPECT_EQ(build_command_outputs({"/usr/bin/c++", "-o", "/abs/out/k.o"}, "/build"), std::vector<std::string>{"/abs/out"});
  EXPECT_TRUE(build_command_outputs({"/usr/bin/c++", "-c", "k.cpp"}, "/build").empty());
  // A link's dependency file (CMake 3.27 and later with GNU ld): its folder is written too.
  EXPECT_EQ(build_command_outputs({"/usr/bin/c++", "-shared", "-Wl,--dependency-file=CMakeFiles/slot.dir/link.d", "-o",
                                   "slots/libslot.so", "k.o"},
                                  "/build"),
            (std::vector<std::string>{"/build/CMakeFiles/slot.dir", "/build/slots"}));
}

TEST(BuildCommand, ReadsWhatItNamesAndNeverWhereLinksLead) {
  const std::string base = "/tmp/backendbench_build_command_" + std::to_string(getpid());
  files::make_directories(base + "/kernels/relu");
  files::make_directories(base + "/view/relu");
  files::make_directories(base + "/include");
  files::make_directories(base + "/pch");
  files::write_whole(base + "/kernels/relu/k.cpp", "int x;\n");
  files::write_whole(base + "/pch/cmake_pch.hxx", "\n");
  files::make_link(base + "/kernels/relu/k.cpp", base + "/view/relu/k.cpp");
  const std::vector<std::string> inputs = build_command_inputs(
      {"/usr/bin/c++", "-I" + base + "/include", "-I" + base + "/view", "-include", base + "/pch/cmake_pch.hxx",
       "-Wl,-rpath," + base + "/include:" + base + "/missing", "-o", "relative/k.o", "-c", base + "/no_such_file.cpp"});
  files::remove_tree(base);
  const auto has = [&](const std::string& path) { return std::find(inputs.begin(), inputs.end(), path) != inputs.end(); };
  EXPECT_TRUE(has(base + "/include"));
  EXPECT_TRUE(has(base + "/view"));
  EXPECT_TRUE(has(base + "/pch/cmake_pch.hxx"));
  EXPECT_TRUE(has(base + "/pch")) << "the folder of a forced include, where its .gch lies";
  EXPECT_FALSE(has(base + "/missing"));
  EXPECT_FALSE(has(base + "/no_such_file.cpp"));
  EXPECT_FALSE(has(base + "/kernels/relu/k.cpp")) << "a link inside a named folder is not followed";
  EXPECT_FALSE(has(base + "/kernels"));
}

// A kernel folder that holds a link to a secret (a downloaded folder with relu/notes.h ->
// ~/.key, say): its kernel's #include "notes.h" finds nothing in the sandbox, and the error
// quotes nothing; a kernel view's links work because the launcher is told where they lead
// (--read-only), and only there.
TEST(BuildCommand, ALinkInAKernelFolderDoesNotReachAHiddenSecret) {
  if (!bubblewrap_executable()) GTEST_SKIP() << "no bubblewrap";
  const std::string base = "/tmp/backendbench_build_link_" + std::to_string(getpid());
  files::make_directories(base + "/kernels/relu");
  files::make_directories(base + "/view/relu");
  files::make_directories(base + "/build/objects");
  files::make_directories(base + "/secrets");
  files::write_whole(base + "/secrets/key.txt", "sk-planted-linked-secret\n");
  files::make_link(base + "/secrets/key.txt", base + "/kernels/relu/notes.h");
  files::write_whole(base + "/kernels/relu/k.cpp", "#include \"notes.h\"\nint f() { return 1; }\n");
  files::write_whole(base + "/kernels/relu/ok.cpp", "int g() { return 2; }\n");
  files::make_link(base + "/kernels/relu/ok.cpp", base + "/view/relu/ok.cpp");
  // As the kernel libraries build: a binding in the build folder includes the kernel through
  // the kernel folder (or view) on the include path.
  files::write_whole(base + "/build/k.binding.cpp", "#include \"relu/k.cpp\"\n");
  files::write_whole(base + "/build/ok.binding.cpp", "#include \"relu/ok.cpp\"\n");
  const auto compile = [&](const std::string& launcher_options, const std::string& kernels, const std::string& binding) {
    const std::string command = "cd " + base + "/build && BACKENDBENCH_SANDBOX=bwrap " + BACKENDBENCH_TEST_BUILD_SANDBOX +
                                " --hide " + base + " " + launcher_options + " -- /usr/bin/c++ -I" + kernels +
                                " -o objects/k.o -c " + base + "/build/" + binding + " > " + base + "/log 2>&1";
    const int status = std::system(command.c_str());
    return std::make_pair(status, text_of(base + "/log"));
  };
  const auto [linked, linked_log] = compile("", base + "/kernels", "k.binding.cpp");
  const auto [view, view_log] = compile("--read-only " + base + "/kernels", base + "/view", "ok.binding.cpp");
  const auto [view_alone, view_alone_log] = compile("", base + "/view", "ok.binding.cpp");
  files::remove_tree(base);
  EXPECT_NE(linked, 0) << linked_log;
  EXPECT_EQ(linked_log.find("sk-planted-linked-secret"), std::string::npos) << linked_log;
  EXPECT_NE(linked_log.find("notes.h"), std::string::npos) << "the error names what it could not read: " << linked_log;
  EXPECT_EQ(view, 0) << "a view's link leads into the folder the launcher names: " << view_log;
  EXPECT_NE(view_alone, 0) << "without --read-only the view's link leads nowhere: " << view_alone_log;
}

// The compiler launcher for real (skipped without bubblewrap): a kernel that includes a secret
// in a hidden folder does not compile, and the compiler's error does not quote the secret; the
// same kernel with BACKENDBENCH_SANDBOX=none does (so the test can fail).
TEST(BuildCommand, AKernelCannotIncludeAHiddenSecret) {
  if (!bubblewrap_executable()) GTEST_SKIP() << "no bubblewrap";
  const std::string base = "/tmp/backendbench_build_sandbox_" + std::to_string(getpid());
  files::make_directories(base + "/kernel");
  files::make_directories(base + "/build/objects");
  files::make_directories(base + "/secrets");
  files::write_whole(base + "/secrets/key.txt", "sk-planted-secret-for-the-test\n");
  files::write_whole(base + "/kernel/k.cpp", "#include \"" + base + "/secrets/key.txt\"\nint f() { return 1; }\n");
  const auto compile = [&](const char* sandbox) {
    const std::string command = "cd " + base + "/build && BACKENDBENCH_SANDBOX=" + sandbox + " " + BACKENDBENCH_TEST_BUILD_SANDBOX +
                                " --hide " + base + "/build --hide " + base + "/secrets -- /usr/bin/c++ -I" + base +
                                "/kernel -o objects/k.o -c " + base + "/kernel/k.cpp > " + base + "/log 2>&1";
    const int status = std::system(command.c_str());
    return std::make_pair(status, text_of(base + "/log"));
  };
  const auto [sandboxed, sandboxed_log] = compile("bwrap");
  const auto [unsandboxed, unsandboxed_log] = compile("none");
  files::remove_tree(base);
  EXPECT_NE(sandboxed, 0) << sandboxed_log;
  EXPECT_EQ(sandboxed_log.find("sk-planted-secret"), std::string::npos) << sandboxed_log;
  EXPECT_NE(sandboxed_log.find("key.txt"), std::string::npos) << "the error names the file it could not read: " << sandboxed_log;
  EXPECT_NE(unsandboxed, 0);
  EXPECT_NE(unsandboxed_log.find("sk-planted-secret"), std::string::npos) << unsandboxed_log;
}

TEST(BuildCommand, ACompileWritesItsObjectInTheSandbox) {
  if (!bubblewrap_executable()) GTEST_SKIP() << "no bubblewrap";
  const std::string base = "/tmp/backendbench_build_sandbox_ok_" + std::to_string(getpid());
  files::make_directories(base + "/kernel");
  files::make_directories(base + "/build/objects");
  files::write_whole(base + "/kernel/k.cpp", "int f() { return 1; }\n");
  const std::string command = "cd " + base + "/build && " + std::string(BACKENDBENCH_TEST_BUILD_SANDBOX) + " --hide " + base +
                              "/build -- /usr/bin/c++ -MD -MT objects/k.o -MF objects/k.o.d -o objects/k.o -c " + base +
                              "/kernel/k.cpp";
  const int status = std::system(command.c_str());
  const bool object = std::ifstream(base + "/build/objects/k.o").is_open(), deps = std::ifstream(base + "/build/objects/k.o.d").is_open();
  files::remove_tree(base);
  EXPECT_EQ(status, 0) << command;
  EXPECT_TRUE(object && deps);
}

}  // namespace
}  // namespace backendbench
