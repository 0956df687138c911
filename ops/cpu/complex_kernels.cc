// Complex(real, imag) with broadcasting; Real, Imag, Angle (atan2(imag,
// real)) and ComplexAbs (|x|, without overflow for large parts) of a
// complex tensor; Conj.
#include <complex>

#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/registration.h"

namespace weft {
namespace {

struct MakeComplex : BinaryFunctorBase {
  static constexpr int kCost = 1;
  template <typename X, typename Y>
  static auto Apply(const X& re, const Y& im) {
    using R = typename X::Scalar;
    return re.binaryExpr(im, [](R a, R b) { return std::complex<R>(a, b); });
  }
};

template <typename R>
class ComplexOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    ComputeBinary<MakeComplex, R, std::complex<R>>(c, c->input(0), c->input(1));
  }
};

WEFT_UNARY_FUNCTOR(RealPart, 1, x.real());
WEFT_UNARY_FUNCTOR(ImagPart, 1, x.imag());
WEFT_UNARY_FUNCTOR(Angle, 20, x.arg());
WEFT_UNARY_FUNCTOR(ComplexAbs, 10, x.abs());
WEFT_UNARY_FUNCTOR(Conj, 1, x.conjugate());

template <typename R>
void RegisterFor(KernelRegistry* r) {
  using C = std::complex<R>;
  const DataType real = DataTypeToEnum<R>::value;
  const DataType complex = DataTypeToEnum<C>::value;
  r->Register(KernelDef("Complex", kDeviceTypeCpu)
                  .TypeConstraint("T", real)
                  .TypeConstraint("Tout", complex),
              MakeKernel<ComplexOp<R>>);
  auto to_real = [&](const char* op, auto kernel_tag) {
    using Kernel = typename decltype(kernel_tag)::type;
    r->Register(KernelDef(op, kDeviceTypeCpu)
                    .TypeConstraint("T", complex)
                    .TypeConstraint("Tout", real),
                MakeKernel<Kernel>);
  };
  to_real("Real", TypeTag<UnaryOp<RealPart, C, R>>{});
  to_real("Imag", TypeTag<UnaryOp<ImagPart, C, R>>{});
  to_real("Angle", TypeTag<UnaryOp<Angle, C, R>>{});
  to_real("ComplexAbs", TypeTag<UnaryOp<ComplexAbs, C, R>>{});
  RegisterUnary<Conj, C>(r, "Conj");
}

}  // namespace

void RegisterComplexKernels(KernelRegistry* r) {
  RegisterFor<float>(r);
  RegisterFor<double>(r);
}

}  // namespace weft
