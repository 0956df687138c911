// FilePolicy: what a confined process's graph ops may open.
#include "runtime/core/file_policy.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/host_dirs.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

class FilePolicyTest : public ::testing::Test {
 protected:
  FilePolicyTest()
      : base_(dirs_.base), root_(dirs_.root), outside_(dirs_.outside) {}

  std::shared_ptr<const FilePolicy> Confined() {
    auto p = FilePolicy::Confined({root_});
    EXPECT_TRUE(p.ok()) << p.status();
    return *p;
  }

  testing::HostDirs dirs_;
  const std::string base_, root_, outside_;
};

TEST_F(FilePolicyTest, UnrestrictedTakesAnyPathButOneWithANulByte) {
  auto p = FilePolicy::Unrestricted();
  EXPECT_EQ(p->Resolve("rel/x").value(), "rel/x");
  EXPECT_EQ(p->Resolve("/etc/../x").value(), "/etc/../x");
  auto nul = p->Resolve(std::string("/tmp/a\0b", 8));
  EXPECT_EQ(nul.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(nul.status().message()), HasSubstr("NUL"));
  EXPECT_EQ(p->Resolve("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FilePolicyTest, NoRootsAllowNothing) {
  auto p = FilePolicy::Confined({});
  ASSERT_TRUE(p.ok());
  auto r = (*p)->Resolve(root_ + "/ckpt");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--file-root"));
  EXPECT_EQ((*p)->DebugString(), "no file access");
}

TEST_F(FilePolicyTest, PathsInsideARootResolveThere) {
  auto p = Confined();
  EXPECT_EQ(p->Resolve(root_ + "/new/dir/model.ckpt").value(),
            root_ + "/new/dir/model.ckpt");
  EXPECT_EQ(p->Resolve(root_ + "/./a/../b").value(), root_ + "/b");
  EXPECT_EQ(p->Resolve(root_).value(), root_);
}

TEST_F(FilePolicyTest, DotDotAndSiblingPrefixesStayOutside) {
  auto p = Confined();
  for (const std::string& path :
       {root_ + "/../outside/victim", root_ + "/../outside/new",
        root_ + "x/file", std::string("/etc/passwd"), std::string("/"),
        root_ + "/a/../../outside"}) {
    auto r = p->Resolve(path);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << path;
  }
}

TEST_F(FilePolicyTest, TheRefusalDoesNotSayWhetherTheFileExists) {
  auto p = Confined();
  auto existing = p->Resolve(outside_ + "/victim");
  auto missing = p->Resolve(outside_ + "/nothing/here");
  auto through_file = p->Resolve(outside_ + "/victim/below");
  EXPECT_EQ(existing.status(), missing.status());
  EXPECT_EQ(existing.status(), through_file.status());
  EXPECT_EQ(existing.status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(FilePolicyTest, LinksAreFollowedBeforeTheCheck) {
  auto p = Confined();
  // A link inside the root to outside it does not let a path out...
  ASSERT_EQ(symlink(outside_.c_str(), (root_ + "/out").c_str()), 0);
  EXPECT_EQ(p->Resolve(root_ + "/out/victim").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(p->Resolve(root_ + "/out/new").status().code(),
            absl::StatusCode::kPermissionDenied);
  // ... nor does a dangling one, which whoever opens it would follow.
  ASSERT_EQ(symlink((outside_ + "/planted").c_str(), (root_ + "/dangling").c_str()), 0);
  auto dangling = p->Resolve(root_ + "/dangling");
  EXPECT_FALSE(dangling.ok());
  EXPECT_THAT(std::string(dangling.status().message()), HasSubstr("dangling"));
  // A link from outside into the root is followed there.
  ASSERT_EQ(symlink(root_.c_str(), (outside_ + "/in").c_str()), 0);
  EXPECT_EQ(p->Resolve(outside_ + "/in/ckpt").value(), root_ + "/ckpt");
}

TEST_F(FilePolicyTest, RelativePathsStartAtTheWorkingDirectory) {
  auto p = Confined();
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(root_.c_str()), 0);
  auto inside = p->Resolve("sub/ckpt");
  auto outside = p->Resolve("../outside/x");
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_EQ(inside.value(), root_ + "/sub/ckpt");
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(FilePolicyTest, ARootMustBeAnExistingDirectory) {
  auto missing = FilePolicy::Confined({base_ + "/nope"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nope"));
  auto file = FilePolicy::Confined({outside_ + "/victim"});
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft
