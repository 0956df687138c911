// AsString (numbers through a printf format built from the precision,
// scientific, shortest, width and fill attrs, as TensorFlow builds it),
// StringFormat (the template's placeholders replaced by each input's
// summary, string_summarize.h), Print (v1: passes `input` through and
// writes message + [summary] of each data tensor to stderr, the first
// `first_n` times), PrintV2 (a scalar string to stderr, stdout or the log
// streams, then `end`) and Timestamp (seconds since the epoch).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/string_summarize.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

bool IsFloating(DataType t) {
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16 ||
         t == tensorflow::DT_COMPLEX64 ||
         t == tensorflow::DT_COMPLEX128;
}

class AsStringOp : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(Init(c));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    std::string* o = out->data<std::string>();
    const DataType dt = in.dtype();
    ParallelRange(c, in.NumElements(), 300, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        switch (dt) {
          case DT_BOOL:
            o[i] = in.data<bool>()[i] ? "true" : "false";
            break;
          case DT_STRING:
            o[i] = copy_strings_ ? in.data<std::string>()[i]
                                 : Format(in.data<std::string>()[i].c_str());
            break;
          case DT_FLOAT:
            o[i] = Format(static_cast<double>(in.data<float>()[i]));
            break;
          case DT_DOUBLE:
            o[i] = Format(in.data<double>()[i]);
            break;
          case DT_HALF:
            o[i] = Format(static_cast<double>(
                HalfToFloat(in.data<Half>()[i])));
            break;
          case DT_BFLOAT16:
            o[i] = Format(static_cast<double>(
                BFloat16ToFloat(in.data<BFloat16>()[i])));
            break;
          case DT_INT8:
            o[i] = Format(static_cast<int>(in.data<int8_t>()[i]));
            break;
          case DT_INT16:
            o[i] = Format(static_cast<int>(in.data<int16_t>()[i]));
            break;
          case DT_INT32:
            o[i] = Format(static_cast<int>(in.data<int32_t>()[i]));
            break;
          case DT_UINT8:
            o[i] = Format(static_cast<unsigned>(in.data<uint8_t>()[i]));
            break;
          case DT_UINT16:
            o[i] = Format(static_cast<unsigned>(in.data<uint16_t>()[i]));
            break;
          case DT_UINT32:
            o[i] = Format(static_cast<unsigned>(in.data<uint32_t>()[i]));
            break;
          case DT_INT64:
            o[i] = Format(static_cast<long long>(in.data<int64_t>()[i]));
            break;
          case DT_UINT64:
            o[i] = Format(
                static_cast<unsigned long long>(in.data<uint64_t>()[i]));
            break;
          default:
            o[i] = in.ElementString(i);
        }
      }
    });
  }

 private:
  absl::Status Init(OpKernelConstruction* c) {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    DataType dt = DT_INVALID;
    WEFT_RETURN_IF_ERROR(c->GetAttr("T", &dt));
    WEFT_RETURN_IF_ERROR(c->GetAttr("precision", &precision));
    WEFT_RETURN_IF_ERROR(c->GetAttr("scientific", &scientific));
    WEFT_RETURN_IF_ERROR(c->GetAttr("shortest", &shortest));
    WEFT_RETURN_IF_ERROR(c->GetAttr("width", &width));
    WEFT_RETURN_IF_ERROR(c->GetAttr("fill", &fill));
    const std::string type = DataTypeString(dt);
    if (scientific && shortest) {
      return absl::InvalidArgumentError(
          "Cannot select both scientific and shortest notation");
    }
    if (fill.size() > 1) {
      return absl::InvalidArgumentError(
          "Fill string must be one or fewer characters");
    }
    if (!fill.empty() && std::string(" +-0#").find(fill[0]) == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("Fill argument not supported: \"", fill, "\""));
    }
    if (dt != DT_STRING && !IsFloating(dt)) {
      if (precision > -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("precision not supported for datatype ", type));
      }
      if (scientific || shortest) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scientific and shortest format not supported for datatype ",
            type));
      }
    }
    // Attrs of any size would make a format printf cannot take.
    if (width > 4096 || precision > 4096) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AsString width and precision must be at most 4096, got ", width,
          " and ", precision));
    }
    format_ = absl::StrCat("%", fill);
    if (width > -1) absl::StrAppend(&format_, width);
    if (precision > -1) absl::StrAppend(&format_, ".", precision);
    if (dt == DT_STRING) {
      // Strings go through the format only when a width is given.
      copy_strings_ = width < 0;
      absl::StrAppend(&format_, "s");
      return absl::OkStatus();
    }
    switch (dt) {
      case DT_UINT8:
      case DT_UINT16:
      case DT_UINT32:
        format_ += "u";
        break;
      case DT_UINT64:
        format_ += "llu";
        break;
      case DT_INT8:
      case DT_INT16:
      case DT_INT32:
        format_ += "d";
        break;
      case DT_INT64:
        format_ += "lld";
        break;
      default:
        format_ += shortest ? "g" : scientific ? "e" : "f";
    }
    return absl::OkStatus();
  }

  template <typename V>
  std::string Format(V v) const {
    char buf[128];
    // The format is built in Init from checked pieces only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    const int n = std::snprintf(buf, sizeof(buf), format_.c_str(), v);
    if (n < static_cast<int>(sizeof(buf))) return std::string(buf, n < 0 ? 0 : n);
    std::string s(n + 1, '\0');
    std::snprintf(s.data(), s.size(), format_.c_str(), v);
#pragma GCC diagnostic pop
    s.resize(n);
    return s;
  }

  std::string format_;
  bool copy_strings_ = false;
};

