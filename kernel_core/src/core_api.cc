// The GR_CoreApi table: every service the core offers plugins.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core_api_internal.h"
#include "executor.h"
#include "file_access.h"
#include "graph_pass_context.h"
#include "node_def_util.h"
#include "resource_mgr.h"

#include <graphrt/shape_limits.h>

namespace graphrt {
namespace {

using proto::AttrValue;

// ------------------------------------------------------------ registration

int32_t Fail(GR_Registrar* reg, Status s) {
  if (reg->error.ok()) reg->error = s;
  return static_cast<int32_t>(s.code());
}

int32_t RegisterOp(GR_Registrar* reg, const GR_OpSpec* spec) {
  if (spec == nullptr || spec->struct_size < GR_SIZE_THROUGH(GR_OpSpec, shape_fn_user_data))
    return Fail(reg, errors::InvalidArgument("register_op: GR_OpSpec is null or too small"));
  auto data = std::make_unique<OpRegistrationData>();
  Status s = BuildOpDef(*spec, &data->op_def);
  if (!s.ok()) return Fail(reg, s);
  data->shape_fn = spec->shape_fn;
  data->shape_fn_user_data = spec->shape_fn_user_data;
  data->plugin = reg->plugin;
  reg->ops.push_back(std::move(data));
  return GR_OK;
}

int32_t RegisterKernel(GR_Registrar* reg, const GR_KernelSpec* spec) {
  if (spec == nullptr || spec->struct_size < GR_SIZE_THROUGH(GR_KernelSpec, destroy))
    return Fail(reg, errors::InvalidArgument("register_kernel: GR_KernelSpec is null or too small"));
  // ABI 1.3: an asynchronous kernel sets compute_async instead of compute.
  const auto compute_async =
      spec->struct_size >= GR_SIZE_THROUGH(GR_KernelSpec, compute_async) ? spec->compute_async : nullptr;
  if (spec->op_name == nullptr || spec->device_type == nullptr || !spec->create || !spec->destroy ||
      (spec->compute == nullptr) == (compute_async == nullptr))
    return Fail(reg, errors::InvalidArgument("register_kernel: op_name, device_type, create, destroy and exactly "
                                             "one of compute and compute_async are required (op ",
                                             spec->op_name ? spec->op_name : "<null>", ")"));
  auto k = std::make_unique<KernelRegistration>();
  k->op = spec->op_name;
  k->device_type = spec->device_type;
  for (int i = 0; i < spec->num_constraints; ++i) {
    const GR_TypeConstraint& c = spec->constraints[i];
    if (c.struct_size < GR_SIZE_THROUGH(GR_TypeConstraint, num_allowed))
      return Fail(reg, errors::InvalidArgument("register_kernel: op ", k->op, ": GR_TypeConstraint ", i,
                                               " is too small (struct_size ", c.struct_size, ")"));
    std::vector<DataType> allowed;
    for (int j = 0; j < c.num_allowed; ++j) {
      DataType t;
      Status s = ValidateDataType(c.allowed[j], /*allow_ref=*/false,
                                  "register_kernel: op " + k->op + " constraint '" +
                                      (c.attr_name ? c.attr_name : "<null>") + "'",
                                  &t);
      if (!s.ok()) return Fail(reg, s);
      allowed.push_back(t);
    }
    k->constraints.emplace_back(c.attr_name, std::move(allowed));
  }
  for (int i = 0; i < spec->num_host_memory_args; ++i) k->host_memory_args.emplace_back(spec->host_memory_args[i]);
  if (spec->label) k->label = spec->label;
  k->priority = spec->priority;
  k->flags = spec->flags;
  k->user_data = spec->user_data;
  k->create = spec->create;
  k->compute = spec->compute;
  k->compute_async = compute_async;
  k->destroy = spec->destroy;
  k->plugin = reg->plugin;
  reg->kernels.push_back(std::move(k));
  return GR_OK;
}

int32_t RegisterDevice(GR_Registrar* reg, const GR_DeviceSpec* spec) {
  if (spec == nullptr || spec->struct_size < GR_SIZE_THROUGH(GR_DeviceSpec, deallocate))
    return Fail(reg, errors::InvalidArgument("register_device: GR_DeviceSpec is null or too small"));
  // An older plugin's spec may be shorter: fields past its size stay null.
  GR_DeviceSpec copy;
  std::memset(&copy, 0, sizeof(copy));
  std::memcpy(&copy, spec, std::min(spec->struct_size, sizeof(copy)));
  copy.struct_size = sizeof(copy);
  reg->devices.emplace_back(copy, reg->plugin);
  return GR_OK;
}

int32_t RegisterGraphPass(GR_Registrar* reg, const GR_GraphPassSpec* spec) {
  if (spec == nullptr || spec->struct_size < GR_SIZE_THROUGH(GR_GraphPassSpec, run))
    return Fail(reg, errors::InvalidArgument("register_graph_pass: GR_GraphPassSpec is null or too small"));
  const std::string name = spec->name ? spec->name : "";
  if (name.empty() || spec->device_type == nullptr || spec->device_type[0] == '\0' || spec->run == nullptr)
    return Fail(reg, errors::InvalidArgument("register_graph_pass: name, device_type and run are required (pass '",
                                             name, "')"));
  if (spec->toggle < GR_PASS_TOGGLE_NONE || spec->toggle > GR_PASS_TOGGLE_REMAPPING)
    return Fail(reg, errors::InvalidArgument("register_graph_pass: pass '", name, "' has an unknown toggle ",
                                             spec->toggle, " (a GR_GraphPassToggle)"));
  auto p = std::make_unique<GraphPassRegistration>();
  p->name = name;
  p->device_type = spec->device_type;
  p->plugin = reg->plugin;
  p->toggle = spec->toggle;
  p->order = spec->order;
  p->user_data = spec->user_data;
  p->run = spec->run;
  reg->graph_passes.push_back(std::move(p));
  return GR_OK;
}

int32_t RegisterGradient(GR_Registrar* reg, const GR_GradientSpec* spec) {
  if (spec == nullptr || spec->struct_size < GR_SIZE_THROUGH(GR_GradientSpec, user_data))
    return Fail(reg, errors::InvalidArgument("register_gradient: GR_GradientSpec is null or too small"));
  if (spec->op == nullptr || spec->op[0] == '\0')
    return Fail(reg, errors::InvalidArgument("register_gradient: the op name is required"));
  auto g = std::make_unique<GradientRegistration>();
  g->op = spec->op;
  g->fn = spec->fn;
  g->user_data = spec->user_data;
  g->plugin = reg->plugin;
  reg->gradients.push_back(std::move(g));
  return GR_OK;
}

const GR_Attrs* GradAttrs(const GR_GradientContext* ctx) { return &ctx->attrs; }
int32_t GradNumInputs(const GR_GradientContext* ctx) { return static_cast<int32_t>(ctx->inputs.size()); }
int32_t GradNumOutputs(const GR_GradientContext* ctx) { return static_cast<int32_t>(ctx->outputs.size()); }

template <typename V>
auto At(const V& v, int32_t index) -> const typename V::value_type* {
  return index >= 0 && static_cast<size_t>(index) < v.size() ? &v[index] : nullptr;
}

int32_t GradInputType(const GR_GradientContext* ctx, int32_t index) {
  const int32_t* t = At(ctx->input_types, index);
  return t ? *t : 0;
}
int32_t GradOutputType(const GR_GradientContext* ctx, int32_t index) {
  const int32_t* t = At(ctx->output_types, index);
  return t ? *t : 0;
}
const char* GradInput(const GR_GradientContext* ctx, int32_t index) {
  const std::string* s = At(ctx->inputs, index);
  return s ? s->c_str() : nullptr;
}
const char* GradOutput(const GR_GradientContext* ctx, int32_t index) {
  const std::string* s = At(ctx->outputs, index);
  return s ? s->c_str() : nullptr;
}
const char* GradOutputGradient(const GR_GradientContext* ctx, int32_t index) {
  const std::string* s = At(ctx->output_grads, index);
  return s ? s->c_str() : nullptr;
}

int32_t GradFail(GR_GradientContext* ctx, Status s) {
  if (ctx->status.ok()) ctx->status = std::move(s);
  return static_cast<int32_t>(ctx->status.code());
}

int32_t GradAddNode(GR_GradientContext* ctx, const char* name, const char* node_def_text, const char** out_name) {
  if (name == nullptr || node_def_text == nullptr || out_name == nullptr)
    return GradFail(ctx, errors::InvalidArgument("grad_add_node: name, node_def_text and out_name are required"));
  std::string final_name;
  Status s = StatusFromExceptions("grad_add_node", [&] { return ctx->add_node(name, node_def_text, &final_name); });
  if (!s.ok()) return GradFail(ctx, std::move(s));
  ctx->names.push_back(std::move(final_name));
  *out_name = ctx->names.back().c_str();
  return GR_OK;
}

int32_t GradSetInputGradient(GR_GradientContext* ctx, int32_t index, const char* tensor) {
  if (index < 0 || static_cast<size_t>(index) >= ctx->input_grads.size() || tensor == nullptr)
    return GradFail(ctx, errors::InvalidArgument("grad_set_input_gradient: node '", ctx->node->name(), "' has ",
                                                 ctx->input_grads.size(), " inputs, not an input ", index,
                                                 tensor ? "" : " (or the tensor is NULL)"));
  ctx->input_grads[index] = tensor;
  return GR_OK;
}

void GradSetError(GR_GradientContext* ctx, int32_t code, const char* msg) {
  GradFail(ctx, Status(static_cast<Code>(code == GR_OK ? GR_INTERNAL : code), msg ? msg : ""));
}

void RegistrarSetError(GR_Registrar* reg, int32_t code, const char* msg) {
  reg->error = Status(static_cast<Code>(code == GR_OK ? GR_INTERNAL : code), msg ? msg : "");
}

void StatusSet(GR_StatusSink* sink, int32_t code, const char* msg) {
  if (sink) sink->status = Status(static_cast<Code>(code), msg ? msg : "");
}

void Log(int32_t level, const char* file, int32_t line, const char* msg) {
  static const char* kLevels[] = {"D", "I", "W", "E"};
  if (level < GR_LOG_INFO && std::getenv("GRAPHRT_DEBUG") == nullptr) return;
  std::fprintf(stderr, "%s %s:%d] %s\n", kLevels[std::clamp(level, 0, 3)], file ? file : "?", line, msg ? msg : "");
}

// ------------------------------------------------------------------ attrs

const AttrValue* Attr(const GR_Attrs* a, const char* name, AttrValue::ValueCase want, int32_t* code) {
  const AttrValue* v = FindAttr(*a->node, name);
  if (v == nullptr) {
    *code = GR_NOT_FOUND;
    return nullptr;
  }
  if (v->value_case() != want) {
    *code = GR_INVALID_ARGUMENT;
    return nullptr;
  }
  *code = GR_OK;
  return v;
}

int32_t AttrInt(const GR_Attrs* a, const char* name, int64_t* out) {
  int32_t c;
  if (const AttrValue* v = Attr(a, name, AttrValue::kI, &c)) *out = v->i();
  return c;
}
int32_t AttrFloat(const GR_Attrs* a, const char* name, float* out) {
  int32_t c;
  if (const AttrValue* v = Attr(a, name, AttrValue::kF, &c)) *out = v->f();
  return c;
}
int32_t AttrBool(const GR_Attrs* a, const char* name, int32_t* out) {
  int32_t c;
  if (const AttrValue* v = Attr(a, name, AttrValue::kB, &c)) *out = v->b() ? 1 : 0;
  return c;
}
int32_t AttrType(const GR_Attrs* a, const char* name, int32_t* out) {
  int32_t c;
  if (const AttrValue* v = Attr(a, name, AttrValue::kType, &c)) *out = v->type();
  return c;
}
int32_t AttrString(const GR_Attrs* a, const char* name, const char** data, uint64_t* size) {
  int32_t c;
  if (const AttrValue* v = Attr(a, name, AttrValue::kS, &c)) {
    *data = v->s().data();
    *size = v->s().size();
  }
  return c;
}
int32_t AttrShape(const GR_Attrs* a, const char* name, int32_t* rank, int64_t* dims, int32_t capacity) {
  int32_t c;
  const AttrValue* v = Attr(a, name, AttrValue::kShape, &c);
  if (v == nullptr) return c;
  if (v->shape().unknown_rank()) {
    *rank = -1;
    return GR_OK;
  }
  *rank = v->shape().dim_size();
  for (int i = 0; i < std::min(*rank, capacity); ++i) dims[i] = v->shape().dim(i).size();
  return GR_OK;
}
int32_t AttrList(const GR_Attrs* a, const char* name, const AttrValue::ListValue** out) {
  int32_t c;
  const AttrValue* v = Attr(a, name, AttrValue::kList, &c);
  if (v) *out = &v->list();
  return c;
}
int32_t AttrIntList(const GR_Attrs* a, const char* name, const int64_t** values, int32_t* count) {
  const AttrValue::ListValue* l = nullptr;
  int32_t c = AttrList(a, name, &l);
  if (c != GR_OK) return c;
  if (l->i_size() == 0 && l->ByteSizeLong() != 0) return GR_INVALID_ARGUMENT;
  *values = reinterpret_cast<const int64_t*>(l->i().data());
  *count = l->i_size();
  return GR_OK;
}
int32_t AttrFloatList(const GR_Attrs* a, const char* name, const float** values, int32_t* count) {
  const AttrValue::ListValue* l = nullptr;
  int32_t c = AttrList(a, name, &l);
  if (c != GR_OK) return c;
  if (l->f_size() == 0 && l->ByteSizeLong() != 0) return GR_INVALID_ARGUMENT;
  *values = l->f().data();
  *count = l->f_size();
  return GR_OK;
}
int32_t AttrTypeList(const GR_Attrs* a, const char* name, const int32_t** values, int32_t* count) {
  const AttrValue::ListValue* l = nullptr;
  int32_t c = AttrList(a, name, &l);
  if (c != GR_OK) return c;
  if (l->type_size() == 0 && l->ByteSizeLong() != 0) return GR_INVALID_ARGUMENT;
  static_assert(sizeof(int) == sizeof(int32_t));
  *values = reinterpret_cast<const int32_t*>(l->type().data());
  *count = l->type_size();
  return GR_OK;
}
int32_t AttrListSize(const GR_Attrs* a, const char* name, int32_t* count) {
  const AttrValue::ListValue* l = nullptr;
  int32_t c = AttrList(a, name, &l);
  if (c != GR_OK) return c;
  *count = l->s_size() + l->i_size() + l->f_size() + l->b_size() + l->type_size() + l->shape_size() +
           l->tensor_size() + l->func_size();
  return GR_OK;
}
int32_t AttrStringListItem(const GR_Attrs* a, const char* name, int32_t index, const char** data, uint64_t* size) {
  const AttrValue::ListValue* l = nullptr;
  int32_t c = AttrList(a, name, &l);
  if (c != GR_OK) return c;
  if (index < 0 || index >= l->s_size()) return GR_OUT_OF_RANGE;
  *data = l->s(index).data();
  *size = l->s(index).size();
  return GR_OK;
}
int32_t AttrShapeListItem(const GR_Attrs* a, const char* name, int32_t index, int32_t* rank, int64_t* dims,
                          int32_t capacity) {
  const AttrValue::ListValue* l = nullptr;
  int32_t c = AttrList(a, name, &l);
  if (c != GR_OK) return c;
  if (index < 0 || index >= l->shape_size()) return GR_OUT_OF_RANGE;
  const proto::TensorShapeProto& shape = l->shape(index);
  if (shape.unknown_rank()) {
    *rank = -1;
    return GR_OK;
  }
  *rank = shape.dim_size();
  for (int i = 0; i < std::min(*rank, capacity); ++i) dims[i] = shape.dim(i).size();
  return GR_OK;
}
int32_t AttrTensor(const GR_Attrs* a, const char* name, GR_Tensor** out, GR_StatusSink* status) {
  int32_t c;
  const AttrValue* v = Attr(a, name, AttrValue::kTensor, &c);
  if (v == nullptr) return c;
  Tensor t;
  Status s = Tensor::FromProto(v->tensor(), &t, a->allocator ? a->allocator : HostAllocator());
  if (!s.ok()) {
    s = s.WithContext("attr '" + std::string(name) + "'");
    if (status) status->status = s;
    else if (a->error && a->error->ok()) *a->error = s;
    return static_cast<int32_t>(s.code());
  }
  auto* gt = new GR_Tensor();
  gt->tensor = std::move(t);
  *out = gt;
  return GR_OK;
}

// -------------------------------------------------------- construction

const GR_Attrs* KcAttrs(const GR_KernelConstruction* kc) { return &kc->attrs; }
const char* KcNodeName(const GR_KernelConstruction* kc) { return kc->node->name().c_str(); }
const char* KcOpName(const GR_KernelConstruction* kc) { return kc->node->op().c_str(); }
int32_t KcNumInputs(const GR_KernelConstruction* kc) { return static_cast<int32_t>(kc->input_types->size()); }
int32_t KcNumOutputs(const GR_KernelConstruction* kc) { return static_cast<int32_t>(kc->output_types->size()); }
int32_t KcInputType(const GR_KernelConstruction* kc, int32_t i) {
  return i >= 0 && i < KcNumInputs(kc) ? (*kc->input_types)[i] : GR_INVALID;
}
int32_t KcOutputType(const GR_KernelConstruction* kc, int32_t i) {
  return i >= 0 && i < KcNumOutputs(kc) ? (*kc->output_types)[i] : GR_INVALID;
}
void KcSetError(GR_KernelConstruction* kc, int32_t code, const char* msg) {
  if (kc->status.ok()) kc->status = Status(static_cast<Code>(code == GR_OK ? GR_INTERNAL : code), msg ? msg : "");
}
void* KcDevice(const GR_KernelConstruction* kc) { return kc->device ? kc->device->handle() : nullptr; }

// ------------------------------------------------------------- compute

void FillView(const Tensor& t, GR_TensorView* v) {
  // Views from older plugins may be shorter; every field so far is in v1.
  v->dtype = BaseType(t.dtype());
  v->rank = t.dims();
  v->dims = t.shape().data();
  v->data = t.NumElements() > 0 ? t.raw_data() : nullptr;
  v->num_elements = t.NumElements();
  v->byte_size = t.TotalBytes();
}

void SetCallError(KernelCall& call, Status s) {
  if (call.status.ok()) call.status = std::move(s);
}

int32_t CtxNumInputs(const GR_KernelContext* ctx) { return ctx->call.item->num_inputs; }
int32_t CtxNumOutputs(const GR_KernelContext* ctx) { return ctx->call.item->num_outputs; }

int32_t CtxInput(const GR_KernelContext* ctx, int32_t index, GR_TensorView* view) {
  const NodeItem& item = *ctx->call.item;
  if (index < 0 || index >= item.num_inputs) return GR_OUT_OF_RANGE;
  // A Ref(T) input is the variable's current value (read under its lock).
  if (item.has_ref_inputs && item.ref_inputs[index] == NodeItem::RefInput::kRef) [[unlikely]] {
    FillView(ctx->call.ref_inputs[index]->value(), view);
    return GR_OK;
  }
  FillView(ctx->call.inputs[index], view);
  return GR_OK;
}

[[gnu::noinline]] void OutputIndexError(GR_KernelContext* ctx, int32_t index);

[[gnu::always_inline]] inline bool CheckOutputIndex(GR_KernelContext* ctx, int32_t index) {
  if (index >= 0 && index < ctx->call.item->num_outputs) [[likely]] return true;
  OutputIndexError(ctx, index);
  return false;
}

void OutputIndexError(GR_KernelContext* ctx, int32_t index) {
  SetCallError(ctx->call, errors::Internal("output index ", index, " out of range [0, ",
                                           ctx->call.item->num_outputs, ")"));
}

int32_t AllocateInto(GR_KernelContext* ctx, int32_t index, int32_t rank, const int64_t* dims, GR_TensorView* view) {
  TensorShape shape;
  const NodeItem& item = *ctx->call.item;
  Tensor& out = ctx->call.outputs[index];
  Status s = TensorShape::FromDims(dims, rank, &shape);
  if (s.ok()) s = Tensor::Allocate(OutputAllocator(item, index, ctx->call.step), BaseType(item.output_types[index]),
                                   shape, &out);
  if (!s.ok()) {
    SetCallError(ctx->call, s.WithContext("output " + std::to_string(index)));
    return static_cast<int32_t>(s.code());
  }
  if (view) FillView(out, view);
  return GR_OK;
}

int32_t CtxAllocateOutput(GR_KernelContext* ctx, int32_t index, int32_t rank, const int64_t* dims,
                          GR_TensorView* view) {
  if (!CheckOutputIndex(ctx, index)) return GR_INTERNAL;
  return AllocateInto(ctx, index, rank, dims, view);
}

// Output `out` takes input `in`'s buffer if nobody else can observe it:
// sole reference, same dtype and size, not a ref input (a variable's
// storage), POD elements. A device kernel must not forward into an output
// it declares HostMemory: not checked here, where a branch per node costs
// W1 measurably.
[[gnu::always_inline]] inline bool TryForwardInput(GR_KernelContext* ctx, int32_t in, int32_t out, int32_t rank,
                                                   const int64_t* dims, GR_TensorView* view) {
  const NodeItem& item = *ctx->call.item;
  // Past kMaxRank: not forwarded, so that allocating refuses it (FromDims).
  if (in < 0 || in >= item.num_inputs || rank < 0 || rank > TensorShape::kMaxRank) return false;
  Tensor& input = ctx->call.inputs[in];
  const DataType dtype = BaseType(item.output_types[out]);
  if (!input.RefCountIsOne() || IsRefType(item.input_types[in]) || input.dtype() != dtype || !DataTypeIsPod(dtype))
    return false;
  int64_t n;
  if (gr_shape_num_elements(dims, rank, &n) != GR_OK || n != input.NumElements()) return false;
  Tensor& o = ctx->call.outputs[out];
  o = Tensor(dtype, TensorShape(dims, rank), input.buffer(), input.raw_data());
  input.buffer()->Ref();
  if (view) FillView(o, view);
  return true;
}

int32_t CtxForwardInputOrAllocateOutput(GR_KernelContext* ctx, int32_t in, int32_t out, int32_t rank,
                                        const int64_t* dims, GR_TensorView* view, int32_t* forwarded) {
  if (!CheckOutputIndex(ctx, out)) return GR_INTERNAL;
  const bool fwd = TryForwardInput(ctx, in, out, rank, dims, view);
  if (forwarded) *forwarded = fwd ? 1 : 0;
  return fwd ? GR_OK : AllocateInto(ctx, out, rank, dims, view);
}

int32_t CtxForwardInput(GR_KernelContext* ctx, int32_t in, int32_t out, int32_t rank, const int64_t* dims,
                        GR_TensorView* view) {
  if (!CheckOutputIndex(ctx, out)) return 0;
  return TryForwardInput(ctx, in, out, rank, dims, view) ? 1 : 0;
}

int32_t CtxSetOutputFromInput(GR_KernelContext* ctx, int32_t out, int32_t in, int32_t rank, const int64_t* dims) {
  if (!CheckOutputIndex(ctx, out)) return GR_INTERNAL;
  if (in < 0 || in >= ctx->call.item->num_inputs) {
    SetCallError(ctx->call, errors::Internal("input index ", in, " out of range"));
    return GR_INTERNAL;
  }
  const Tensor& input = ctx->call.inputs[in];
  if (rank < 0) {
    ctx->call.outputs[out] = input;
    return GR_OK;
  }
  TensorShape shape;
  Status s = TensorShape::FromDims(dims, rank, &shape);
  if (s.ok()) s = input.Reshaped(shape, &ctx->call.outputs[out]);
  if (!s.ok()) {
    SetCallError(ctx->call, s);
    return static_cast<int32_t>(s.code());
  }
  return GR_OK;
}

int32_t CtxSetOutputFromInputRange(GR_KernelContext* ctx, int32_t out, int32_t in, int64_t offset, int32_t rank,
                                   const int64_t* dims) {
  if (!CheckOutputIndex(ctx, out)) return GR_INTERNAL;
  const NodeItem& item = *ctx->call.item;
  if (in < 0 || in >= item.num_inputs) {
    SetCallError(ctx->call, errors::Internal("input index ", in, " out of range"));
    return GR_INTERNAL;
  }
  const Tensor& input = ctx->call.inputs[in];
  TensorShape shape;
  Status s = TensorShape::FromDims(dims, rank, &shape);
  if (s.ok() && (offset < 0 || offset > input.NumElements() || shape.num_elements() > input.NumElements() - offset)) {
    s = errors::OutOfRange("elements [", offset, ", ", offset + shape.num_elements(), ") are not inside input ", in,
                           " of ", input.NumElements(), " elements");
  }
  if (!s.ok()) {
    SetCallError(ctx->call, s);
    return static_cast<int32_t>(s.code());
  }
  if (IsRefType(item.input_types[in]) || input.buffer() == nullptr) return GR_UNAVAILABLE;
  Tensor part = input.Range(offset, shape);
  if (reinterpret_cast<uintptr_t>(part.raw_data()) % kTensorAlignment != 0) return GR_UNAVAILABLE;
  ctx->call.outputs[out] = std::move(part);
  return GR_OK;
}

int32_t CtxSetOutputTensor(GR_KernelContext* ctx, int32_t out, GR_Tensor* t) {
  if (!CheckOutputIndex(ctx, out)) return GR_INTERNAL;
  const DataType want = BaseType(ctx->call.item->output_types[out]);
  if (t == nullptr || t->tensor.dtype() != want) {
    SetCallError(ctx->call, errors::Internal("output ", out, " must be ", DataTypeString(want), " but the kernel set ",
                                             t ? DataTypeString(t->tensor.dtype()) : std::string("null")));
    return GR_INTERNAL;
  }
  ctx->call.outputs[out] = t->tensor;
  return GR_OK;
}

void CtxSetError(GR_KernelContext* ctx, int32_t code, const char* msg) {
  SetCallError(ctx->call, Status(static_cast<Code>(code == GR_OK ? GR_INTERNAL : code), msg ? msg : ""));
}
const char* CtxNodeName(const GR_KernelContext* ctx) { return ctx->call.item->name.c_str(); }
void* CtxDevice(const GR_KernelContext* ctx) {
  return ctx->call.item->device ? ctx->call.item->device->handle() : nullptr;
}
void* CtxStream(const GR_KernelContext* ctx) {
  return ctx->call.item->device ? ctx->call.item->device->compute_stream() : nullptr;
}

struct StepAccess;
int64_t CtxStepId(const GR_KernelContext* ctx);
int32_t CtxNumThreads(const GR_KernelContext* ctx);
void CtxParallelFor(GR_KernelContext* ctx, int64_t total, int64_t cost_per_unit, GR_ParallelForFn fn, void* arg);

// ---------------------------------------------------------------- tensors

GR_Tensor* TensorNew(int32_t dtype, int32_t rank, const int64_t* dims) {
  TensorShape shape;
  if (!IsSupportedDataTypeValue(dtype) || !TensorShape::FromDims(dims, rank, &shape).ok()) return nullptr;
  Tensor t;
  if (!Tensor::Allocate(HostAllocator(), static_cast<DataType>(dtype), shape, &t).ok()) return nullptr;
  auto* gt = new GR_Tensor();
  gt->tensor = std::move(t);
  return gt;
}
void TensorRetain(GR_Tensor* t) { t->refs.fetch_add(1, std::memory_order_relaxed); }
void TensorRelease(GR_Tensor* t) {
  if (t && t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete t;
}
void TensorViewOf(const GR_Tensor* t, GR_TensorView* v) { FillView(t->tensor, v); }
void StringAssign(GR_TensorView* view, int64_t index, const char* data, uint64_t size) {
  GR_StringElem& e = static_cast<GR_StringElem*>(view->data)[index];
  std::free(e.data);
  e.data = static_cast<char*>(std::malloc(size + 1));
  if (size) std::memcpy(e.data, data, size);
  e.data[size] = '\0';
  e.size = size;
}

// --------------------------------------------------------------- shapes

const GR_Attrs* ScAttrs(const GR_ShapeContext* sc) { return &sc->attrs; }
int32_t ScNumInputs(const GR_ShapeContext* sc) { return static_cast<int32_t>(sc->inputs->size()); }
int32_t ScNumOutputs(const GR_ShapeContext* sc) { return static_cast<int32_t>(sc->outputs.size()); }
int32_t ScInputRank(const GR_ShapeContext* sc, int32_t i) {
  if (i < 0 || i >= ScNumInputs(sc)) return -1;
  return (*sc->inputs)[i].rank();
}
int32_t ScInputDims(const GR_ShapeContext* sc, int32_t i, int64_t* dims, int32_t capacity) {
  if (i < 0 || i >= ScNumInputs(sc)) return GR_OUT_OF_RANGE;
  const auto& s = (*sc->inputs)[i];
  for (int d = 0; d < std::min(s.rank(), capacity); ++d) dims[d] = s.dim_size(d);
  return GR_OK;
}
int32_t ScInputTensor(const GR_ShapeContext* sc, int32_t i, GR_TensorView* view) {
  if (i < 0 || i >= ScNumInputs(sc) || sc->input_values == nullptr) return 0;
  const Tensor* t = (*sc->input_values)[i];
  if (t == nullptr) return 0;
  FillView(*t, view);
  return 1;
}
void ScSetOutput(GR_ShapeContext* sc, int32_t i, int32_t rank, const int64_t* dims) {
  if (i < 0 || i >= ScNumOutputs(sc)) {
    if (sc->status.ok()) sc->status = errors::Internal("shape function set output ", i, " out of range");
    return;
  }
  if (rank > TensorShape::kMaxRank) {
    if (sc->status.ok())
      sc->status = errors::InvalidArgument("output ", i, " would have rank ", rank, ", more than the ",
                                           TensorShape::kMaxRank, " dimensions a tensor may have");
    return;
  }
  sc->outputs[i] = rank < 0 ? PartialTensorShape() : PartialTensorShape(std::vector<int64_t>(dims, dims + rank));
}
void ScSetError(GR_ShapeContext* sc, int32_t code, const char* msg) {
  if (sc->status.ok()) sc->status = Status(static_cast<Code>(code == GR_OK ? GR_INTERNAL : code), msg ? msg : "");
}
const char* ScNodeName(const GR_ShapeContext* sc) { return sc->node->name().c_str(); }
int32_t ScGraphDefVersion(const GR_ShapeContext* sc) { return sc->graph_def_version; }

}  // namespace

namespace {

// ---------------------------------------------------------------- state

Var* AsVar(GR_Variable* v) { return reinterpret_cast<Var*>(v); }
const Var* AsVar(const GR_Variable* v) { return reinterpret_cast<const Var*>(v); }
GR_Variable* AsHandle(Var* v) { return reinterpret_cast<GR_Variable*>(v); }
PluginResource* AsPluginResource(GR_Resource* r) { return reinterpret_cast<PluginResource*>(r); }

int32_t CallError(GR_KernelContext* ctx, Status s) {
  const int32_t code = static_cast<int32_t>(s.code());
  SetCallError(ctx->call, std::move(s));
  return code;
}

ResourceMgr* Resources(GR_KernelContext* ctx, Status* error) {
  ResourceMgr* rm = ResourcesOf(ctx->call.step);
  if (rm == nullptr) *error = errors::FailedPrecondition("this step has no resource manager (not run by a session)");
  return rm;
}

int32_t CtxLookupVariable(GR_KernelContext* ctx, const char* container, const char* name, int32_t dtype,
                          int32_t create, GR_Variable** out) {
  Status s;
  ResourceMgr* rm = Resources(ctx, &s);
  if (rm == nullptr) return CallError(ctx, s);
  const std::string var_name = name ? name : "";
  DataType type = GR_INVALID;
  if (dtype != GR_INVALID || create) {
    s = ValidateDataType(dtype, /*allow_ref=*/false, "variable " + var_name, &type);
    if (!s.ok()) return CallError(ctx, s);
  }
  ResourceBase* r = nullptr;
  s = rm->LookupOrCreate(
      container ? container : "", var_name, kVariableTypeName,
      [&](ResourceBase** made) {
        *made = new Var(var_name, type);
        return Status::OK();
      },
      create != 0, &r);
  if (s.code() == Code::kNotFound) return GR_NOT_FOUND;  // the kernel words it (or ignores it)
  if (!s.ok()) return CallError(ctx, s);
  Var* v = static_cast<Var*>(r);
  if (type != GR_INVALID && v->dtype() != type) {
    v->Unref();
    return CallError(ctx, errors::InvalidArgument("Trying to access variable ", var_name, " of dtype ",
                                                  DataTypeString(v->dtype()), " as ", DataTypeString(type)));
  }
  *out = AsHandle(v);
  return GR_OK;
}
void VariableRetain(GR_Variable* v) { AsVar(v)->Ref(); }
void VariableRelease(GR_Variable* v) {
  if (v) AsVar(v)->Unref();
}
void VariableLock(GR_Variable* v, int32_t exclusive) {
  if (exclusive) AsVar(v)->mu().lock();
  else AsVar(v)->mu().lock_shared();
}
void VariableUnlock(GR_Variable* v, int32_t exclusive) {
  if (exclusive) AsVar(v)->mu().unlock();
  else AsVar(v)->mu().unlock_shared();
}
int32_t VariableView(GR_Variable* v, GR_TensorView* view) {
  if (!AsVar(v)->initialized()) return 0;
  FillView(AsVar(v)->value(), view);
  return 1;
}
GR_Tensor* VariableValue(GR_Variable* v) {
  if (!AsVar(v)->initialized()) return nullptr;
  auto* t = new GR_Tensor();
  t->tensor = AsVar(v)->value();
  return t;
}
const char* VariableName(const GR_Variable* v) { return AsVar(v)->name().c_str(); }
int32_t VariableDtype(const GR_Variable* v) { return AsVar(v)->dtype(); }

int32_t CtxVariableAssign(GR_KernelContext* ctx, GR_Variable* v, GR_Tensor* value) {
  Var* var = AsVar(v);
  if (value == nullptr || value->tensor.dtype() != var->dtype())
    return CallError(ctx, errors::InvalidArgument("cannot assign a ",
                                                  value ? DataTypeString(value->tensor.dtype()) : std::string("null"),
                                                  " value to variable ", var->name(), " of dtype ",
                                                  DataTypeString(var->dtype())));
  var->value() = value->tensor;
  return GR_OK;
}

int32_t CtxVariablePrepareUpdate(GR_KernelContext* ctx, GR_Variable* v, GR_TensorView* view) {
  Var* var = AsVar(v);
  if (!var->initialized())
    return CallError(ctx, errors::FailedPrecondition("Attempting to use uninitialized value ", var->name()));
  Tensor& value = var->value();
  // Copy on write: a reader holding the old buffer keeps seeing the value it read.
  if (!value.RefCountIsOne() && value.NumElements() > 0) {
    Tensor copy;
    Status s = value.DeepCopy(ctx->call.item->allocator, &copy);
    if (!s.ok()) return CallError(ctx, s.WithContext("variable " + var->name()));
    value = std::move(copy);
  }
  FillView(value, view);
  return GR_OK;
}

int32_t CtxVariableAllocate(GR_KernelContext* ctx, GR_Variable* v, int32_t rank, const int64_t* dims,
                            GR_TensorView* view) {
  Var* var = AsVar(v);
  TensorShape shape;
  Tensor t;
  Status s = TensorShape::FromDims(dims, rank, &shape);
  if (s.ok()) s = Tensor::Allocate(ctx->call.item->allocator, var->dtype(), shape, &t);
  if (!s.ok()) return CallError(ctx, s.WithContext("variable " + var->name()));
  var->value() = std::move(t);
  if (view) FillView(var->value(), view);
  return GR_OK;
}

GR_Variable* CtxInputRef(GR_KernelContext* ctx, int32_t index) {
  const NodeItem& item = *ctx->call.item;
  if (index < 0 || index >= item.num_inputs || !item.has_ref_inputs ||
      item.ref_inputs[index] != NodeItem::RefInput::kRef) {
    SetCallError(ctx->call, errors::Internal("input ", index, " is not a ref input"));
    return nullptr;
  }
  return AsHandle(ctx->call.ref_inputs[index]);
}

int32_t CtxSetOutputRef(GR_KernelContext* ctx, int32_t index, GR_Variable* v) {
  if (!CheckOutputIndex(ctx, index)) return GR_INTERNAL;
  const NodeItem& item = *ctx->call.item;
  if (!item.has_ref_outputs || !item.output_is_ref[index])
    return CallError(ctx, errors::Internal("output ", index, " is not a ref output"));
  if (v == nullptr || AsVar(v)->dtype() != BaseType(item.output_types[index]))
    return CallError(ctx, errors::Internal("ref output ", index, " must be a ",
                                           DataTypeString(BaseType(item.output_types[index])), " variable"));
  ctx->call.ref_outputs[index] = AsVar(v);
  return GR_OK;
}

GR_Tensor* CtxInputTensor(GR_KernelContext* ctx, int32_t index) {
  const NodeItem& item = *ctx->call.item;
  if (index < 0 || index >= item.num_inputs ||
      (item.has_ref_inputs && item.ref_inputs[index] == NodeItem::RefInput::kRef))
    return nullptr;
  auto* t = new GR_Tensor();
  t->tensor = ctx->call.inputs[index];
  return t;
}

int32_t CtxSetOutputResourceHandle(GR_KernelContext* ctx, int32_t index, const char* container, const char* name,
                                   const char* type_name) {
  if (!CheckOutputIndex(ctx, index)) return GR_INTERNAL;
  if (ctx->call.item->output_types[index] != GR_RESOURCE)
    return CallError(ctx, errors::Internal("output ", index, " is not a resource"));
  Tensor t;
  Status s = Tensor::Allocate(ctx->call.item->allocator, GR_RESOURCE, TensorShape(), &t);
  if (!s.ok()) return CallError(ctx, s);
  GR_ResourceHandle& h = *t.data<GR_ResourceHandle>();
  h.container = InternString(container && *container ? container : ResourceMgr::kDefaultContainer);
  h.name = InternString(name ? name : "");
  h.type_name = InternString(type_name ? type_name : "");
  ctx->call.outputs[index] = std::move(t);
  return GR_OK;
}

const char* CtxStepContainer(const GR_KernelContext* ctx) { return StepContainerOf(ctx->call.step); }

int32_t CtxLookupResource(GR_KernelContext* ctx, const char* container, const char* name, const char* type_name,
                          GR_ResourceCreateFn create, void* arg, void (*destroy)(void*), GR_Resource** out) {
  Status s;
  ResourceMgr* rm = Resources(ctx, &s);
  if (rm == nullptr) return CallError(ctx, s);
  const std::string type = type_name ? type_name : "";
  if (type == kVariableTypeName)
    return CallError(ctx, errors::InvalidArgument("variables are reached with ctx_lookup_variable"));
  ResourceBase* r = nullptr;
  s = rm->LookupOrCreate(
      container ? container : "", name ? name : "", type,
      [&](ResourceBase** made) {
        GR_StatusSink sink;
        void* object = create(arg, &sink);
        if (object == nullptr)
          return sink.status.ok() ? errors::Internal("creating resource ", type, " ", name ? name : "", " failed")
                                  : sink.status;
        *made = new PluginResource(type, name ? name : "", object, destroy);
        return Status::OK();
      },
      create != nullptr, &r);
  if (s.code() == Code::kNotFound) return GR_NOT_FOUND;
  if (!s.ok()) return CallError(ctx, s);
  *out = reinterpret_cast<GR_Resource*>(static_cast<PluginResource*>(r));
  return GR_OK;
}
void* ResourceObject(GR_Resource* r) { return AsPluginResource(r)->object(); }
void ResourceRelease(GR_Resource* r) {
  if (r) AsPluginResource(r)->Unref();
}
int32_t CtxDeleteResource(GR_KernelContext* ctx, const char* container, const char* name, const char* type_name) {
  Status s;
  ResourceMgr* rm = Resources(ctx, &s);
  if (rm == nullptr) return CallError(ctx, s);
  s = rm->Delete(container ? container : "", name ? name : "", type_name ? type_name : "");
  if (s.code() == Code::kNotFound) return GR_NOT_FOUND;
  return s.ok() ? GR_OK : CallError(ctx, s);
}

}  // namespace

namespace {
int64_t CtxStepId(const GR_KernelContext* ctx) { return StepIdOf(ctx->call.step); }
int32_t CtxNumThreads(const GR_KernelContext* ctx) { return NumThreadsOf(ctx->call.step); }
void CtxAsyncDone(GR_KernelContext* ctx) { AsyncKernelDone(ctx); }
int32_t CtxCancelled(const GR_KernelContext* ctx) { return StepCancelled(ctx->call.step) ? 1 : 0; }
int32_t CtxOnCancel(GR_KernelContext* ctx, void (*fn)(void*), void* arg, int64_t* token) {
  if (fn == nullptr || token == nullptr) {
    SetCallError(ctx->call, errors::InvalidArgument("ctx_on_cancel: fn and token are required"));
    return GR_INVALID_ARGUMENT;
  }
  return StepOnCancel(ctx->call.step, fn, arg, token) ? GR_OK : GR_CANCELLED;
}
int32_t CtxRemoveOnCancel(GR_KernelContext* ctx, int64_t token) {
  return StepRemoveOnCancel(ctx->call.step, token) ? 1 : 0;
}
void CtxParallelFor(GR_KernelContext* ctx, int64_t total, int64_t cost_per_unit, GR_ParallelForFn fn, void* arg) {
  if (total <= 0) return;
  const int threads = NumThreadsOf(ctx->call.step);
  // Below ~20us of work a split costs more than it saves.
  const double work_ns = static_cast<double>(total) * static_cast<double>(std::max<int64_t>(cost_per_unit, 1));
  if (threads <= 1 || work_ns < 20000.0) {
    fn(arg, 0, total);
    return;
  }
  const int64_t chunks = std::min<int64_t>(static_cast<int64_t>(threads) * 4,
                                           std::max<int64_t>(1, static_cast<int64_t>(work_ns / 10000.0)));
  const int64_t grain = (total + chunks - 1) / chunks;
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, total, grain),
      [&](const tbb::blocked_range<int64_t>& r) { fn(arg, r.begin(), r.end()); }, tbb::simple_partitioner());
}
// --------------------------------------------------- graph pass services

int32_t PassSetOutput(GR_GraphPassContext* ctx, const char* graph_def, uint64_t size) {
  if (graph_def == nullptr && size > 0) {
    ctx->status = errors::InvalidArgument("pass_set_output: null graph with size ", size);
    return GR_INVALID_ARGUMENT;
  }
  ctx->output.assign(graph_def ? graph_def : "", size);
  ctx->has_output = true;
  return GR_OK;
}

void PassSetError(GR_GraphPassContext* ctx, int32_t code, const char* msg) {
  ctx->status = Status(static_cast<Code>(code == GR_OK ? GR_INTERNAL : code), msg ? msg : "");
}

const char* PassDeviceType(GR_GraphPassContext* ctx, const char* device) {
  if (device == nullptr) return nullptr;
  auto it = ctx->device_types.find(device);
  if (it == ctx->device_types.end()) it = ctx->device_types.emplace(device, ctx->services->device_type(device)).first;
  return it->second.empty() ? nullptr : it->second.c_str();
}

int32_t PassKernelAvailable(GR_GraphPassContext* ctx, const char* node_def, uint64_t size, const char* device) {
  proto::NodeDef def;
  if (node_def == nullptr || device == nullptr || size > static_cast<uint64_t>(INT32_MAX) ||
      !def.ParseFromArray(node_def, static_cast<int>(size)))
    return 0;
  const proto::OpDef* op = nullptr;
  if (!ctx->ops->LookUpOpDef(def.op(), &op).ok() || !AddDefaultsAndValidate(*op, &def).ok()) return 0;
  return ctx->services->kernel_available(def, device) ? 1 : 0;
}

int32_t PassOpDef(GR_GraphPassContext* ctx, const char* op, const char** data, uint64_t* size) {
  if (op == nullptr || data == nullptr || size == nullptr) return GR_INVALID_ARGUMENT;
  auto it = ctx->op_defs.find(op);
  if (it == ctx->op_defs.end()) {
    const proto::OpDef* def = nullptr;
    if (!ctx->ops->LookUpOpDef(op, &def).ok()) return GR_NOT_FOUND;
    it = ctx->op_defs.emplace(op, def->SerializeAsString()).first;
  }
  *data = it->second.data();
  *size = it->second.size();
  return GR_OK;
}

int32_t PassIsTarget(GR_GraphPassContext* ctx, const char* node) {
  return node != nullptr && ctx->targets->count(node) > 0 ? 1 : 0;
}

int32_t CtxCheckFileAccess(GR_KernelContext* ctx, const char* path, uint32_t access) {
  if (path == nullptr) {
    SetCallError(ctx->call, errors::InvalidArgument("ctx_check_file_access: the path is null"));
    return GR_INVALID_ARGUMENT;
  }
  const FileAccessPolicy* policy = FileAccessOf(ctx->call.step);
  if (policy == nullptr) return GR_OK;
  Status s = policy->Check(path, access);
  if (s.ok()) return GR_OK;
  const int32_t code = static_cast<int32_t>(s.code());
  SetCallError(ctx->call, std::move(s));
  return code;
}


}  // namespace

