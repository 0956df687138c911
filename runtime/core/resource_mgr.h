// ResourceMgr: per-device store of stateful objects (variables), named by
// (container, name), shared by every session and step that uses the device.
//
//   WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Var> var,
//       rm->LookupOrCreate<Var>("localhost", "w", [] {
//         return std::make_shared<Var>(DT_FLOAT); }));
//
// Thread-safe: one mutex guards the table; resources guard their own state.
// Lookups return shared_ptr, so a resource deleted from the table stays
// alive for the kernels still using it.
#ifndef WEFT_RUNTIME_CORE_RESOURCE_MGR_H_
#define WEFT_RUNTIME_CORE_RESOURCE_MGR_H_

#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/core/tensor.h"

namespace weft {

class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
};

// A variable: one tensor behind a mutex. Used by both ref variables
// (VariableV2) and resource variables (VarHandleOp).
class Var : public ResourceBase {
 public:
  explicit Var(DataType dtype) : dtype_(dtype) {}
  DataType dtype() const { return dtype_; }
  // Guards tensor() and is_initialized().
  absl::Mutex* mu() { return &mu_; }
  Tensor* tensor() { return &tensor_; }
  bool is_initialized() const { return tensor_.IsInitialized(); }
  std::string DebugString() const override;

 private:
  const DataType dtype_;
  absl::Mutex mu_;
  Tensor tensor_;
};

// The container of resources private to one step (e.g. a while loop's
// gradient stacks); the executor drops it when the step ends.
inline std::string StepContainerName(int64_t step_id) {
  return absl::StrCat("__per_step_", step_id);
}

class ResourceMgr {
 public:
  explicit ResourceMgr(std::string default_container = "localhost")
      : default_container_(std::move(default_container)) {}
  ResourceMgr(const ResourceMgr&) = delete;
  ResourceMgr& operator=(const ResourceMgr&) = delete;

  const std::string& default_container() const { return default_container_; }

  // ALREADY_EXISTS if (container, name) holds a resource of this type.
  template <typename T>
  absl::Status Create(const std::string& container, const std::string& name,
                      std::shared_ptr<T> resource);
  // NOT_FOUND, naming the container and resource, if absent.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> Lookup(const std::string& container,
                                            const std::string& name) const;
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> LookupOrCreate(
      const std::string& container, const std::string& name,
      const std::function<std::shared_ptr<T>()>& create);
  template <typename T>
  absl::Status Delete(const std::string& container, const std::string& name);

  // Drops every resource in `container`.
  void Cleanup(const std::string& container);
  // "container/name" of every resource, sorted; for inspection and tests.
  std::vector<std::string> List() const;

 private:
  struct Key {
    std::string container;
    std::type_index type;
    std::string name;
    bool operator==(const Key& o) const {
      return container == o.container && type == o.type && name == o.name;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.container, k.type.hash_code(), k.name);
    }
  };

  const std::string default_container_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<ResourceBase>> resources_
      ABSL_GUARDED_BY(mu_);
};

template <typename T>
absl::Status ResourceMgr::Create(const std::string& container,
                                 const std::string& name,
                                 std::shared_ptr<T> resource) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] =
      resources_.try_emplace(Key{container, typeid(T), name}, resource);
  if (!inserted) {
    return absl::AlreadyExistsError(absl::StrCat(
        "resource ", container, "/", name, " already exists"));
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<std::shared_ptr<T>> ResourceMgr::Lookup(
    const std::string& container, const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = resources_.find(Key{container, typeid(T), name});
  if (it == resources_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "resource ", container, "/", name,
        " does not exist (was its initializer run?)"));
  }
  return std::static_pointer_cast<T>(it->second);
}

template <typename T>
absl::StatusOr<std::shared_ptr<T>> ResourceMgr::LookupOrCreate(
    const std::string& container, const std::string& name,
    const std::function<std::shared_ptr<T>()>& create) {
  absl::MutexLock lock(&mu_);
  auto& slot = resources_[Key{container, typeid(T), name}];
  if (slot == nullptr) slot = create();
  return std::static_pointer_cast<T>(slot);
}

template <typename T>
absl::Status ResourceMgr::Delete(const std::string& container,
                                 const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (resources_.erase(Key{container, typeid(T), name}) == 0) {
    return absl::NotFoundError(
        absl::StrCat("resource ", container, "/", name, " does not exist"));
  }
  return absl::OkStatus();
}

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_RESOURCE_MGR_H_