class StringFormatOp : public OpKernel {
 public:
  explicit StringFormatOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string tmpl, placeholder;
    c->SetStatus(c->GetAttr("template", &tmpl));
    c->SetStatus(c->GetAttr("placeholder", &placeholder));
    c->SetStatus(c->GetAttr("summarize", &summarize_));
    if (!c->status().ok()) return;
    if (placeholder.empty()) {
      pieces_ = {tmpl};
    } else {
      pieces_ = absl::StrSplit(tmpl, placeholder);
    }
    if (static_cast<int>(pieces_.size()) - 1 != c->num_inputs()) {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          "num placeholders in template and num inputs must match: ",
          pieces_.size() - 1, " vs. ", c->num_inputs())));
    }
  }

  void Compute(OpKernelContext* c) override {
    std::string msg;
    for (int i = 0; i < c->num_inputs(); ++i) {
      absl::StrAppend(&msg, pieces_[i],
                      SummarizeTensor(c->input(i), summarize_, true));
    }
    msg += pieces_.back();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    out->scalar<std::string>() = std::move(msg);
  }

 private:
  std::vector<std::string> pieces_;
  int64_t summarize_ = 3;
};

class PrintOp : public OpKernel {
 public:
  explicit PrintOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("message", &message_));
    c->SetStatus(c->GetAttr("first_n", &first_n_));
    c->SetStatus(c->GetAttr("summarize", &summarize_));
  }

  void Compute(OpKernelContext* c) override {
    c->set_output(0, c->input(0));
    if (first_n_ >= 0) {
      absl::MutexLock lock(&mu_);
      if (printed_ >= first_n_) return;
      ++printed_;
    }
    std::string msg = message_;
    for (int i = 1; i < c->num_inputs(); ++i) {
      absl::StrAppend(&msg, "[", SummarizeTensor(c->input(i), summarize_, false),
                      "]");
    }
    std::cerr << msg << std::endl;
  }

 private:
  std::string message_;
  int64_t first_n_ = -1;
  int64_t summarize_ = 3;
  absl::Mutex mu_;
  int64_t printed_ = 0;
};

class PrintV2Op : public OpKernel {
 public:
  explicit PrintV2Op(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("output_stream", &stream_));
    c->SetStatus(c->GetAttr("end", &end_));
    if (!c->status().ok()) return;
    for (const char* s : {"stdout", "stderr", "log(info)", "log(warning)",
                          "log(error)"}) {
      if (stream_ == s) return;
    }
    if (stream_.rfind("file://", 0) == 0) {
      c->SetStatus(absl::UnimplementedError(absl::StrCat(
          "PrintV2 to a file (", stream_, ") is not supported by Weft")));
      return;
    }
    c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
        "Unknown output stream: ", stream_,
        ", Valid streams are: stdout stderr log(info) log(warning) "
        "log(error)")));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, in.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input is expected to be scalar, but got ",
                    in.shape().DebugString())));
    const std::string text = absl::StrCat(in.scalar<std::string>(), end_);
    if (stream_ == "stdout") {
      std::cout << text << std::flush;
    } else if (stream_ == "stderr") {
      std::cerr << text << std::flush;
    } else {
      // The log streams: stderr, marked with the severity's letter as
      // TensorFlow's log lines are.
      const char level = stream_ == "log(info)"      ? 'I'
                         : stream_ == "log(warning)" ? 'W'
                                                     : 'E';
      std::cerr << level << " " << text << std::flush;
    }
  }

 private:
  std::string stream_;
  std::string end_;
};

class TimestampOp : public OpKernel {
 public:
  explicit TimestampOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    out->scalar<double>() =
        std::chrono::duration_cast<std::chrono::microseconds>(now).count() /
        1e6;
  }
};

}  // namespace

void RegisterStringFormatKernels(KernelRegistry* r) {
  r->Register(KernelDef("AsString", kDeviceTypeCpu), MakeKernel<AsStringOp>);
  r->Register(KernelDef("StringFormat", kDeviceTypeCpu),
              MakeKernel<StringFormatOp>);
  r->Register(KernelDef("Print", kDeviceTypeCpu), MakeKernel<PrintOp>);
  r->Register(KernelDef("PrintV2", kDeviceTypeCpu), MakeKernel<PrintV2Op>);
  r->Register(KernelDef("Timestamp", kDeviceTypeCpu), MakeKernel<TimestampOp>);
}

}  // namespace weft
