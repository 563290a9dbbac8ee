// Op definitions of the string family (TensorFlow's signatures): StringJoin,
// Substr, RegexReplace, StaticRegexReplace, RegexFullMatch,
// StaticRegexFullMatch, StringToNumber, AsString.
// REGISTER_OP only; the kernels are in cpu/.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Inputs are scalars or of one shape; the output has that shape.
Status StringJoinShape(InferenceContext* c) {
  PartialShape out = PartialShape::Known({});
  bool all_scalar = true;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape in = c->input(i);
    if (in.known_rank() && in.rank == 0) continue;
    if (all_scalar) {
      out = in;
      all_scalar = false;
      continue;
    }
    Status s = sf::Merge(out, in, &out);
    if (!s.ok()) return errors::InvalidArgument("Input shapes do not match: ", s.message());
  }
  c->set_output(0, out);
  return Status();
}

Status SubstrShape(InferenceContext* c) {
  PartialShape pos_len;
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(1), c->input(2), &pos_len));
  PartialShape out;
  GR_RETURN_IF_ERROR_SDK(sf::BroadcastPartialShapes(c->input(0), pos_len, &out));
  c->set_output(0, out);
  return Status();
}

Status RegexReplaceShape(InferenceContext* c) {
  PartialShape unused;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 0, &unused));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 0, &unused));
  return sf::UnchangedShape(c);
}

REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int")
    .Attr("separator: string = ''")
    .SetShapeFn(StringJoinShape)
    .Doc("Joins the strings in the given list of string tensors into one tensor, elementwise.");

REGISTER_OP("Substr")
    .Input("input: string")
    .Input("pos: T")
    .Input("len: T")
    .Output("output: string")
    .Attr("T: {int32, int64}")
    .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
    .SetShapeFn(SubstrShape)
    .Doc("Returns substrings from a tensor of strings.");

REGISTER_OP("RegexReplace")
    .Input("input: string")
    .Input("pattern: string")
    .Input("rewrite: string")
    .Output("output: string")
    .Attr("replace_global: bool = true")
    .SetShapeFn(RegexReplaceShape)
    .Doc("Replaces matches of the pattern regular expression (RE2 syntax) in input with rewrite.");

REGISTER_OP("StaticRegexReplace")
    .Input("input: string")
    .Output("output: string")
    .Attr("pattern: string")
    .Attr("rewrite: string")
    .Attr("replace_global: bool = true")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Replaces the match of pattern (an attr, RE2 syntax) in input with rewrite.");

REGISTER_OP("RegexFullMatch")
    .Input("input: string")
    .Input("pattern: string")
    .Output("output: bool")
    .SetShapeFn([](InferenceContext* c) {
      PartialShape unused;
      GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 0, &unused));
      return sf::UnchangedShape(c);
    })
    .Doc("Whether each string of input matches pattern (RE2 syntax) as a whole.");

// TensorFlow 2's checkpoint functions use it (is the prefix a remote path?),
// so a TF2 SavedModel does not load without it.
REGISTER_OP("StaticRegexFullMatch")
    .Input("input: string")
    .Output("output: bool")
    .Attr("pattern: string")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Whether each string of input matches pattern (an attr, RE2 syntax) as a whole.");

REGISTER_OP("StringToNumber")
    .Input("string_tensor: string")
    .Output("output: out_type")
    .Attr("out_type: {float, double, int32, int64} = DT_FLOAT")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Converts each string in the input tensor to the specified numeric type.");

REGISTER_OP("AsString")
    .Input("input: T")
    .Output("output: string")
    .Attr("T: {int8, int16, int32, int64, complex64, complex128, float, double, bool}")
    .Attr("precision: int = -1")
    .Attr("scientific: bool = false")
    .Attr("shortest: bool = false")
    .Attr("width: int = -1")
    .Attr("fill: string = ''")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Converts each entry in the given tensor to strings.");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
