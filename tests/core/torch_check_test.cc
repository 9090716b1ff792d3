// Which python3 runs the PyTorch helper (FORGEK_PYTHON, else the first with torch), the `check`
// that a missing torch fails at once and clearly, and `run` with each request's own sizes.
#include "forgek/core/torch_helper.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include <gtest/gtest.h>

#include "test_util.h"

namespace forgek {
namespace {

// Sets an environment variable for the life of the object, then puts it back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* before = std::getenv(name);
    had_ = before != nullptr;
    if (had_) before_ = before;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, before_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string before_;
};

TorchHelperPaths Found() {
  TorchHelperPaths paths;
  std::string err;
  EXPECT_TRUE(FindTorchHelper(&paths, &err)) << err;
  return paths;
}

// A python3 that cannot see torch: the real one without its site-packages (-S).
std::string PythonWithoutTorch(const TempDir& dir, const std::string& real) {
  std::string path = dir.file("python3");
  WriteFile(path, "#!/bin/sh\nexec " + real + " -S \"$@\"\n");
  chmod(path.c_str(), 0755);
  return path;
}

TEST(TorchCheck, APythonWithoutTorchFailsTheCheckClearly) {
  TorchHelperPaths real = Found();
  TempDir dir;
  ScopedEnv env("FORGEK_PYTHON", PythonWithoutTorch(dir, real.python));
  TorchHelperPaths paths = Found();
  EXPECT_EQ(paths.python, dir.file("python3"));
  TorchCheck check;
  std::string err;
  EXPECT_FALSE(CheckTorch(paths, &check, &err));
  EXPECT_NE(err.find("PyTorch is not installed for"), std::string::npos) << err;
  EXPECT_NE(err.find("set FORGEK_PYTHON"), std::string::npos) << err;
  EXPECT_FALSE(CheckTorchGoldenRuns("relu_fp32", "golden.py", &paths, &err));
  EXPECT_EQ(err.rfind("the golden of relu_fp32 is a PyTorch problem (golden.py), which needs python3 with torch: "
                      "PyTorch is not installed for",
                      0),
            0u)
      << err;
}

TEST(TorchCheck, AMissingPythonIsNamed) {
  ScopedEnv env("FORGEK_PYTHON", "/nonexistent/python3");
  TorchHelperPaths paths;
  std::string err;
  EXPECT_FALSE(CheckTorchGoldenRuns("relu_fp32", "golden.py", &paths, &err));
  EXPECT_NE(err.find("FORGEK_PYTHON=/nonexistent/python3 is not an executable file"), std::string::npos) << err;
}

TEST(TorchCheck, TheFoundPythonImportsTorch) {
  TorchCheck check;
  std::string err;
  ASSERT_TRUE(CheckTorch(Found(), &check, &err)) << err;
  EXPECT_FALSE(check.torch_version.empty());
  EXPECT_FALSE(check.python.empty());
}

TEST(TorchCheck, WithoutFORGEK_PYTHONAnInterpreterWithTorchIsPreferred) {
  TorchHelperPaths real = Found();
  TempDir dir;
  const std::string shim = PythonWithoutTorch(dir, real.python);
  const char* forced = std::getenv("FORGEK_PYTHON");
  if (forced && *forced) GTEST_SKIP() << "FORGEK_PYTHON is set";
  // PATH's python3 has no torch; /usr/bin/python3 is picked when it has torch, else the first.
  ScopedEnv path("PATH", dir.path());
  TorchHelperPaths paths = Found();
  TorchCheck check;
  std::string err;
  TorchHelperPaths usr{"/usr/bin/python3", paths.script};
  if (access("/usr/bin/python3", X_OK) == 0 && CheckTorch(usr, &check, &err)) {
    EXPECT_EQ(paths.python, "/usr/bin/python3");
  } else {
    EXPECT_EQ(paths.python, shim);
  }
}

// softmax over rows, its sizes named rows and cols.
const char* kSoftmax = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)

rows = 64
cols = 1024

def get_inputs():
    return [torch.randn(rows, cols)]

def get_init_inputs():
    return []
)";

TEST(TorchCheck, RunTakesEachRequestsSizes) {
  TempDir dir;
  WriteFile(dir.file("softmax.py"), kSoftmax);
  TorchServer server;
  std::string err;
  ASSERT_TRUE(server.Start(Found(), dir.file("softmax.py"), {}, &err)) << err;
  for (int cols : {3, 7}) {
    SCOPED_TRACE(cols);
    const int rows = 2;
    std::vector<float> x(rows * cols);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i % 5) - 1.0f;
    TorchTensor in{"x", "f32", {rows, cols}, std::string(reinterpret_cast<const char*>(x.data()), x.size() * 4)};
    std::vector<TorchTensor> got;
    TorchRunInfo info;
    ASSERT_TRUE(server.Run({{"rows", rows}, {"cols", cols}}, {in}, &got, &info, &err)) << err;
    EXPECT_TRUE(info.device == "cpu" || info.device == "cuda") << info.device;
    EXPECT_GE(info.compute_s, 0);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape, (std::vector<int64_t>{rows, cols}));
    const float* y = reinterpret_cast<const float*>(got[0].bytes.data());
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(x[r * cols + c]));
      for (int c = 0; c < cols; ++c)
        EXPECT_NEAR(y[r * cols + c], std::exp(static_cast<double>(x[r * cols + c])) / sum, 1e-7);
    }
  }
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace forgek
