// A fresh directory tree for tests of what a process may open: `root` (to
// allow) and `outside` (holding a file, `victim`, that must stay as it
// is), both under a new `base` in /tmp, removed again by the destructor.
#ifndef WEFT_TESTS_RUNTIME_HOST_DIRS_H_
#define WEFT_TESTS_RUNTIME_HOST_DIRS_H_

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace weft {
namespace testing {

struct HostDirs {
  HostDirs() {
    char tmpl[] = "/tmp/weft_host_dirs_XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    base = tmpl;
    root = base + "/root";
    outside = base + "/outside";
    EXPECT_EQ(mkdir(root.c_str(), 0700), 0);
    EXPECT_EQ(mkdir(outside.c_str(), 0700), 0);
    std::ofstream(outside + "/victim") << "keep me";
  }
  ~HostDirs() { EXPECT_EQ(system(("rm -rf '" + base + "'").c_str()), 0); }
  HostDirs(const HostDirs&) = delete;
  HostDirs& operator=(const HostDirs&) = delete;

  std::string base, root, outside;
};

}  // namespace testing
}  // namespace weft

#endif  // WEFT_TESTS_RUNTIME_HOST_DIRS_H_