const GR_CoreApi* CoreApi() {
  static const GR_CoreApi api = [] {
    GR_CoreApi a;
    std::memset(&a, 0, sizeof(a));
    a.struct_size = sizeof(a);
    a.abi_major = GR_ABI_MAJOR;
    a.abi_minor = GR_ABI_MINOR;
    a.register_op = RegisterOp;
    a.register_kernel = RegisterKernel;
    a.register_device = RegisterDevice;
    a.registrar_set_error = RegistrarSetError;
    a.status_set = StatusSet;
    a.log = Log;
    a.attr_int = AttrInt;
    a.attr_float = AttrFloat;
    a.attr_bool = AttrBool;
    a.attr_type = AttrType;
    a.attr_string = AttrString;
    a.attr_shape = AttrShape;
    a.attr_int_list = AttrIntList;
    a.attr_float_list = AttrFloatList;
    a.attr_type_list = AttrTypeList;
    a.attr_list_size = AttrListSize;
    a.attr_string_list_item = AttrStringListItem;
    a.attr_tensor = AttrTensor;
    a.kc_attrs = KcAttrs;
    a.kc_node_name = KcNodeName;
    a.kc_op_name = KcOpName;
    a.kc_num_inputs = KcNumInputs;
    a.kc_num_outputs = KcNumOutputs;
    a.kc_input_type = KcInputType;
    a.kc_output_type = KcOutputType;
    a.kc_set_error = KcSetError;
    a.kc_device = KcDevice;
    a.ctx_num_inputs = CtxNumInputs;
    a.ctx_num_outputs = CtxNumOutputs;
    a.ctx_input = CtxInput;
    a.ctx_allocate_output = CtxAllocateOutput;
    a.ctx_forward_input_or_allocate_output = CtxForwardInputOrAllocateOutput;
    a.ctx_set_output_from_input = CtxSetOutputFromInput;
    a.ctx_set_output_tensor = CtxSetOutputTensor;
    a.ctx_set_error = CtxSetError;
    a.ctx_node_name = CtxNodeName;
    a.ctx_device = CtxDevice;
    a.ctx_stream = CtxStream;
    a.ctx_step_id = CtxStepId;
    a.ctx_parallel_for = CtxParallelFor;
    a.ctx_num_threads = CtxNumThreads;
    a.tensor_new = TensorNew;
    a.tensor_retain = TensorRetain;
    a.tensor_release = TensorRelease;
    a.tensor_view = TensorViewOf;
    a.string_assign = StringAssign;
    a.sc_attrs = ScAttrs;
    a.sc_num_inputs = ScNumInputs;
    a.sc_num_outputs = ScNumOutputs;
    a.sc_input_rank = ScInputRank;
    a.sc_input_dims = ScInputDims;
    a.sc_input_tensor = ScInputTensor;
    a.sc_set_output = ScSetOutput;
    a.sc_set_error = ScSetError;
    a.sc_node_name = ScNodeName;
    a.ctx_set_output_from_input_range = CtxSetOutputFromInputRange;
    a.ctx_forward_input = CtxForwardInput;
    a.ctx_lookup_variable = CtxLookupVariable;
    a.variable_retain = VariableRetain;
    a.variable_release = VariableRelease;
    a.variable_lock = VariableLock;
    a.variable_unlock = VariableUnlock;
    a.variable_view = VariableView;
    a.variable_value = VariableValue;
    a.variable_name = VariableName;
    a.variable_dtype = VariableDtype;
    a.ctx_variable_assign = CtxVariableAssign;
    a.ctx_variable_prepare_update = CtxVariablePrepareUpdate;
    a.ctx_variable_allocate = CtxVariableAllocate;
    a.ctx_input_ref = CtxInputRef;
    a.ctx_set_output_ref = CtxSetOutputRef;
    a.ctx_input_tensor = CtxInputTensor;
    a.ctx_set_output_resource_handle = CtxSetOutputResourceHandle;
    a.ctx_step_container = CtxStepContainer;
    a.ctx_lookup_resource = CtxLookupResource;
    a.resource_object = ResourceObject;
    a.resource_release = ResourceRelease;
    a.ctx_delete_resource = CtxDeleteResource;
    a.sc_graph_def_version = ScGraphDefVersion;
    a.attr_shape_list_item = AttrShapeListItem;
    a.ctx_async_done = CtxAsyncDone;
    a.ctx_cancelled = CtxCancelled;
    a.ctx_on_cancel = CtxOnCancel;
    a.ctx_remove_on_cancel = CtxRemoveOnCancel;
    a.register_graph_pass = RegisterGraphPass;
    a.pass_set_output = PassSetOutput;
    a.pass_set_error = PassSetError;
    a.pass_device_type = PassDeviceType;
    a.pass_kernel_available = PassKernelAvailable;
    a.pass_op_def = PassOpDef;
    a.pass_is_target = PassIsTarget;
    a.ctx_check_file_access = CtxCheckFileAccess;
    a.register_gradient = RegisterGradient;
    a.grad_attrs = GradAttrs;
    a.grad_num_inputs = GradNumInputs;
    a.grad_num_outputs = GradNumOutputs;
    a.grad_input_type = GradInputType;
    a.grad_output_type = GradOutputType;
    a.grad_input = GradInput;
    a.grad_output = GradOutput;
    a.grad_output_gradient = GradOutputGradient;
    a.grad_add_node = GradAddNode;
    a.grad_set_input_gradient = GradSetInputGradient;
    a.grad_set_error = GradSetError;
    return a;
  }();
  return &api;
}

}  // namespace graphrt
