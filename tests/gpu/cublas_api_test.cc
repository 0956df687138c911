// Loading cuBLAS at run time (runtime/gpu/cublas_api.h), checked without a
// GPU: the errors when the library is missing or is not cuBLAS, and, where
// the build found the toolkit, that every entry point resolves from it.
// A CPU-only build has no loader: the test says so and skips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#ifdef WEFT_EXPECT_CUDA
#include "runtime/gpu/cublas_api.h"
#endif

namespace weft {
namespace {

using ::testing::HasSubstr;

#ifdef WEFT_EXPECT_CUDA

TEST(CublasApiTest, AMissingLibraryNamesThePathsAndWhatToDo) {
  const std::string missing = "/nonexistent/weft-test/libcublas.so.13";
  absl::StatusOr<CublasApi> api = LoadCublasFrom({"libweft_no_such_cublas.so", missing});
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(api.status().message());
  EXPECT_THAT(message, HasSubstr("cannot load cuBLAS"));
  EXPECT_THAT(message, HasSubstr("libweft_no_such_cublas.so"));
  EXPECT_THAT(message, HasSubstr(missing));
  EXPECT_THAT(message, HasSubstr("No such file"));  // dlopen's reason
  EXPECT_THAT(message, HasSubstr("LD_LIBRARY_PATH"));
}

TEST(CublasApiTest, ALibraryWithoutTheEntryPointsIsRefused) {
  // libm opens but is not cuBLAS: the first missing entry point is named.
  absl::StatusOr<CublasApi> api = LoadCublasFrom({"libm.so.6"});
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(api.status().message(), HasSubstr("libm.so.6 has no cublasCreate_v2"));
}

TEST(CublasApiTest, LaterCandidatesAreTriedAfterAFailure) {
  const std::vector<std::string> candidates = CublasCandidates();
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_THAT(candidates[0], HasSubstr("libcublas.so."));
  // The toolkit's own path works even when the soname is not on the
  // library path, and after a candidate that does not exist.
  absl::StatusOr<CublasApi> api =
      LoadCublasFrom({"/nonexistent/libcublas.so", candidates[1]});
  ASSERT_TRUE(api.ok()) << api.status();
  EXPECT_NE(api->sgemm, nullptr);
}

TEST(CublasApiTest, TheBuildsToolkitResolvesEveryEntryPoint) {
  // Needs no GPU: resolving symbols and naming a status touch no device.
  absl::StatusOr<const CublasApi*> api = LoadCublas();
  ASSERT_TRUE(api.ok()) << api.status();
  EXPECT_NE((*api)->create, nullptr);
  EXPECT_NE((*api)->set_stream, nullptr);
  EXPECT_NE((*api)->sgemm, nullptr);
  ASSERT_NE((*api)->get_status_name, nullptr);
  EXPECT_STREQ((*api)->get_status_name(CUBLAS_STATUS_NOT_INITIALIZED),
               "CUBLAS_STATUS_NOT_INITIALIZED");
  // Loaded once: the same table every call.
  EXPECT_EQ(*LoadCublas(), *api);
}

#else

TEST(CublasApiTest, NeedsACudaBuild) {
  std::printf("SKIPPED: needs a CUDA build (this build has no CUDA toolkit)\n");
  GTEST_SKIP() << "this build has no CUDA";
}

#endif

}  // namespace
}  // namespace weft
