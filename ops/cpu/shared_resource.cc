#include "ops/cpu/shared_resource.h"

#include "absl/strings/str_cat.h"

namespace weft {

ResourceHandle SharedResourceName(OpKernelConstruction* c, DataType dtype) {
  ResourceHandle h;
  std::string container, shared_name;
  absl::Status s = c->GetAttr("container", &container);
  if (s.ok()) s = c->GetAttr("shared_name", &shared_name);
  c->SetStatus(s);
  ResourceMgr* rm = c->device()->resource_manager();
  h.device = c->device()->name();
  h.container = container.empty() ? rm->default_container() : container;
  h.name = shared_name.empty() ? c->def().name() : shared_name;
  h.dtype = dtype;
  return h;
}

Tensor ResourceHandleTensor(const ResourceHandle& h) {
  Tensor t(DT_RESOURCE, TensorShape());
  t.scalar<ResourceHandle>() = h;
  return t;
}

Tensor RefHandleTensor(const ResourceHandle& h) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.flat<std::string>()[0] = h.container;
  t.flat<std::string>()[1] = h.name;
  return t;
}

absl::StatusOr<ResourceHandle> HandleFromInput(OpKernelContext* c, int i,
                                               const std::string& what) {
  const Tensor& t = c->input(i);
  ResourceHandle h;
  if (t.dtype() == DT_RESOURCE && t.NumElements() == 1) {
    h = t.data<ResourceHandle>()[0];
    if (!h.device.empty() && h.device != c->device()->name()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " '", h.name, "' lives on ", h.device, ", not on ",
          c->device()->name(), ": place the op with it (colocate it)"));
    }
    return h;
  }
  if (t.dtype() == DT_STRING && t.dims() == 1 && t.NumElements() == 2) {
    h.device = c->device()->name();
    h.container = t.flat<std::string>()[0];
    h.name = t.flat<std::string>()[1];
    return h;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "expected a ", what, " handle (a resource scalar or two strings) in "
      "input ", i, ", got ", t.DebugString()));
}

absl::Status MissingResource(OpKernelContext* c, const ResourceHandle& h,
                             const std::string& what,
                             const std::string& creator) {
  return absl::NotFoundError(absl::StrCat(
      what, " '", h.name, "' (container '", h.container,
      "') does not exist on ", c->device()->name(), ": run its ", creator,
      " op first"));
}

}  // namespace weft
